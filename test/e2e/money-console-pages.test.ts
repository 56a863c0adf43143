// The console's money pages over HTTP: the ledger across marketplaces (filters, balances, postings with exact amounts),
// the reconciliation (runs, findings, "run now" behind a confirmation: the admin role's, audited, its failure in
// words), a deal's postings for the deal page, and the Money section in the console's header, in English and Russian.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db.ts';
import { freePort } from '../../src/dev/ports.ts';
import { beginRun, finishRun, recordFindings } from '../../src/money/reconciliation.ts';
import { dealPostingsSection } from '../../src/money/console-pages.ts';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { json, startTestServer, uniqueEmail, uniqueId, type TestServer, UUID_SOURCE } from '../helpers.ts';

let server: TestServer;
let admin: TestAdministrator;
let support: TestAdministrator;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  [admin, support] = [await administrator(server, 'admin'), await administrator(server, 'support')];
});
afterAll(async () => {
  await server?.stop();
});

const page = (path: string, who: TestAdministrator = admin, on: TestServer = server) =>
  fetch(`${on.url}${path}`, { headers: { Cookie: who.cookie }, redirect: 'manual' });
const form = (path: string, fields: Record<string, string>, who: TestAdministrator = admin, on: TestServer = server) =>
  fetch(`${on.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { Cookie: who.cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: who.csrf, ...fields }),
  });
/** Runs this file's administrators started: other files start runs in the same database at the same time. */
const runCount = async () =>
  Number(
    (
      await server.services.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM reconciliation_runs
          WHERE started_by LIKE '%' || $1 || '%' OR started_by LIKE '%' || $2 || '%'`,
        [admin.email, support.email],
      )
    ).rows[0].n,
  );
/** The ids of the postings a page lists, in its order. */
const postingIds = (text: string) =>
  [...text.matchAll(new RegExp(`data-posting="(${UUID_SOURCE})"`, 'g'))].map((match) => match[1]);

/** A marketplace of its own with one deal and its postings, oldest first (`held` is the deal's held account). */
async function seedLedger(
  postings: [string, string][][],
  currency = 'RUB',
): Promise<{ marketplaceId: string; name: string; dealId: string; postingIds: string[] }> {
  const name = uniqueId('Ledger shop');
  const dealId = randomUUID();
  const ids: string[] = [];
  const marketplaceId = await inTransaction(server.services.db, async (client) => {
    const made = (
      await client.query<{ id: string }>(`INSERT INTO marketplaces (name, mode) VALUES ($1, 'sandbox') RETURNING id`, [
        name,
      ])
    ).rows[0].id;
    await client.query(
      `INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, amount, currency, status) VALUES ($1, $2, $3, 'Sofa', $4, 1, $5, 'escrow_hold')`,
      [dealId, made, uniqueId('order'), uniqueEmail('buyer'), currency],
    );
    for (const [index, entries] of postings.entries()) {
      const posting = await client.query<{ id: string }>(
        `INSERT INTO ledger_postings (marketplace_id, deal_id, kind, cause) VALUES ($1, $2, $3, $4) RETURNING id`,
        [made, dealId, index === 0 ? 'payment' : 'payout', `seeded/${index}`],
      );
      ids.push(posting.rows[0].id);
      for (const [line, [account, amount]] of entries.entries()) {
        await client.query(
          `INSERT INTO ledger_entries (posting_id, line, account, amount, currency) VALUES ($1, $2, $3, $4, $5)`,
          [posting.rows[0].id, line + 1, account === 'held' ? `deal_held:${dealId}` : account, amount, currency],
        );
      }
    }
    return made;
  });
  return { marketplaceId, name, dealId, postingIds: ids };
}

const HELD_AND_RELEASED: [string, string][][] = [
  [
    ['buyer', '-1234567.89'],
    ['held', '1234567.89'],
  ],
  [
    ['held', '-1234567.89'],
    ['seller_payable', '1234567.89'],
  ],
];

