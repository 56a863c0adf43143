// The deal notices' outbox (src/deals/notice-outbox.ts) over the test PostgreSQL: a change's notices are rows written
// with it, and a drainer mails them afterwards; a claim a dead drainer left lapses and the notice is sent by another;
// a claim still held is left to its holder; a notice is mailed once however often it is written or drained. Other test
// files' workers drain the same table meanwhile, as other instances would: whichever drainer sends, it is sent once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueNotices, startNoticeDrainer, type NoticeDrainer } from '../../src/deals/notice-outbox.ts';
import { insertHeldDeal, type HeldDeal } from '../factories.ts';
import { startTestServer, type TestServer } from '../helpers.ts';

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
});
