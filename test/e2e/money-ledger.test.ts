// The ledger through the servers: sandbox deals held, released and refunded with their postings (each balanced,
// written once however often the records step runs), the balance to the kopeck, pages and CSV, and in PostgreSQL a
// ledger that the service's role can only add to and that refuses an unbalanced posting.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDealActivities } from '../../activities/deals/records.ts';
import { loadSnapshot } from '../../src/deals/store.ts';
import { insertHeldDeal } from '../factories.ts';
import { expectBalanced, moneyClient } from '../money-helpers.ts';
import { json, ownerDb, startTestServer, type TestServer } from '../helpers.ts';

let server: TestServer;
let money: ReturnType<typeof moneyClient>;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  money = moneyClient(server);
});
afterAll(async () => {
  await server?.stop();
});

describe('the ledger', () => {
  it('posts a sandbox deal held and released: payment, the fee at close, the seller’s part to payable', async () => {
    const shop = await money.marketplace({ fee_schedule: { percent: 2.5, fixed: 10 } });
    const deal = await money.heldDeal(shop, { amount: 1234.56 });
    expect(await money.postingsOf(shop, deal.id)).toEqual([`payment: buyer -1234.56, deal_held:${deal.id} 1234.56`]);
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'RUB', held: 1234.56, payable: 0, paid_out: 0, refunded: 0, fees: 0 },
    ]);

    await deal.move('release');
    expect(await money.postingsOf(shop, deal.id)).toEqual([
      `payment: buyer -1234.56, deal_held:${deal.id} 1234.56`,
      `fee: deal_held:${deal.id} -40.86, marketplace_fee 40.86`,
      `payout: deal_held:${deal.id} -1193.70, seller_payable 1193.70`,
      // A sandbox deal without a seller is paid out to the sandbox's succeeding test card.
      'payout: seller_payable -1193.70, seller_paid_out 1193.70',
    ]);
    const { items } = await money.ledger(shop);
    expectBalanced(items);
    expect(items.every((posting) => posting.deal_id === deal.id && !Number.isNaN(Date.parse(posting.at)))).toBe(true);
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'RUB', held: 0, payable: 0, paid_out: 1193.7, refunded: 0, fees: 40.86 },
    ]);
    // Written exactly with two decimals, as docs/decisions/0011-money-in-minor-units.md says.
    expect(await (await fetch(money.api('/balance'), { headers: shop.key })).text()).toBe(
      '{"items":[{"currency":"RUB","held":0.00,"payable":0.00,"paid_out":1193.70,"refunded":0.00,"fees":40.86}]}',
    );
    expect(
      await (await fetch(money.api(`/ledger?deal_id=${deal.id}&limit=1`), { headers: shop.key })).text(),
    ).toContain(
      `"entries":[{"account":"seller_payable","amount":-1193.70,"currency":"RUB"},{"account":"seller_paid_out","amount":1193.70,"currency":"RUB"}]`,
    );
  });

  it('posts a deal held and refunded: the whole amount back to the buyer, no fee', async () => {
    const shop = await money.marketplace({ fee_schedule: { percent: 2.5 } });
    const deal = await money.heldDeal(shop, { amount: 500.1, fee: 100 });
    await deal.move('refund');
    expect(await money.postingsOf(shop, deal.id)).toEqual([
      `payment: buyer -500.10, deal_held:${deal.id} 500.10`,
      `refund: deal_held:${deal.id} -500.10, refunded 500.10`,
    ]);
    expectBalanced((await money.ledger(shop)).items);
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'RUB', held: 0, payable: 0, paid_out: 0, refunded: 500.1, fees: 0 },
    ]);
  });

  it('takes the fee at payment when the marketplace says so, and gives it back with a refund', async () => {
    const shop = await money.marketplace({ fee_schedule: { fixed: 99.99 }, fee_moment: 'payment' });
    const released = await money.heldDeal(shop, { amount: 1000 });
    const refunded = await money.heldDeal(shop, { amount: 300.01, currency: 'EUR' });
    expect(await money.postingsOf(shop, released.id)).toEqual([
      `payment: buyer -1000.00, deal_held:${released.id} 1000.00`,
      `fee: deal_held:${released.id} -99.99, marketplace_fee 99.99`,
    ]);
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'EUR', held: 200.02, payable: 0, paid_out: 0, refunded: 0, fees: 99.99 },
      { currency: 'RUB', held: 900.01, payable: 0, paid_out: 0, refunded: 0, fees: 99.99 },
    ]);
    await released.move('release');
    await refunded.move('refund');
    expect(await money.postingsOf(shop, refunded.id)).toEqual([
      `payment: buyer -300.01, deal_held:${refunded.id} 300.01`,
      `fee: deal_held:${refunded.id} -99.99, marketplace_fee 99.99`,
      `reversal: marketplace_fee -99.99, deal_held:${refunded.id} 99.99`,
      `refund: deal_held:${refunded.id} -300.01, refunded 300.01`,
    ]);
    expect((await money.postingsOf(shop, released.id)).slice(-2)).toEqual([
      `payout: deal_held:${released.id} -900.01, seller_payable 900.01`,
      'payout: seller_payable -900.01, seller_paid_out 900.01',
    ]);
    const all = (await money.ledger(shop)).items;
    expect(
      all.every((posting) =>
        posting.entries.every((entry) => entry.currency === (posting.deal_id === refunded.id ? 'EUR' : 'RUB')),
      ),
    ).toBe(true);
    expectBalanced(all);
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'EUR', held: 0, payable: 0, paid_out: 0, refunded: 300.01, fees: 0 },
      { currency: 'RUB', held: 0, payable: 0, paid_out: 900.01, refunded: 0, fees: 99.99 },
    ]);
  });

  it('pages newest first, filters, answers CSV, and refuses a cursor of another marketplace', async () => {
    const shop = await money.marketplace({ fee_schedule: { percent: 1 } });
    const first = await money.heldDeal(shop, { amount: 200 });
    await first.move('release');
    const second = await money.heldDeal(shop, { amount: 0.5 });
    const all = (await money.ledger(shop)).items;
    // Newest first: the second deal's payment, the first's payout sent, its release to payable, its fee, its payment.
    expect(all.map((posting) => posting.kind)).toEqual(['payment', 'payout', 'payout', 'fee', 'payment']);
    expect(all[0].deal_id).toBe(second.id);

    const page = await money.ledger(shop, { limit: '3' });
    expect(page).toMatchObject({ has_more: true });
    expect(page.items.map((posting) => posting.id)).toEqual(all.slice(0, 3).map((posting) => posting.id));
    const next = await money.ledger(shop, { limit: '3', starting_after: page.items[2].id });
    expect(next.items.map((posting) => posting.id)).toEqual(all.slice(3).map((posting) => posting.id));
    expect(next.has_more).toBe(false);
    expect((await money.ledger(shop, { deal_id: first.id })).items).toHaveLength(4);
    expect((await money.ledger(shop, { created_gte: new Date(Date.now() + 60_000).toISOString() })).items).toEqual([]);
    expect((await money.ledger(shop, { created_lte: new Date(Date.now() + 60_000).toISOString() })).items).toHaveLength(
      5,
    );
    // Another marketplace sees none of it, and may not page from it.
    const other = await money.marketplace();
    expect(await money.ledger(other, { deal_id: first.id })).toEqual({ items: [], has_more: false });
    expect((await money.balance(other)).items).toEqual([]);
    const foreign = await fetch(money.api(`/ledger?starting_after=${all[0].id}`), { headers: other.key });
    expect(foreign.status).toBe(400);
    expect((await json(foreign)).code).toBe('invalid_cursor');

    const csv = await fetch(money.api('/ledger?limit=3'), { headers: { ...shop.key, Accept: 'text/csv' } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text()).split('\r\n');
    expect(lines[0]).toBe('posting_id,at,deal_id,kind,account,amount,currency');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(1, -1)).toEqual(
      all
        .slice(0, 3)
        .flatMap((posting) =>
          posting.entries.map((entry) =>
            [
              posting.id,
              posting.at,
              posting.deal_id,
              posting.kind,
              entry.account,
              entry.amount.toFixed(2),
              entry.currency,
            ].join(','),
          ),
        ),
    );
    expect(lines[1]).toContain(',payment,buyer,-0.50,RUB');
    expect(csv.headers.get('link')).toBe(`</api/mkt/ledger?limit=3&starting_after=${all[2].id}>; rel="next"`);
    const last = await fetch(money.api(`/ledger?limit=3&starting_after=${all[2].id}`), {
      headers: { ...shop.key, Accept: 'text/csv' },
    });
    expect((await last.text()).split('\r\n')).toHaveLength(6);
    expect(last.headers.get('link')).toBeNull();
  });

  it('writes each posting once, however often the records step runs, and heals a posting a write lost', async () => {
    const { services } = server;
    const held = await insertHeldDeal(services, { holdExpiresAt: new Date(Date.now() + 86_400_000), amount: 777.77 });
    const activities = createDealActivities(services);
    const snapshot = (await loadSnapshot(services.db, held.dealId))!;
    const records = {
      documents: snapshot.documents,
      approvals: snapshot.approvals,
      payments: snapshot.payments,
      dispute: null,
      cancellation: null,
    };
    const causes = async () =>
      (
        await services.db.query('SELECT cause, kind FROM ledger_postings WHERE deal_id = $1 ORDER BY seq', [
          held.dealId,
        ])
      ).rows.map((row) => `${row.kind} ${row.cause}`);

    // The factory wrote a held payment without the ledger (as before the ledger existed): a re-assertion posts it.
    await activities.recordDealChange({ dealId: held.dealId, status: 'escrow_hold', records });
    await activities.recordDealChange({ dealId: held.dealId, status: 'escrow_hold', records });
    expect(await causes()).toEqual([`payment ${held.paymentId}/payment`]);

    // The release, recorded, and recorded again as a retried activity would.
    const released = {
      ...records,
      payments: [{ ...records.payments[0], status: 'released' as const, updated_at: new Date().toISOString() }],
    };
    const change = { dealId: held.dealId, status: 'paid' as const, records: released };
    await Promise.all([activities.recordDealChange(change), activities.recordDealChange(change)]);
    await activities.recordDealChange(change);
    expect(await causes()).toEqual([`payment ${held.paymentId}/payment`, `payout ${held.paymentId}/release`]);
    const entries = await services.db.query(
      `SELECT e.account, e.amount::text AS amount FROM ledger_entries e JOIN ledger_postings p ON p.id = e.posting_id WHERE p.deal_id = $1 ORDER BY p.seq, e.line`,
      [held.dealId],
    );
    expect(entries.rows).toEqual([
      { account: 'buyer', amount: '-777.77' },
      { account: `deal_held:${held.dealId}`, amount: '777.77' },
      { account: `deal_held:${held.dealId}`, amount: '-777.77' },
      { account: 'seller_payable', amount: '777.77' },
    ]);
  });
});