describe('the ledger page', () => {
  it('shows a marketplace’s postings newest first with exact amounts, and its balances, in English and Russian', async () => {
    const shop = await seedLedger(HELD_AND_RELEASED);
    const english = await page(`/admin/view/ledger?marketplace_id=${shop.marketplaceId}&lang=en`);
    expect(english.status).toBe(200);
    const text = await english.text();
    expect(text).toContain('<h1>Ledger</h1>');
    expect(postingIds(text)).toEqual([...shop.postingIds].reverse());
    expect(text).toContain('held for the deal');
    expect(text).toContain('payable to the seller');
    expect(text).toContain(`title="deal_held:${shop.dealId}"`);
    expect(text).toContain('data-amount="-1234567.89"');
    expect(text).toMatch(/RUB\s1,234,567\.89/u);
    // One balance row: nothing held any more, all of it payable.
    const balances = text.slice(
      text.indexOf('id="balances-table"'),
      text.indexOf('</table>', text.indexOf('id="balances-table"')),
    );
    expect(balances).toContain(`data-marketplace="${shop.marketplaceId}" data-currency="RUB"`);
    expect(balances).toMatch(/data-part="held">RUB\s0\.00</u);
    expect(balances).toMatch(/data-part="payable">RUB\s1,234,567\.89</u);
    expect(balances).toContain(shop.name);

    const russian = await (await page(`/admin/view/ledger?marketplace_id=${shop.marketplaceId}&lang=ru`)).text();
    expect(russian).toContain('<h1>Журнал проводок</h1>');
    expect(russian).toContain('К выплате продавцам');
    expect(russian).toContain('удержано по сделке');
    expect(russian).toMatch(/1\s234\s567,89\s₽/u);
  });

  it('filters by deal, pages with the cursor, and says which filter is wrong', async () => {
    const shop = await seedLedger(HELD_AND_RELEASED);
    const other = await seedLedger(
      [
        [
          ['buyer', '-5.00'],
          ['held', '5.00'],
        ],
      ],
      'EUR',
    );
    const byDeal = await (await page(`/admin/view/ledger?deal_id=${shop.dealId}&lang=en`)).text();
    expect(postingIds(byDeal)).toEqual([...shop.postingIds].reverse());
    const everyone = await (await page('/admin/view/ledger?lang=en')).text();
    expect(postingIds(everyone)).toEqual(expect.arrayContaining([other.postingIds[0], shop.postingIds[1]]));
    // The page after the newest posting of the deal holds the older one.
    const older = await (
      await page(`/admin/view/ledger?deal_id=${shop.dealId}&starting_after=${shop.postingIds[1]}&lang=en`)
    ).text();
    expect(postingIds(older)).toEqual([shop.postingIds[0]]);

    for (const [query, words] of [
      ['deal_id=nope', 'Check these filters: Deal id.'],
      ['marketplace_id=1&deal_id=2', 'Check these filters: Marketplace, Deal id.'],
      [`starting_after=${randomUUID()}`, 'Check these filters: Older postings.'],
    ]) {
      const refused = await page(`/admin/view/ledger?${query}&lang=en`);
      expect(refused.status, query).toBe(400);
      expect(await refused.text()).toContain(words);
    }
    expect(await (await page('/admin/view/ledger?deal_id=nope&lang=ru')).text()).toContain(
      'Проверьте фильтры: Id сделки.',
    );
  });

  it('is read by every role, and is in the console’s header as Money', async () => {
    const read = await page('/admin/view/ledger?lang=en', support);
    expect(read.status).toBe(200);
    const text = await read.text();
    expect(text).toMatch(/<nav class="sections"[^>]*>.*<a href="\/admin\/view\/ledger">Money<\/a>/s);
    expect(await (await page('/admin/view/ledger?lang=ru', support)).text()).toContain(
      '<a href="/admin/view/ledger">Деньги</a>',
    );
    // Signed out: to the sign-in.
    const anonymous = await fetch(`${server.url}/admin/view/ledger`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toContain('/admin/sign-in');
  });
});

describe("a deal's postings on its page", () => {
  it('renders the deal’s postings oldest first, with a link to the ledger, in both languages', async () => {
    const shop = await seedLedger(HELD_AND_RELEASED);
    const english = (await dealPostingsSection(server.services, shop.dealId, 'en')).value;
    expect(english).toContain('<h2 id="ledger-postings">Ledger</h2>');
    expect(postingIds(english)).toEqual(shop.postingIds);
    expect(english).toContain('paid and held');
    expect(english).toMatch(/RUB\s1,234,567\.89/u);
    expect(english).toContain(`href="/admin/view/ledger?deal_id=${shop.dealId}"`);
    const russian = (await dealPostingsSection(server.services, shop.dealId, 'ru')).value;
    expect(russian).toContain('<h2 id="ledger-postings">Проводки</h2>');
    expect(russian).toContain('оплачено и удержано');
    expect((await dealPostingsSection(server.services, randomUUID(), 'en')).value).toContain(
      'No money of this deal has moved yet.',
    );
    expect((await dealPostingsSection(server.services, 'not-a-deal', 'ru')).value).toContain(
      'Деньги по этой сделке ещё не двигались.',
    );
  });
});

describe('the reconciliation page', () => {
  /** A finished run with a balance mismatch and an unanswered payout check, as a run keeps them. */
  async function seedRun() {
    const shop = await seedLedger([
      [
        ['buyer', '-950.00'],
        ['held', '950.00'],
      ],
    ]);
    const runId = randomUUID();
    await beginRun(server.services.db, {
      runId,
      trigger: 'schedule',
      workflowId: `money-reconciliation-test/${runId}`,
    });
    const deal = { dealId: shop.dealId, marketplaceId: shop.marketplaceId };
    await recordFindings(server.services.db, runId, [
      {
        deal,
        findings: [
          {
            kind: 'deal_balance',
            ref: 'dl-seeded',
            currency: 'RUB',
            ours: '1950.00',
            theirs: '1900.00',
            status: 'mismatch',
            detail: 'The ledger says …',
          },
          {
            kind: 'payout_status',
            ref: randomUUID(),
            currency: null,
            ours: 'pending',
            theirs: null,
            status: 'error',
            detail: 'The acquirer did not answer: timeout',
          },
        ],
      },
    ]);
    await finishRun(server.services.db, { runId, dealsChecked: 1, checks: 2 });
    return { runId, dealId: shop.dealId };
  }

  it('shows the last runs and what they found, filtered, in English and Russian', async () => {
    const { runId, dealId } = await seedRun();
    const english = await page(`/admin/view/reconciliation?run_id=${runId}&lang=en`);
    expect(english.status).toBe(200);
    const text = await english.text();
    expect(text).toContain('<h1>Reconciliation with the acquirer</h1>');
    expect(text).toContain(`data-run="${runId}"`);
    expect(text).toContain('the daily schedule');
    expect(text).toContain('Findings of the run of');
    expect(text).toContain('balance of the safe deal');
    expect(text).toMatch(/RUB\s1,950\.00/u);
    expect(text).toMatch(/RUB\s1,900\.00/u);
    expect(text).toContain('payout status');
    expect(text).toContain('The acquirer did not answer: timeout');
    expect([...text.matchAll(new RegExp(`data-deal="(${UUID_SOURCE})"`, 'g'))].map((match) => match[1])).toEqual([
      dealId,
      dealId,
    ]);

    const errors = await (await page(`/admin/view/reconciliation?run_id=${runId}&status=error&lang=en`)).text();
    expect([...errors.matchAll(/data-kind="(\w+)"/g)].map((match) => match[1])).toEqual(['payout_status']);

    const russian = await (await page(`/admin/view/reconciliation?run_id=${runId}&lang=ru`)).text();
    expect(russian).toContain('<h1>Сверка с эквайером</h1>');
    expect(russian).toContain('ежедневное расписание');
    expect(russian).toContain('остаток безопасной сделки');
    expect(russian).toContain('расхождение');
    expect(russian).toMatch(/1\s950,00\s₽/u);
  });

  it('lets an administrator run it now after a confirmation, audited, and tells them it started', async () => {
    const before = await runCount();
    const shown = await (await page('/admin/view/reconciliation?lang=en')).text();
    expect(shown).toContain('<form method="post" action="/admin/view/reconciliation/runs" id="run-now">');

    const confirm = await form('/admin/view/reconciliation/runs?lang=en', {});
    expect(confirm.status).toBe(200);
    const confirmText = await confirm.text();
    expect(confirmText).toContain('Reconcile with the acquirer now?');
    expect(confirmText).toContain('<input type="hidden" name="confirmed" value="yes">');
    expect(await runCount()).toBe(before);

    const started = await form('/admin/view/reconciliation/runs', { confirmed: 'yes' });
    expect(started.status).toBe(303);
    expect(started.headers.get('location')).toBe('/admin/view/reconciliation?done=started');
    expect(await runCount()).toBe(before + 1);
    const notice = await (await page('/admin/view/reconciliation?done=started&lang=ru')).text();
    expect(notice).toContain('Сверка запущена.');
    const audit = await json(
      await fetch(`${server.url}/admin/audit?action=runReconciliation&actor=${encodeURIComponent(admin.email)}`, {
        headers: { Authorization: `Bearer ${server.adminToken}` },
      }),
    );
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({
      object_type: 'reconciliation',
      after: { trigger: 'manual', started_by: admin.email },
    });
    // The run goes through the worker to its end.
    const runId = audit.items[0].object_id;
    await expect
      .poll(
        async () =>
          (await server.services.db.query('SELECT status FROM reconciliation_runs WHERE id = $1', [runId])).rows[0]
            .status,
        { timeout: 60_000, interval: 300 },
      )
      .toBe('finished');
  });

  it('does not let support run it, and refuses a form without its token', async () => {
    const before = await runCount();
    const shown = await (await page('/admin/view/reconciliation?lang=en', support)).text();
    expect(shown).not.toContain('id="run-now"');
    expect(shown).toContain('Only an administrator with the admin role may start a run.');
    for (const fields of [{}, { confirmed: 'yes' }] as Record<string, string>[]) {
      const refused = await form('/admin/view/reconciliation/runs', fields, support);
      expect(refused.status).toBe(403);
    }
    const forged = await fetch(`${server.url}/admin/view/reconciliation/runs`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: admin.cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: 'forged', confirmed: 'yes' }),
    });
    expect(forged.status).toBe(403);
    expect(await runCount()).toBe(before);
  });

  it('says so in words when the run cannot be started, and keeps the run as failed', async () => {
    // The same database, a Temporal that does not answer.
    const away = await startTestServer({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` } });
    try {
      const refused = await form('/admin/view/reconciliation/runs?lang=en', { confirmed: 'yes' }, admin, away);
      expect(refused.status).toBe(503);
      expect(await refused.text()).toContain('The run could not be started: the workflow engine does not answer.');
      const failed = await server.services.db.query<{ status: string; error: string }>(
        `SELECT status, error FROM reconciliation_runs WHERE started_by = $1 ORDER BY started_at DESC LIMIT 1`,
        [admin.email],
      );
      expect(failed.rows[0]).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('The workflow could not be started'),
      });
    } finally {
      await away.stop();
    }
  }, 60_000);
});
