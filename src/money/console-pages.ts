// The console's money pages: the ledger across marketplaces (filters, balances per marketplace and currency, postings
// newest first) and the reconciliation with the acquirer (its runs, what they found, "run now" behind a confirmation,
// the admin role's and audited as the JSON operation). Every role reads them. dealPostingsSection gives the deal's
// console page its postings.
import type { Api } from '../http/api.ts';
import type { SafeHtml } from '../http/html.ts';
import { Problem } from '../http/problem.ts';
import type { Db, DbClient } from '../db.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import type { Lang } from '../web/i18n.ts';
import { send } from '../web/page.ts';
import { consolePage, type ConsolePage } from '../admin/console.ts';
import { pagePlace, pager, queryText } from '../admin/console-kit.ts';
import { ANSWERED, consoleAction } from '../admin/console-actions.ts';
import { toMinor } from './amount.ts';
import { ACCOUNT, HELD_PREFIX } from './ledger.ts';
import {
  FINDING_STATUSES,
  findRun,
  listItems,
  listRuns,
  startReconciliation,
  type FindingStatus,
} from './reconciliation.ts';
import { runJson } from './admin-routes.ts';
import { moneyConsoleTranslator, type MoneyConsoleMessage } from './console-i18n.ts';
import {
  LEDGER_PATH,
  RECONCILIATION_PATH,
  dealPostingsBody,
  ledgerBody,
  reconciliationBody,
  type BalanceRow,
  type LedgerFilterForm,
  type MoneyWords,
  type PostingRow,
} from './console-views.ts';

const POSTINGS_PAGE = 50;
const FINDINGS_PAGE = 50;
const RUNS_SHOWN = 10;
/** A deal has a few postings per payment; this many is far beyond any deal's. */
const DEAL_POSTINGS_MAX = 500;

type MoneyPage = ConsolePage & MoneyWords;
const withWords = (p: ConsolePage): MoneyPage => ({ ...p, m: moneyConsoleTranslator(p.lang) });

// Reads of the ledger across marketplaces (the marketplace's own API reads one at a time: ledger-store.ts).

const POSTING_COLUMNS = `p.id, p.at, p.marketplace_id, p.deal_id, p.kind,
  (SELECT json_agg(json_build_object('account', e.account, 'amount', e.amount::text, 'currency', e.currency) ORDER BY e.line)
     FROM ledger_entries e WHERE e.posting_id = p.id) AS entries`;

/** Postings newest first, of one marketplace or deal or all; undefined when the cursor is not such a posting. */
async function consolePostings(
  db: DbClient,
  filter: { marketplaceId?: string; dealId?: string; limit: number; startingAfter?: string },
): Promise<{ items: PostingRow[]; hasMore: boolean } | undefined> {
  let before: string | null = null;
  if (filter.startingAfter) {
    const cursor = await db.query<{ seq: string }>('SELECT seq::text AS seq FROM ledger_postings WHERE id = $1', [
      filter.startingAfter,
    ]);
    if (!cursor.rows[0]) return undefined;
    before = cursor.rows[0].seq;
  }
  const result = await db.query<PostingRow>(
    `SELECT ${POSTING_COLUMNS} FROM ledger_postings p
      WHERE ($1::uuid IS NULL OR p.marketplace_id = $1) AND ($2::uuid IS NULL OR p.deal_id = $2) AND ($3::bigint IS NULL OR p.seq < $3)
      ORDER BY p.seq DESC LIMIT $4`,
    [filter.marketplaceId ?? null, filter.dealId ?? null, before, filter.limit + 1],
  );
  return { items: result.rows.slice(0, filter.limit), hasMore: result.rows.length > filter.limit };
}

