// The deal notices' outbox (src/deals/notice-outbox.ts) over the test PostgreSQL: a change's notices are rows written
// with it, and a drainer mails them afterwards; a claim a dead drainer left lapses and the notice is sent by another;
// a claim still held is left to its holder; a notice is mailed once however often it is written or drained. Other test
// files' workers drain the same table meanwhile, as other instances would: whichever drainer sends, it is sent once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueNotices, MAX_ATTEMPTS, startNoticeDrainer, type NoticeDrainer } from '../../src/deals/notice-outbox.ts';
import { createDealNotifier, type DealNotice } from '../../src/deals/notifications.ts';
import { Mailer } from '../../src/mail/outbox.ts';
import { decideWidgetMail, WIDGET_MAIL_LIMIT } from '../../src/widget/mail-limits.ts';
import { insertHeldDeal, type HeldDeal } from '../factories.ts';
import { startTestServer, uniqueId, type TestServer } from '../helpers.ts';

let server: TestServer;
let drainer: NoticeDrainer;

beforeAll(async () => {
  // No worker: its own drainer would send the notices before the test looks.
  server = await startTestServer();
  drainer = startNoticeDrainer(server.services);
  await drainer.stop(); // its loop; drain() is called by the tests
});
afterAll(async () => {
  await server?.stop();
});

const noticeOf = (deal: HeldDeal) => ({
  dealId: deal.dealId,
  eventId: randomUUID(),
  status: 'escrow_hold' as const,
  actor: 'buyer' as const,
});
const rows = async (id: string) =>
  (await server.services.db.query('SELECT attempts, claimed_until FROM deal_notices WHERE id = $1', [id])).rows;
/** Notices as changes write them one after another: in one statement, so one drainer claims them together. */
const write = (notices: DealNotice[]) =>
  server.services.db.query(
    `INSERT INTO deal_notices (id, deal_id, notice, created_at)
     SELECT (n->>'eventId')::uuid, (n->>'dealId')::uuid, n, now() + i * interval '1 millisecond'
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(n, i)`,
    [JSON.stringify(notices)],
  );
const drained = (notices: DealNotice[]) =>
  expect
    .poll(
      async () =>
        (
          await server.services.db.query('SELECT id FROM deal_notices WHERE id = ANY($1::uuid[])', [
            notices.map((notice) => notice.eventId),
          ])
        ).rows,
    )
    .toEqual([]);
/** The keys of the mails to this address, in the order they were queued. */
const keysTo = async (email: string) =>
  (
    await server.services.db.query(
      'SELECT idempotency_key FROM mail_outbox WHERE lower(recipient) = lower($1) ORDER BY created_at, id',
      [email],
    )
  ).rows.map((row) => row.idempotency_key as string);
const key = (notice: DealNotice, role: 'buyer' | 'seller' | 'approver') => `deal-event/${notice.eventId}/${role}`;
const change = (deal: HeldDeal, status: DealNotice['status'], rest: Partial<DealNotice> = {}): DealNotice => ({
  dealId: deal.dealId,
  eventId: randomUUID(),
  status,
  ...rest,
});
/** The server's services with the statements they send counted, their mailer's too. */
function counted() {
  const statements: string[] = [];
  const db = new Proxy(server.services.db, {
    get: (target, property, receiver) =>
      property === 'query'
        ? (text: string, values?: unknown[]) => {
            statements.push(text);
            return target.query(text, values);
          }
        : Reflect.get(target, property, receiver),
  });
  const mailer = new Mailer(db, undefined, server.services.config.MAIL_FROM);
  return { services: { ...server.services, db, mailer }, statements };
}
const mailsTo = async (email: string) =>
  (await server.services.db.query('SELECT subject FROM mail_outbox WHERE recipient = $1', [email])).rows.map(
    (row) => row.subject as string,
  );

