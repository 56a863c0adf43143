// The daily reconciliation with the acquirer: for every open or recently closed deal whose money a live acquirer holds,
// what our ledger and records say is compared with what the acquirer answers, and each difference is kept for the
// operators (GET /admin/reconciliation, the console's Reconciliation page).
//
// - `deal_balance`: a YooKassa Safe Deal's balance (getDeal) against what the ledger says the acquirer holds for the
//   deal: the deal's `deal_held:<deal>` plus its part of `seller_payable` (released and not yet paid out), plus, for a
//   deal whose fee moves at close, the fee the ledger moved to `marketplace_fee` at the release while the acquirer's
//   deal is still open: YooKassa keeps a `deal_closed` fee in the deal until the deal closes (after the last payout);
//   less the payouts still pending, which YooKassa takes out of the deal when it accepts them and our ledger moves to
//   `seller_paid_out` when they succeed.
// - `payout_status`: each payout's status at the acquirer (getPayout) against deal_payouts.
// - `payment_status`: a two-stage YooKassa payment's status (getPayment) against deal_payments; a two-stage payment
//   has no acquirer deal to read a balance from.
// The sandbox keeps no state to read back, so sandbox deals are not reconciled.
//
// The comparison is pure (compareBalance, comparePayout, comparePayment) and the checks of one deal take the acquirer
// as an argument (checkDeal), so both are tested without an acquirer. A Temporal Schedule runs reconciliationWorkflow
// (workflows/money/reconciliation.ts) every day; it reads the deals in batches (activities/money/reconciliation.ts),
// and an acquirer that does not answer is a finding of that deal (`error`), never the end of the run.
import { randomUUID } from 'node:crypto';
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import type { EscrowProvider, ProviderDeal, ProviderPayment, ProviderPayout } from '../escrow/provider.ts';
import { DEAL_STATUSES, isFinal, type PaymentStatus } from '../deals/model.ts';
import { formatMinor, sum, toMinor } from './amount.ts';
import { ACCOUNT, HELD_PREFIX } from './ledger.ts';
import type { FeeMoment } from './fee.ts';

export const RECONCILIATION_SCHEDULE_ID = 'money-reconciliation';
export const RECONCILIATION_WORKFLOW = 'reconciliationWorkflow';
/** The hour (UTC) of the daily run: the night in Russia, when few deals move and YooKassa is least busy. */
export const RECONCILIATION_HOUR_UTC = 3;
/**
 * Names the schedule's settings: a worker that finds the schedule with another note (or another task queue) brings it
 * up to date. Change it whenever the schedule or the policies below change.
 */
const SCHEDULE_NOTE = `money reconciliation, daily at ${String(RECONCILIATION_HOUR_UTC).padStart(2, '0')}:00 UTC (v1)`;
/** Closed deals are reconciled this many days after they last changed: late payouts and refunds settle within it. */
export const RECENTLY_CLOSED_DAYS = 7;

