// The marketplace's money as the ledger has it (X-Svc-Key): its postings page by page, as JSON or CSV, and its balances.
// Every amount is computed in minor units from PostgreSQL's numeric read as text, and written with two decimals.
import type { Context } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { problem } from '../http/problem.ts';
import { QueryTimestamp, queryInt } from '../http/query-values.ts';
import { requireSecretKey, type Marketplace } from '../marketplaces/marketplaces.ts';
import { formatMinor, toMinor } from './amount.ts';
import { moneyJson } from './json.ts';
import { POSTING_KINDS } from './ledger.ts';
import { listPostings, marketplaceBalances, type PostingRecord } from './ledger-store.ts';

const ACCOUNTS_WORDS =
  '`buyer` (where buyers’ money comes from), `deal_held:<deal id>` (held for that deal), `seller_payable` (released ' +
  'to the seller, not paid out yet), `seller_paid_out`, `marketplace_fee`, `refunded` (back to the buyer), `acquirer_fee`';

const LedgerEntry = z.object({
  account: z.string().describe(`The account: ${ACCOUNTS_WORDS}`),
  amount: z
    .number()
    .describe(
      'Written exactly with two decimals (-1234.50); positive: into the account, negative: out of it. A posting’s amounts sum to 0 per currency',
    ),
  currency: z.string().describe('ISO 4217'),
});

const Posting = z.object({
  id: z.uuid(),
  at: z.iso.datetime().describe('When it was written, with the deal change that caused it'),
  deal_id: z.uuid(),
  kind: z
    .enum(POSTING_KINDS)
    .describe(
      '`payment`: the buyer’s money held; `fee`: the marketplace’s fee; `payout`: released to the seller (to ' +
        '`seller_payable` until payouts send it); `refund`: back to the buyer; `reversal`: a movement undone (a fee taken at ' +
        'payment, when the money is refunded); `acquirer_fee`: the acquirer’s charge',
    ),
  entries: z.array(LedgerEntry),
});

const LedgerPage = z.object({
  items: z.array(Posting).describe('Newest first'),
  has_more: z.boolean().describe('Whether older postings follow: pass the last item’s id as starting_after'),
});

/** Each amount written exactly with two decimals (1234.50, 0.00). */
const Balance = z.object({
  currency: z.string().describe('ISO 4217; each amount is written exactly with two decimals (1234.50, 0.00)'),
  held: z.number().describe('Held in the marketplace’s open deals'),
  payable: z.number().describe('Released to sellers and not paid out yet'),
  paid_out: z.number().describe('Sent to sellers by payouts'),
  refunded: z.number().describe('Given back to buyers'),
  fees: z.number().describe('The marketplace’s fees'),
});

const CSV_COLUMNS = ['posting_id', 'at', 'deal_id', 'kind', 'account', 'amount', 'currency'] as const;