describe('the deal notices’ outbox', () => {
  it('keeps a notice until a drainer mails it, once however often it is written', async () => {
    const deal = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    const notice = noticeOf(deal);
    await enqueueNotices(server.services.db, [notice, notice]);
    await enqueueNotices(server.services.db, [notice]);
    await drainer.drain();
    await expect.poll(() => rows(notice.eventId)).toEqual([]);
    const mails = await mailsTo(deal.buyerEmail);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatch(/money held|зарезервированы/);

    // Written again (a retried change): mailed again under the same key, so nothing new.
    await enqueueNotices(server.services.db, [notice]);
    await drainer.drain();
    await expect.poll(() => rows(notice.eventId)).toEqual([]);
    expect(await mailsTo(deal.buyerEmail)).toHaveLength(1);
  });

  it('sends a notice whose drainer died after claiming it, once the claim lapsed, and leaves a live claim alone', async () => {
    const deal = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    const lapsed = noticeOf(deal);
    const held = noticeOf(deal);
    // Written as claimed already: by a drainer that died (its claim over), and by one still at work.
    const claimed = (notice: typeof lapsed, until: string) =>
      server.services.db.query(
        `INSERT INTO deal_notices (id, deal_id, notice, attempts, claimed_until) VALUES ($1, $2, $3, 1, now() + $4::interval)`,
        [notice.eventId, notice.dealId, JSON.stringify(notice), until],
      );
    await claimed(lapsed, '-1 second');
    await claimed(held, '1 minute');

    await drainer.drain();
    await expect.poll(() => rows(lapsed.eventId)).toEqual([]);
    expect(await mailsTo(deal.buyerEmail)).toHaveLength(1);
    expect(await rows(held.eventId)).toEqual([expect.objectContaining({ attempts: 1 })]);
    await server.services.db.query('DELETE FROM deal_notices WHERE id = $1', [held.eventId]);
  });

  it('mails a batch of several deals and people, each person’s mails in the order the changes happened', async () => {
    const sofa = await insertHeldDeal(server.services, { seller: true, title: 'Sofa' });
    const lamp = await insertHeldDeal(server.services, { seller: true, title: 'Lamp' });
    // The sofa's buyer sells the lamp.
    await server.services.db.query('UPDATE deals SET seller_email = $2 WHERE id = $1', [
      lamp.dealId,
      sofa.buyerEmail.toUpperCase(),
    ]);
    const notices = [
      change(sofa, 'escrow_hold'),
      change(lamp, 'escrow_hold'),
      change(sofa, 'docs'),
      change(sofa, 'paid', { actor: 'buyer' }),
      change(lamp, 'cancelled', { actor: 'marketplace', reason: 'Sold out' }),
    ];
    await write(notices);
    await drainer.drain();
    await drained(notices);

    const [sofaHeld, lampHeld, , sofaPaid, lampCancelled] = notices;
    expect(await keysTo(sofa.buyerEmail)).toEqual([
      key(sofaHeld, 'buyer'),
      key(lampHeld, 'seller'),
      key(sofaPaid, 'buyer'),
      key(lampCancelled, 'seller'),
    ]);
    expect(await keysTo(sofa.sellerEmail)).toEqual([key(sofaHeld, 'seller'), key(sofaPaid, 'seller')]);
    expect(await keysTo(lamp.buyerEmail)).toEqual([key(lampHeld, 'buyer'), key(lampCancelled, 'buyer')]);
    expect(await keysTo(lamp.sellerEmail)).toEqual([]);
    // Each to the address as its deal names it, about its own deal.
    expect(await mailsTo(sofa.buyerEmail.toUpperCase())).toEqual([
      expect.stringContaining('«Lamp»'),
      expect.stringContaining('«Lamp»'),
    ]);
    expect(await mailsTo(sofa.buyerEmail)).toEqual([
      expect.stringContaining('«Sofa»'),
      expect.stringContaining('«Sofa»'),
    ]);
  });

  it('reads what a batch’s mails need in one statement and writes them all in another', async () => {
    const deals = await Promise.all([1, 2, 3].map(() => insertHeldDeal(server.services, { seller: true })));
    const { services, statements } = counted();
    const { notifyDealChanges } = createDealNotifier(services);
    const notices = [
      ...deals.map((deal) => change(deal, 'escrow_hold')),
      change(deals[0], 'paid', { actor: 'arbiter', reason: 'Delivered' }),
      change(deals[1], 'docs'),
    ];
    expect(await notifyDealChanges(notices)).toEqual([2, 2, 2, 2, 0].map((value) => ({ status: 'fulfilled', value })));
    expect(statements).toHaveLength(2);
    expect(statements[1]).toContain('INSERT INTO mail_outbox');
    expect(await keysTo(deals[0].sellerEmail)).toEqual([key(notices[0], 'seller'), key(notices[3], 'seller')]);
    expect(await keysTo(deals[2].buyerEmail)).toEqual([key(notices[2], 'buyer')]);
  });

  it('fails only a notice whose mail cannot be made, tries it again, and drops it after MAX_ATTEMPTS', async () => {
    const deal = await insertHeldDeal(server.services, { seller: true });
    const other = await insertHeldDeal(server.services);
    const good = change(deal, 'escrow_hold');
    const bad = change(deal, 'escrow_hold', {
      event: 'inspection_reminder',
      data: { inspection_ends_at: 'not a date' },
    });
    const later = change(other, 'escrow_hold');
    await write([good, bad, later]);
    await drainer.drain();
    await drained([good, later]);
    expect(await keysTo(deal.buyerEmail)).toEqual([key(good, 'buyer')]);
    expect(await keysTo(deal.sellerEmail)).toEqual([key(good, 'seller')]);
    expect(await keysTo(other.buyerEmail)).toEqual([key(later, 'buyer')]);
    expect(await rows(bad.eventId)).toEqual([{ attempts: 1, claimed_until: expect.any(Date) }]);

    // Its claim lapsed: tried again, and kept again.
    const lapse = (attempts: number) =>
      server.services.db.query(
        `UPDATE deal_notices SET attempts = $2, claimed_until = now() - interval '1 second' WHERE id = $1`,
        [bad.eventId, attempts],
      );
    await lapse(1);
    await drainer.drain();
    await expect.poll(() => rows(bad.eventId)).toEqual([{ attempts: 2, claimed_until: expect.any(Date) }]);
    // Its last attempt fails too: dropped, and nothing was mailed for it.
    await lapse(MAX_ATTEMPTS - 1);
    await drainer.drain();
    await drained([bad]);
    expect(await keysTo(deal.buyerEmail)).toEqual([key(good, 'buyer')]);
  });

  it('keeps a widget deal’s first mails within the widget’s limit, beside a deal its marketplace’s server made', async () => {
    const widget = await insertHeldDeal(server.services, { seller: true });
    const made = await insertHeldDeal(server.services, { seller: true });
    const people = [widget, made].flatMap((deal) => [deal.buyerEmail, deal.sellerEmail]);
    await server.services.db.query(`UPDATE users SET password_hash = 'hash' WHERE lower(email) = ANY($1::text[])`, [
      people,
    ]);
    // The widget's buyer had this hour's mails from the marketplace already; its seller had none.
    for (let n = 0; n < WIDGET_MAIL_LIMIT.perRecipient; n++) {
      await decideWidgetMail(
        server.services.db,
        { marketplaceId: widget.marketplaceId, externalId: uniqueId('order') },
        'created',
        [widget.buyerEmail],
      );
    }
    const decided = await decideWidgetMail(
      server.services.db,
      { marketplaceId: widget.marketplaceId, externalId: widget.externalId },
      'created',
      [widget.buyerEmail, widget.sellerEmail],
    );
    expect([...decided.values()]).toEqual([false, true]);

    // Both deals' approvals ask their buyers (insertHeldDeal's approver).
    const notices = [
      change(widget, 'created'),
      change(made, 'created'),
      change(widget, 'approval'),
      change(made, 'approval'),
    ];
    await write(notices);
    await drainer.drain();
    await drained(notices);
    expect(await keysTo(widget.buyerEmail)).toEqual([]);
    expect(await keysTo(widget.sellerEmail)).toEqual([key(notices[0], 'seller')]);
    expect(await keysTo(made.buyerEmail)).toEqual([key(notices[1], 'buyer'), key(notices[3], 'approver')]);
    expect(await keysTo(made.sellerEmail)).toEqual([key(notices[1], 'seller')]);
    // The approval's slot was decided (and refused) once, for the widget deal only.
    const slots = await server.services.db.query(
      `SELECT external_id, allowed FROM widget_deal_mail WHERE external_id = ANY($1::text[]) AND kind = 'approval'`,
      [[widget.externalId, made.externalId]],
    );
    expect(slots.rows).toEqual([{ external_id: widget.externalId, allowed: false }]);
  });

  it('ends a pass with a batch short of the limit, without another claim that would find nothing', async () => {
    const { services, statements } = counted();
    const counting = startNoticeDrainer(services);
    await counting.stop();
    const deal = await insertHeldDeal(server.services);
    const notice = noticeOf(deal);
    await write([notice]);
    await counting.drain();
    await drained([notice]);
    // Its claim, and (unless another drainer claimed the notice first) the batch's read, write and delete.
    expect(statements.filter((text) => text.includes('UPDATE deal_notices SET claimed_until'))).toHaveLength(1);
    expect(statements.length === 1 || statements.length === 4).toBe(true);
  });
});