export const FINDING_KINDS = ['deal_balance', 'payout_status', 'payment_status'] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];
export const FINDING_STATUSES = ['mismatch', 'error'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

/** The acquirers that can be asked again; the sandbox cannot. */
export const LIVE_PROVIDER_NAMES = ['yookassa', 'yookassa_safe_deal'] as const;
export type LiveProviderName = (typeof LIVE_PROVIDER_NAMES)[number];
const FINAL_STATUSES = DEAL_STATUSES.filter(isFinal);

/** What we hold of one deal, as the reconciliation compares it. */
export interface DealToReconcile {
  dealId: string;
  marketplaceId: string;
  currency: string;
  /**
   * Minor units of the deal's currency: the ledger's `deal_held:<deal>`, and the deal's parts of `seller_payable` and
   * of `marketplace_fee`.
   */
  ledgerHeld: bigint;
  ledgerPayable: bigint;
  ledgerFee: bigint;
  /** When the deal's fee moves: at payment YooKassa takes it at once, at close it stays in the acquirer's deal until then. */
  feeMoment: FeeMoment;
  /** Minor units of the deal's payouts still pending: out of the acquirer's deal already, still payable in the ledger. */
  payoutsInFlight: bigint;
  payments: {
    id: string;
    provider: LiveProviderName;
    status: PaymentStatus;
    providerPaymentId: string | null;
    providerDealId: string | null;
  }[];
  /** Payouts the acquirer knows (those with its id). */
  payouts: {
    id: string;
    provider: LiveProviderName;
    status: 'pending' | 'succeeded' | 'failed';
    providerPayoutId: string;
  }[];
}

/** A difference (`mismatch`) or a check the acquirer could not answer (`error`). */
export interface Finding {
  kind: FindingKind;
  /** What was compared: the acquirer's deal(s), our payout id, our payment id. */
  ref: string;
  currency: string | null;
  ours: string;
  /** Null when the acquirer did not answer. */
  theirs: string | null;
  status: FindingStatus;
  detail: string;
}

/** The acquirer of a live provider's name; it may throw (not configured), which is an error of each check that asks it. */
export type ProviderOf = (name: LiveProviderName) => EscrowProvider;

const DETAIL_MAX = 1000;

// The comparison: pure.

/**
 * What the acquirer's deal(s) should hold by our ledger: the deal's held money and what is payable to its seller, and
 * its fee while it moves at close and an acquirer's deal is still open (YooKassa pays a `deal_closed` fee to the shop
 * when the deal closes; until then it is in the deal's balance though our ledger took it at the release); less the
 * payouts on their way (YooKassa takes a payout out of the deal when it accepts it, our ledger when it succeeds).
 */
export function expectedBalance(
  deal: Pick<DealToReconcile, 'ledgerHeld' | 'ledgerPayable' | 'ledgerFee' | 'feeMoment' | 'payoutsInFlight'>,
  theirs: readonly Pick<ProviderDeal, 'status'>[],
): bigint {
  const feeInDeal =
    deal.feeMoment === 'close' && theirs.some((providerDeal) => providerDeal.status === 'opened') ? deal.ledgerFee : 0n;
  return deal.ledgerHeld + deal.ledgerPayable + feeInDeal - deal.payoutsInFlight;
}

/** A safe deal's balance against the ledger's: a finding when they differ (or the acquirer's amount is not one). */
export function compareBalance(
  deal: Pick<
    DealToReconcile,
    'ledgerHeld' | 'ledgerPayable' | 'ledgerFee' | 'feeMoment' | 'payoutsInFlight' | 'currency'
  >,
  theirs: readonly ProviderDeal[],
): Finding | undefined {
  const ours = expectedBalance(deal, theirs);
  const ref = theirs.map((providerDeal) => providerDeal.providerDealId).join(' ');
  const base = { kind: 'deal_balance' as const, ref, currency: deal.currency, ours: formatMinor(ours) };
  let balance: bigint;
  try {
    balance = sum(theirs.map((providerDeal) => toMinor(providerDeal.balance)));
  } catch {
    const written = theirs.map((providerDeal) => providerDeal.balance).join(' + ');
    return {
      ...base,
      theirs: written,
      status: 'error',
      detail: `The acquirer answered a balance that is not an amount: ${written}.`,
    };
  }
  if (balance === ours) return undefined;
  return {
    ...base,
    theirs: formatMinor(balance),
    status: 'mismatch',
    detail:
      `The ledger says the acquirer holds ${formatMinor(ours)} ${deal.currency} for the deal (held ${formatMinor(deal.ledgerHeld)}, ` +
      `payable to the seller ${formatMinor(deal.ledgerPayable)}` +
      `${deal.feeMoment === 'close' && deal.ledgerFee > 0n && theirs.some((providerDeal) => providerDeal.status === 'opened') ? `, the fee until the deal closes ${formatMinor(deal.ledgerFee)}` : ''}` +
      `${deal.payoutsInFlight > 0n ? `, less payouts on their way ${formatMinor(deal.payoutsInFlight)}` : ''}); ` +
      `the acquirer's deal ${ref} holds ${formatMinor(balance)}.`,
  };
}

/** A payout's status at the acquirer against ours. */
export function comparePayout(ours: DealToReconcile['payouts'][number], theirs: ProviderPayout): Finding | undefined {
  if (theirs.status === ours.status) return undefined;
  const why = theirs.failureReason ? ` (${theirs.failureReason})` : '';
  return {
    kind: 'payout_status',
    ref: ours.id,
    currency: null,
    ours: ours.status,
    theirs: theirs.status,
    status: 'mismatch',
    detail: `Payout ${ours.id} is ${ours.status} in our records and ${theirs.status}${why} at the acquirer (${ours.providerPayoutId}).`,
  };
}

/**
 * A two-stage payment's status at the acquirer against ours, in the acquirer's terms: a disputed payment is still
 * held there (the dispute is ours alone).
 */
export function comparePayment(
  ours: DealToReconcile['payments'][number],
  theirs: ProviderPayment,
): Finding | undefined {
  const expected: ProviderPayment['status'] = ours.status === 'disputed' ? 'hold' : ours.status;
  if (theirs.status === expected) return undefined;
  return {
    kind: 'payment_status',
    ref: ours.id,
    currency: null,
    ours: ours.status,
    theirs: theirs.status,
    status: 'mismatch',
    detail: `Payment ${ours.id} is ${ours.status} in our records and ${theirs.status} at the acquirer (${ours.providerPaymentId}).`,
  };
}

// The checks of one deal, with the acquirer given.

export interface DealCheck {
  findings: Finding[];
  /** Comparisons made (matches, mismatches and errors alike). */
  checks: number;
}

/**
 * Asks the acquirer about one deal and compares. Never throws: an acquirer that fails (unreachable, refusing, not
 * configured) is an `error` finding of the check that asked it, and the other checks go on. `asked` runs after each
 * call to the acquirer (the activity heartbeats there).
 */
export async function checkDeal(
  deal: DealToReconcile,
  providerOf: ProviderOf,
  asked: () => void = () => {},
): Promise<DealCheck> {
  const findings: Finding[] = [];
  let checks = 0;
  const ask = async <T>(
    failed: Omit<Finding, 'theirs' | 'status' | 'detail'>,
    read: () => Promise<T>,
  ): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      findings.push({
        ...failed,
        theirs: null,
        status: 'error',
        detail: `The acquirer did not answer: ${message}`.slice(0, DETAIL_MAX),
      });
      return undefined;
    } finally {
      asked();
    }
  };

  const safeDeals = new Map<string, LiveProviderName>();
  for (const payment of deal.payments) {
    if (payment.provider === 'yookassa_safe_deal' && payment.providerDealId)
      safeDeals.set(payment.providerDealId, payment.provider);
  }
  // A two-stage payment captured into the shop moved the deal's money to seller_payable without any acquirer deal
  // holding it: the ledger's sum would not be the safe deals' balance, so that comparison would only mislead.
  const captured = deal.payments.some((payment) => payment.provider === 'yookassa' && payment.status === 'released');
  if (safeDeals.size > 0 && !captured) {
    checks++;
    // Until the acquirer answers, whether its deal still holds a fee taken at close is not known: the error shows the rest.
    const ours = formatMinor(deal.ledgerHeld + deal.ledgerPayable);
    const answers = [];
    for (const [providerDealId, provider] of safeDeals) {
      answers.push(
        await ask({ kind: 'deal_balance', ref: providerDealId, currency: deal.currency, ours }, () =>
          providerOf(provider).getDeal(providerDealId),
        ),
      );
    }
    const read = answers.filter((answer): answer is ProviderDeal => answer !== undefined);
    if (read.length === answers.length) {
      const finding = compareBalance(deal, read);
      if (finding) findings.push(finding);
    }
  }

  for (const payout of deal.payouts) {
    checks++;
    const theirs = await ask({ kind: 'payout_status', ref: payout.id, currency: null, ours: payout.status }, () =>
      providerOf(payout.provider).getPayout(payout.providerPayoutId),
    );
    const finding = theirs && comparePayout(payout, theirs);
    if (finding) findings.push(finding);
  }

  for (const payment of deal.payments) {
    if (payment.provider !== 'yookassa' || !payment.providerPaymentId) continue;
    const providerPaymentId = payment.providerPaymentId;
    checks++;
    const theirs = await ask({ kind: 'payment_status', ref: payment.id, currency: null, ours: payment.status }, () =>
      providerOf(payment.provider).getPayment(providerPaymentId),
    );
    const finding = theirs && comparePayment(payment, theirs);
    if (finding) findings.push(finding);
  }
  return { findings, checks };
}