/** A CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break. */
const cell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** One line per entry, amounts with two decimals, CRLF line ends. */
function ledgerCsv(items: PostingRecord[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const posting of items) {
    for (const entry of posting.entries) {
      lines.push(
        [
          posting.id,
          posting.at.toISOString(),
          posting.deal_id,
          posting.kind,
          entry.account,
          formatMinor(toMinor(entry.amount)),
          entry.currency,
        ]
          .map(cell)
          .join(','),
      );
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** A posting for moneyJson: its amounts in minor units, written as exact decimals with two places. */
const postingJson = (posting: PostingRecord) => ({
  id: posting.id,
  at: posting.at.toISOString(),
  deal_id: posting.deal_id,
  kind: posting.kind,
  entries: posting.entries.map((entry) => ({
    account: entry.account,
    amount: toMinor(entry.amount),
    currency: entry.currency,
  })),
});

/** A JSON answer whose amounts are exact decimals with two places (src/money/json.ts). */
function sendMoney(ctx: Context, body: unknown): void {
  ctx.type = 'application/json';
  ctx.body = moneyJson(body);
}

/** The same request for the next page: every parameter as asked, starting after the page's last posting. */
function nextPage(ctx: Context, lastId: string): string {
  const query = new URLSearchParams(ctx.querystring);
  query.set('starting_after', lastId);
  return `${ctx.path}?${query}`;
}

export function ledgerRoutes(api: Api, services: Services): void {
  const common = { tags: ['Money'], security: ['marketplaceKey'], use: [requireSecretKey(services.db)] };
  const marketplaceOf = (ctx: Context) => ctx.state.marketplace as Marketplace;

  api.route({
    ...common,
    method: 'get',
    path: '/api/mkt/ledger',
    operationId: 'listLedger',
    summary: "The marketplace's ledger: every money movement of its deals, newest first",
    description:
      'Each posting is one movement, its entries balanced (they sum to 0 in each currency), written with the deal change ' +
      'that caused it and never changed. Pass the last item’s id as `starting_after` for the next page while `has_more` ' +
      'is true; an id that is not a posting of this marketplace is 400 invalid_cursor. With `Accept: text/csv`: the same ' +
      `page as CSV, one line per entry (${CSV_COLUMNS.join(', ')}), amounts with two decimals, and a \`Link: <…>; rel="next"\` ` +
      'header while more follow.',
    query: z.object({
      deal_id: z.uuid().optional().describe('Only this deal’s postings'),
      created_gte: QueryTimestamp.optional().describe('Written at or after (ISO 8601)'),
      created_lte: QueryTimestamp.optional().describe('Written at or before (ISO 8601)'),
      limit: queryInt(1, 1000).default(100).describe('Postings per page: 1 to 1000, 100 when absent'),
      starting_after: z.uuid().optional().describe('A posting id: the page holds the postings written before it'),
    }),
    responses: {
      200: {
        description: 'A page of postings (JSON), or its entries as CSV with Accept: text/csv',
        schema: LedgerPage,
        also: { 'text/csv': z.string().describe(`CSV with the header line ${CSV_COLUMNS.join(',')}`) },
      },
    },
    handler: async (ctx, { query }) => {
      const page = await listPostings(services.db, {
        marketplaceId: marketplaceOf(ctx).id,
        dealId: query.deal_id,
        createdGte: query.created_gte,
        createdLte: query.created_lte,
        limit: query.limit,
        startingAfter: query.starting_after,
      });
      if (!page)
        throw problem(
          'invalid_cursor',
          "starting_after is not a posting of this marketplace's ledger; take it from a page of this list.",
        );
      if (ctx.accepts('application/json', 'text/csv') === 'text/csv') {
        if (page.hasMore) ctx.set('Link', `<${nextPage(ctx, page.items.at(-1)!.id)}>; rel="next"`);
        ctx.set('Content-Disposition', 'attachment; filename="ledger.csv"');
        ctx.type = 'text/csv; charset=utf-8';
        ctx.body = ledgerCsv(page.items);
        return;
      }
      sendMoney(ctx, { items: page.items.map(postingJson), has_more: page.hasMore });
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/api/mkt/balance',
    operationId: 'getBalance',
    summary: "The marketplace's balances per currency, summed from its ledger",
    description:
      'Sums of the postings’ entries, never stored counters: `held` + `payable` + `paid_out` + `refunded` + `fees` is what ' +
      'buyers paid in. A currency without postings is absent. Payouts are not built yet: released money stays in `payable`.',
    responses: {
      200: { description: 'One item per currency the ledger holds', schema: z.object({ items: z.array(Balance) }) },
    },
    handler: async (ctx) => {
      const balances = await marketplaceBalances(services.db, marketplaceOf(ctx).id);
      const items = balances.map(({ currency, held, payable, paid_out, refunded, fees }) => ({
        currency,
        held,
        payable,
        paid_out,
        refunded,
        fees,
      }));
      sendMoney(ctx, { items });
    },
  });
}