/** Each marketplace's balances per currency (or one marketplace's), summed from the entries: never stored. */
async function consoleBalances(db: DbClient, marketplaceId?: string): Promise<BalanceRow[]> {
  const result = await db.query<Record<keyof BalanceRow, string>>(
    `SELECT p.marketplace_id, e.currency,
            coalesce(sum(e.amount) FILTER (WHERE starts_with(e.account, $2)), 0)::text AS held,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $3), 0)::text AS payable,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $4), 0)::text AS paid_out,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $5), 0)::text AS refunded,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $6), 0)::text AS fees
       FROM ledger_postings p JOIN ledger_entries e ON e.posting_id = p.id
      WHERE $1::uuid IS NULL OR p.marketplace_id = $1
      GROUP BY p.marketplace_id, e.currency`,
    [
      marketplaceId ?? null,
      HELD_PREFIX,
      ACCOUNT.sellerPayable,
      ACCOUNT.sellerPaidOut,
      ACCOUNT.refunded,
      ACCOUNT.marketplaceFee,
    ],
  );
  return result.rows.map((row) => ({
    marketplace_id: row.marketplace_id,
    currency: row.currency,
    held: toMinor(row.held),
    payable: toMinor(row.payable),
    paid_out: toMinor(row.paid_out),
    refunded: toMinor(row.refunded),
    fees: toMinor(row.fees),
  }));
}

/** Marketplace names: the first 500 by name for the filter, and every one the page names besides. */
async function marketplaceNames(db: Db, also: string[]): Promise<Map<string, string>> {
  const result = await db.query<{ id: string; name: string }>(
    `(SELECT id, name FROM marketplaces ORDER BY name, id LIMIT 500) UNION SELECT id, name FROM marketplaces WHERE id = ANY ($1::uuid[])`,
    [[...new Set(also)]],
  );
  const sorted = result.rows.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  return new Map(sorted.map((row) => [row.id, row.name]));
}

/** A deal's postings, oldest first. */
async function dealPostings(db: DbClient, dealId: string): Promise<PostingRow[]> {
  if (!isUuid(dealId)) return [];
  const result = await db.query<PostingRow>(
    `SELECT ${POSTING_COLUMNS} FROM ledger_postings p WHERE p.deal_id = $1 ORDER BY p.seq LIMIT $2`,
    [dealId, DEAL_POSTINGS_MAX],
  );
  return result.rows;
}

/**
 * The deal's postings as a section of the deal's console page (a table of each movement and its entries, and a link
 * to the deal in the ledger), in the page's language.
 */
export async function dealPostingsSection(
  services: Pick<Services, 'db'>,
  dealId: string,
  lang: Lang,
): Promise<SafeHtml> {
  return dealPostingsBody({ lang, m: moneyConsoleTranslator(lang) }, dealId, await dealPostings(services.db, dealId));
}