// PostgreSQL.

/**
 * The next deals to reconcile after `after` (by id), at most `limit`: open ones, and closed ones that changed since
 * `closedSince`, that have a payment through a live acquirer; with their payments, the payouts the acquirer knows, and
 * the ledger's sums in the deal's currency.
 */
export async function dealsToReconcile(
  db: DbClient,
  options: { after: string | null; closedSince: string; limit: number },
): Promise<DealToReconcile[]> {
  const deals = await db.query<{ id: string; marketplace_id: string; currency: string; fee_moment: FeeMoment }>(
    `SELECT d.id, d.marketplace_id, trim(d.currency) AS currency, d.fee_moment
       FROM deals d
      WHERE ($1::uuid IS NULL OR d.id > $1)
        AND (d.status <> ALL ($2::text[]) OR d.updated_at >= $3)
        AND EXISTS (SELECT 1 FROM deal_payments p WHERE p.deal_id = d.id AND p.provider = ANY ($4::text[]))
      ORDER BY d.id LIMIT $5`,
    [options.after, FINAL_STATUSES, options.closedSince, LIVE_PROVIDER_NAMES, options.limit],
  );
  if (deals.rows.length === 0) return [];
  const ids = deals.rows.map((deal) => deal.id);
  const [payments, payouts, ledger] = await Promise.all([
    db.query<{
      id: string;
      deal_id: string;
      provider: LiveProviderName;
      status: PaymentStatus;
      provider_payment_id: string | null;
      provider_deal_id: string | null;
    }>(
      `SELECT id, deal_id, provider, status, provider_payment_id, provider_deal_id FROM deal_payments
        WHERE deal_id = ANY ($1::uuid[]) AND provider = ANY ($2::text[]) ORDER BY created_at, id`,
      [ids, LIVE_PROVIDER_NAMES],
    ),
    db.query<{
      id: string;
      deal_id: string;
      provider: LiveProviderName;
      status: 'pending' | 'succeeded' | 'failed';
      provider_payout_id: string | null;
      amount: string;
    }>(
      `SELECT o.id, o.deal_id, p.provider, o.status, o.provider_payout_id, o.amount::text AS amount
         FROM deal_payouts o JOIN deal_payments p ON p.id = o.payment_id
        WHERE o.deal_id = ANY ($1::uuid[]) AND p.provider = ANY ($2::text[])
        ORDER BY o.created_at, o.id`,
      [ids, LIVE_PROVIDER_NAMES],
    ),
    db.query<{ deal_id: string; held: string; payable: string; fee: string }>(
      `SELECT p.deal_id,
              coalesce(sum(e.amount) FILTER (WHERE e.account = $2 || p.deal_id::text), 0)::text AS held,
              coalesce(sum(e.amount) FILTER (WHERE e.account = $3), 0)::text AS payable,
              coalesce(sum(e.amount) FILTER (WHERE e.account = $4), 0)::text AS fee
         FROM ledger_postings p
         JOIN ledger_entries e ON e.posting_id = p.id
         JOIN deals d ON d.id = p.deal_id
        WHERE p.deal_id = ANY ($1::uuid[]) AND e.currency = d.currency
        GROUP BY p.deal_id`,
      [ids, HELD_PREFIX, ACCOUNT.sellerPayable, ACCOUNT.marketplaceFee],
    ),
  ]);
  const sums = new Map(ledger.rows.map((row) => [row.deal_id, row]));
  return deals.rows.map((deal) => ({
    dealId: deal.id,
    marketplaceId: deal.marketplace_id,
    currency: deal.currency,
    ledgerHeld: toMinor(sums.get(deal.id)?.held ?? '0'),
    ledgerPayable: toMinor(sums.get(deal.id)?.payable ?? '0'),
    ledgerFee: toMinor(sums.get(deal.id)?.fee ?? '0'),
    feeMoment: deal.fee_moment,
    payments: payments.rows
      .filter((payment) => payment.deal_id === deal.id)
      .map((payment) => ({
        id: payment.id,
        provider: payment.provider,
        status: payment.status,
        providerPaymentId: payment.provider_payment_id,
        providerDealId: payment.provider_deal_id,
      })),
    payoutsInFlight: sum(
      payouts.rows
        .filter((payout) => payout.deal_id === deal.id && payout.status === 'pending')
        .map((payout) => toMinor(payout.amount)),
    ),
    payouts: payouts.rows
      .filter(
        (payout): payout is typeof payout & { provider_payout_id: string } =>
          payout.deal_id === deal.id && payout.provider_payout_id !== null,
      )
      .map((payout) => ({
        id: payout.id,
        provider: payout.provider,
        status: payout.status,
        providerPayoutId: payout.provider_payout_id,
      })),
  }));
}