describe('the ledger in PostgreSQL', () => {
  /** A posting of a factory deal of its own marketplace, with these entries, written as the service's role. */
  async function writePosting(entries: [account: string, amount: string][], currency = 'RUB') {
    const { db } = server.services;
    const held = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      const id = randomUUID();
      await client.query(
        `INSERT INTO ledger_postings (id, marketplace_id, deal_id, kind, cause) VALUES ($1, $2, $3, 'payment', 'test')`,
        [id, held.marketplaceId, held.dealId],
      );
      for (const [index, [account, amount]] of entries.entries()) {
        await client.query(
          'INSERT INTO ledger_entries (posting_id, line, account, amount, currency) VALUES ($1, $2, $3, $4, $5)',
          [id, index + 1, account, amount, currency],
        );
      }
      await client.query('COMMIT');
      return id;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  const refusal = async (work: () => Promise<unknown>) => {
    try {
      await work();
      return undefined;
    } catch (error) {
      return (error as { code?: string }).code ?? String(error);
    }
  };

  it('refuses an unbalanced posting, and one of a single entry, at commit', async () => {
    expect(
      await refusal(() =>
        writePosting([
          ['buyer', '-10.00'],
          ['refunded', '9.99'],
        ]),
      ),
    ).toBe('23514');
    expect(await refusal(() => writePosting([['buyer', '-10.00']]))).toBe('23514');
    expect(await refusal(() => writePosting([]))).toBe('23514');
    expect(
      await refusal(() =>
        writePosting([
          ['buyer', '0'],
          ['refunded', '0'],
        ]),
      ),
    ).toBe('23514');
    const id = await writePosting([
      ['buyer', '-10.00'],
      ['refunded', '10.00'],
    ]);
    expect(
      (await server.services.db.query('SELECT count(*)::int AS n FROM ledger_entries WHERE posting_id = $1', [id]))
        .rows[0].n,
    ).toBe(2);
    // Entries added later to a written posting must balance too.
    expect(
      await refusal(() =>
        server.services.db.query(
          `INSERT INTO ledger_entries (posting_id, line, account, amount, currency) VALUES ($1, 3, 'buyer', 1, 'RUB')`,
          [id],
        ),
      ),
    ).toBe('23514');
  });

  it('lets the service only add to it and read it; not even the owner changes it', async () => {
    const { db } = server.services;
    const id = await writePosting([
      ['buyer', '-1.00'],
      ['refunded', '1.00'],
    ]);
    expect(
      await refusal(() => db.query(`UPDATE ledger_entries SET amount = -amount WHERE posting_id = $1`, [id])),
    ).toBe('42501');
    expect(await refusal(() => db.query(`UPDATE ledger_postings SET kind = 'refund' WHERE id = $1`, [id]))).toBe(
      '42501',
    );
    expect(await refusal(() => db.query('DELETE FROM ledger_entries WHERE posting_id = $1', [id]))).toBe('42501');
    expect(await refusal(() => db.query('DELETE FROM ledger_postings WHERE id = $1', [id]))).toBe('42501');
    expect(await refusal(() => db.query('TRUNCATE ledger_entries'))).toBe('42501');
    expect(await refusal(() => db.query('ALTER TABLE ledger_entries DISABLE TRIGGER ALL'))).toBe('42501');
    const owner = ownerDb();
    try {
      await expect(
        owner.query(`UPDATE ledger_entries SET amount = -amount WHERE posting_id = $1`, [id]),
      ).rejects.toThrow(/append-only/);
      await expect(owner.query('DELETE FROM ledger_postings WHERE id = $1', [id])).rejects.toThrow(/append-only/);
      await expect(owner.query('TRUNCATE ledger_entries, ledger_postings')).rejects.toThrow(/append-only/);
    } finally {
      await owner.end();
    }
    expect(
      (await db.query('SELECT amount::text AS amount FROM ledger_entries WHERE posting_id = $1 ORDER BY line', [id]))
        .rows,
    ).toEqual([{ amount: '-1.00' }, { amount: '1.00' }]);
  });
});

describe('the OpenAPI document', () => {
  it('documents the ledger and the balance, with the ledger’s CSV', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    const list = document.paths['/api/mkt/ledger'].get;
    expect(Object.keys(list.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
    expect(list.parameters.map((parameter: { name: string }) => parameter.name)).toEqual([
      'deal_id',
      'created_gte',
      'created_lte',
      'limit',
      'starting_after',
    ]);
    const posting = list.responses['200'].content['application/json'].schema.properties.items.items;
    expect(posting.properties.kind.enum).toEqual(['payment', 'fee', 'payout', 'refund', 'acquirer_fee', 'reversal']);
    expect(
      Object.keys(
        document.paths['/api/mkt/balance'].get.responses['200'].content['application/json'].schema.properties.items
          .items.properties,
      ),
    ).toEqual(['currency', 'held', 'payable', 'paid_out', 'refunded', 'fees']);
  });
});