export function moneyConsolePages(api: Api, services: Services): void {
  const router = api.router;
  const { db } = services;

  router.get(
    LEDGER_PATH,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const form: LedgerFilterForm = {
        marketplace_id: queryText(p.ctx.query, 'marketplace_id', 64),
        deal_id: queryText(p.ctx.query, 'deal_id', 64),
      };
      const after = queryText(p.ctx.query, 'starting_after', 64);
      const wrong: MoneyConsoleMessage[] = [];
      if (form.marketplace_id && !isUuid(form.marketplace_id)) wrong.push('marketplace');
      if (form.deal_id && !isUuid(form.deal_id)) wrong.push('dealId');
      if (after && !isUuid(after)) wrong.push('olderPostings');
      const page =
        wrong.length === 0
          ? await consolePostings(db, {
              marketplaceId: form.marketplace_id || undefined,
              dealId: form.deal_id || undefined,
              limit: POSTINGS_PAGE,
              startingAfter: after || undefined,
            })
          : undefined;
      if (!page && wrong.length === 0) wrong.push('olderPostings');
      const balances = wrong.length === 0 ? await consoleBalances(db, form.marketplace_id || undefined) : [];
      const names = await marketplaceNames(db, [
        ...(page?.items ?? []).map((posting) => posting.marketplace_id),
        ...balances.map((row) => row.marketplace_id),
      ]);
      balances.sort(
        (a, b) =>
          (names.get(a.marketplace_id) ?? '').localeCompare(names.get(b.marketplace_id) ?? '') ||
          a.marketplace_id.localeCompare(b.marketplace_id) ||
          a.currency.localeCompare(b.currency),
      );
      const pages = pager(p.lang, {
        path: LEDGER_PATH,
        filters: form,
        place: pagePlace(p.ctx.query, isUuid),
        last: page?.hasMore ? page.items.at(-1)!.id : undefined,
      });
      const error =
        wrong.length > 0 ? p.m('badFilters', { fields: wrong.map((key) => p.m(key)).join(', ') }) : undefined;
      send(
        p,
        error ? 400 : 200,
        p.m('ledgerTitle'),
        ledgerBody(p, { form, marketplaces: names, balances, postings: page?.items ?? [], pages, error }),
        undefined,
        p.admin,
      );
    }),
  );

  /** The reconciliation page, with a notice or an error, answered with `status`. */
  async function showReconciliation(p: MoneyPage, status = 200, words: { notice?: string; error?: string } = {}) {
    // The answer to a POST shows the page as it opens: its query chose nothing.
    const asked = (name: string, max = 64) => (p.ctx.method === 'GET' ? queryText(p.ctx.query, name, max) : '');
    const runId = asked('run_id');
    const findingStatus: FindingStatus | undefined = FINDING_STATUSES.find((value) => value === asked('status'));
    // Only a GET's query chooses the page: the answer to a POST is the first.
    const place =
      p.ctx.method === 'GET' ? pagePlace(p.ctx.query, (cursor) => /^[0-9]{1,18}$/.test(cursor)) : { trail: [] };
    const run = runId ? await findRun(db, runId) : undefined;
    const runs = (await listRuns(db, { limit: RUNS_SHOWN }))!.items;
    // A cursor that is not a finding shows the first page rather than an error page.
    const filter = { status: findingStatus, runId: run?.id, limit: FINDINGS_PAGE };
    const page = (await listItems(db, { ...filter, startingAfter: place.after })) ?? (await listItems(db, filter))!;
    const pages = pager(p.lang, {
      path: RECONCILIATION_PATH,
      filters: { run_id: run?.id, status: findingStatus },
      place,
      last: page.hasMore ? page.items.at(-1)!.id : undefined,
      hash: '#findings',
    });
    const body = reconciliationBody(p, {
      admin: p.admin,
      runs,
      run,
      status: findingStatus,
      items: page.items,
      pages,
      ...words,
    });
    send(p, status, p.m('reconciliationTitle'), body, RECONCILIATION_PATH, p.admin);
  }

  router.get(
    RECONCILIATION_PATH,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      await showReconciliation(p, 200, {
        notice: queryText(p.ctx.query, 'done', 64) === 'started' ? p.m('started_notice') : undefined,
      });
    }),
  );

  router.post(
    `${RECONCILIATION_PATH}/runs`,
    consoleAction(services, {
      may: ['admin'],
      page: withWords,
      path: () => `${RECONCILIATION_PATH}/runs`,
      cancel: () => RECONCILIATION_PATH,
      action: (p) => ({
        confirm: () => ({
          title: p.m('confirmRunTitle'),
          text: p.m('confirmRunText'),
          button: p.m('confirmButton'),
          fields: {},
          tone: 'plain',
        }),
        run: async () => {
          const run = await startReconciliation(services, p.admin.actor);
          return {
            audit: {
              action: 'runReconciliation',
              object_type: 'reconciliation',
              object_id: run.id,
              after: runJson(run),
            },
            location: `${RECONCILIATION_PATH}?done=started`,
          };
        },
        refused: async (error) => {
          if (error instanceof Problem) return undefined;
          // Temporal away (or the run's row not written): the run is marked failed and nothing was asked of the acquirer.
          ((p.ctx.state.log as Services['logger'] | undefined) ?? services.logger).warn(
            { err: error },
            'a reconciliation run could not be started from the console',
          );
          await showReconciliation(p, 503, { error: p.m('startFailed') });
          return ANSWERED;
        },
      }),
    }),
  );
}