/**
 * Keeps the findings of these deals in the run, in place of any written for them before: a batch that is retried
 * after writing leaves each deal's latest findings only.
 */
export async function recordFindings(
  db: Db,
  runId: string,
  checked: { deal: Pick<DealToReconcile, 'dealId' | 'marketplaceId'>; findings: Finding[] }[],
): Promise<void> {
  if (checked.length === 0) return;
  const rows = checked.flatMap(({ deal, findings }) =>
    findings.map((finding) => ({
      deal_id: deal.dealId,
      marketplace_id: deal.marketplaceId,
      ...finding,
      detail: finding.detail.slice(0, DETAIL_MAX),
    })),
  );
  await inTransaction(db, async (client) => {
    await client.query('DELETE FROM reconciliation_items WHERE run_id = $1 AND deal_id = ANY ($2::uuid[])', [
      runId,
      checked.map(({ deal }) => deal.dealId),
    ]);
    if (rows.length === 0) return;
    await client.query(
      `INSERT INTO reconciliation_items (run_id, deal_id, marketplace_id, kind, ref, currency, ours, theirs, status, detail)
       SELECT $1, f.deal_id, f.marketplace_id, f.kind, f.ref, f.currency, f.ours, f.theirs, f.status, f.detail
         FROM jsonb_to_recordset($2::jsonb)
           AS f(deal_id uuid, marketplace_id uuid, kind text, ref text, currency text, ours text, theirs text, status text, detail text)`,
      [runId, JSON.stringify(rows)],
    );
  });
}

export interface RunRecord {
  id: string;
  trigger: 'schedule' | 'manual';
  started_by: string | null;
  workflow_id: string;
  status: 'running' | 'finished' | 'failed';
  started_at: Date;
  finished_at: Date | null;
  deals_checked: number;
  checks: number;
  mismatches: number;
  errors: number;
  error: string | null;
}

const RUN_COLUMNS =
  'id, trigger, started_by, workflow_id, status, started_at, finished_at, deals_checked, checks, mismatches, errors, error';

/**
 * The run's row, made when it is not there yet (a scheduled run; a manual one is made by its request); returns when
 * it started, by the database's clock, from which "recently closed" counts.
 */
export async function beginRun(
  db: DbClient,
  run: { runId: string; trigger: RunRecord['trigger']; workflowId: string; startedBy?: string },
): Promise<RunRecord> {
  await db.query(
    `INSERT INTO reconciliation_runs (id, trigger, started_by, workflow_id) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
    [run.runId, run.trigger, run.startedBy ?? null, run.workflowId],
  );
  return (await findRun(db, run.runId))!;
}

/** Ends the run: finished, or failed with why; its mismatches and errors are counted from what it kept. */
export async function finishRun(
  db: DbClient,
  run: { runId: string; dealsChecked: number; checks: number; error?: string },
): Promise<RunRecord> {
  const result = await db.query<RunRecord>(
    `UPDATE reconciliation_runs r
        SET status = CASE WHEN $4::text IS NULL THEN 'finished' ELSE 'failed' END, finished_at = now(), deals_checked = $2, checks = $3,
            mismatches = (SELECT count(*) FROM reconciliation_items i WHERE i.run_id = r.id AND i.status = 'mismatch'),
            errors = (SELECT count(*) FROM reconciliation_items i WHERE i.run_id = r.id AND i.status = 'error'),
            error = $4
      WHERE id = $1 RETURNING ${RUN_COLUMNS}`,
    [run.runId, run.dealsChecked, run.checks, run.error?.slice(0, DETAIL_MAX) ?? null],
  );
  return result.rows[0];
}

export async function findRun(db: DbClient, id: string): Promise<RunRecord | undefined> {
  if (!isUuid(id)) return undefined;
  return (await db.query<RunRecord>(`SELECT ${RUN_COLUMNS} FROM reconciliation_runs WHERE id = $1`, [id])).rows[0];
}

/** Runs newest first; undefined when the cursor is not a run. */
export async function listRuns(
  db: DbClient,
  page: { limit: number; startingAfter?: string },
): Promise<{ items: RunRecord[]; hasMore: boolean } | undefined> {
  if (page.startingAfter && !(await findRun(db, page.startingAfter))) return undefined;
  const result = await db.query<RunRecord>(
    `SELECT ${RUN_COLUMNS} FROM reconciliation_runs
      WHERE $1::uuid IS NULL OR (started_at, id) < (SELECT started_at, id FROM reconciliation_runs WHERE id = $1)
      ORDER BY started_at DESC, id DESC LIMIT $2`,
    [page.startingAfter ?? null, page.limit + 1],
  );
  return { items: result.rows.slice(0, page.limit), hasMore: result.rows.length > page.limit };
}

/** The last run that ended (finished or failed), or undefined before any. */
export async function lastFinishedRun(db: DbClient): Promise<RunRecord | undefined> {
  return (
    await db.query<RunRecord>(
      `SELECT ${RUN_COLUMNS} FROM reconciliation_runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1`,
    )
  ).rows[0];
}

export interface ItemRecord {
  /** Increasing with time (bigint as text). */
  id: string;
  run_id: string;
  checked_at: Date;
  deal_id: string;
  marketplace_id: string;
  kind: FindingKind;
  ref: string;
  currency: string | null;
  ours: string;
  theirs: string | null;
  status: FindingStatus;
  detail: string;
}

export interface ItemFilter {
  status?: FindingStatus;
  kind?: FindingKind;
  runId?: string;
  dealId?: string;
  marketplaceId?: string;
  limit: number;
  /** An item id: the page holds the items kept before it. */
  startingAfter?: string;
}

/** Findings newest first; undefined when the cursor is not a finding. */
export async function listItems(
  db: DbClient,
  filter: ItemFilter,
): Promise<{ items: ItemRecord[]; hasMore: boolean } | undefined> {
  if (filter.startingAfter !== undefined) {
    const found =
      /^[0-9]{1,18}$/.test(filter.startingAfter) &&
      (await db.query('SELECT 1 FROM reconciliation_items WHERE id = $1', [filter.startingAfter])).rowCount;
    if (!found) return undefined;
  }
  const result = await db.query<ItemRecord>(
    // Ordered by the column (bigint), not by the text it is answered as: "9" would come before "10".
    `SELECT i.id::text AS id, i.run_id, i.checked_at, i.deal_id, i.marketplace_id, i.kind, i.ref, trim(i.currency) AS currency, i.ours, i.theirs, i.status, i.detail
       FROM reconciliation_items i
      WHERE ($1::text IS NULL OR i.status = $1) AND ($2::text IS NULL OR i.kind = $2) AND ($3::uuid IS NULL OR i.run_id = $3)
        AND ($4::uuid IS NULL OR i.deal_id = $4) AND ($5::uuid IS NULL OR i.marketplace_id = $5) AND ($6::bigint IS NULL OR i.id < $6)
      ORDER BY i.id DESC LIMIT $7`,
    [
      filter.status ?? null,
      filter.kind ?? null,
      filter.runId ?? null,
      filter.dealId ?? null,
      filter.marketplaceId ?? null,
      filter.startingAfter ?? null,
      filter.limit + 1,
    ],
  );
  return { items: result.rows.slice(0, filter.limit), hasMore: result.rows.length > filter.limit };
}

// Starting runs.

/** What the workflow is started with; a scheduled run gets none and makes its own run id. */
export interface ReconciliationInput {
  runId?: string;
  trigger?: RunRecord['trigger'];
}

const START_DEADLINE_MS = 5_000;

/**
 * An administrator's "run now": the run's row, then its workflow under an id of its own (so it never meets the daily
 * run's). A workflow that cannot be started fails the run, and the error goes on to the caller.
 */
export async function startReconciliation(services: Services, startedBy: string): Promise<RunRecord> {
  const runId = randomUUID();
  const workflowId = `${RECONCILIATION_SCHEDULE_ID}/${runId}`;
  const run = await beginRun(services.db, { runId, trigger: 'manual', workflowId, startedBy });
  try {
    const input: ReconciliationInput = { runId, trigger: 'manual' };
    // A start answers in milliseconds; an administrator is told within seconds that Temporal is away, not after the
    // client's own retries (about 20 s).
    await services.temporal.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      services.temporal.workflow.start(RECONCILIATION_WORKFLOW, {
        taskQueue: services.config.TEMPORAL_TASK_QUEUE,
        workflowId,
        args: [input],
      }),
    );
  } catch (error) {
    await finishRun(services.db, {
      runId,
      dealsChecked: 0,
      checks: 0,
      error: `The workflow could not be started: ${(error as Error).message}`,
    });
    throw error;
  }
  return run;
}

/**
 * The daily schedule, made when the worker starts: created when missing; brought up to date when it starts another
 * workflow or on another task queue, or was made by another version of these settings (its note); left alone
 * otherwise. Overlaps are skipped (a run still going on the next night is not doubled), and a run missed while
 * Temporal was away is taken when it returns within the catch-up window. Never fails the worker's start: a schedule
 * that cannot be made is logged, and the next start tries again.
 */
export async function ensureReconciliationSchedule(services: Services): Promise<void> {
  const { temporal, config, logger } = services;
  const options = {
    spec: { calendars: [{ hour: RECONCILIATION_HOUR_UTC, minute: 0, comment: 'daily' }], timezone: 'UTC' },
    action: {
      type: 'startWorkflow' as const,
      workflowType: RECONCILIATION_WORKFLOW,
      args: [],
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      workflowId: RECONCILIATION_SCHEDULE_ID,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '6 hours' },
    state: { note: SCHEDULE_NOTE },
  };
  try {
    try {
      await temporal.schedule.create({ scheduleId: RECONCILIATION_SCHEDULE_ID, ...options });
      logger.info({ scheduleId: RECONCILIATION_SCHEDULE_ID }, 'reconciliation schedule created');
      return;
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    }
    const handle = temporal.schedule.getHandle(RECONCILIATION_SCHEDULE_ID);
    const current = await handle.describe();
    const same =
      current.action.type === 'startWorkflow' &&
      current.action.workflowType === RECONCILIATION_WORKFLOW &&
      current.action.taskQueue === config.TEMPORAL_TASK_QUEUE &&
      current.state.note === SCHEDULE_NOTE;
    if (same) return;
    await handle.update((previous) => ({
      ...previous,
      spec: options.spec,
      action: options.action,
      policies: options.policies,
      state: { ...previous.state, note: SCHEDULE_NOTE },
    }));
    logger.info({ scheduleId: RECONCILIATION_SCHEDULE_ID }, 'reconciliation schedule updated');
  } catch (error) {
    logger.warn(
      { err: error, scheduleId: RECONCILIATION_SCHEDULE_ID },
      'could not create or update the reconciliation schedule; the next worker start tries again',
    );
  }
}
