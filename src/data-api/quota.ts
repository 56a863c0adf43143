// The monthly quota: one atomic statement finds the key's account and counts the request, so with N requests left
// exactly N concurrent requests pass. The upsert's WHERE is re-checked on the row it locks (READ COMMITTED), so two
// racing requests can never both take the last unit. A request that turns out to cost nothing (refused by validation,
// failed on our side) gives its unit back to the same row once it has ended: taken before the work, never counted twice.
import type { Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { hashSecret } from '../secrets.ts';
import { isUuid } from '../uuid.ts';
import { listDataKeysOf, TARIFF_QUOTAS, type DataKeyItem, type Tariff } from './keys.ts';

export interface Usage {
  accountId: string;
  tariff: Tariff;
  /** null: unlimited. */
  quota: number | null;
  /** Requests counted this month, this one included when it was counted. */
  used: number;
  /** False when the request was refused for the quota. */
  allowed: boolean;
  /** The calendar month (UTC) counted in, as its first day (YYYY-MM-DD): a unit goes back to the month it came from. */
  month: string;
  /** Start of the next calendar month (UTC). */
  resetsAt: Date;
  /** Length of this calendar month, the window of the policy. */
  windowSeconds: number;
}

const QUOTA_SQL = `CASE a.tariff ${Object.entries(TARIFF_QUOTAS)
  .map(([tariff, quota]) => `WHEN '${tariff}' THEN ${quota ?? 'NULL'}`)
  .join(' ')} END`;

// $1 key hash (or, ACCOUNT_BY_ID, the account's id), $2 month (first day, UTC), $3 how many units to take (0: only read).
const ACCOUNT_BY_KEY = `FROM data_keys k JOIN data_accounts a ON a.id = k.account_id
    WHERE k.key_hash = $1 AND k.revoked_at IS NULL`;
const ACCOUNT_BY_ID = 'FROM data_accounts a WHERE a.id = $1';
const checkAndCountSql = (account: string) => `
  WITH account AS (
    SELECT a.id, a.tariff, COALESCE(a.monthly_quota, ${QUOTA_SQL}) AS quota
    ${account}),
  counted AS (
    INSERT INTO data_usage AS u (account_id, month, used)
    SELECT id, $2::date, $3::bigint FROM account WHERE $3::bigint > 0 AND (quota IS NULL OR quota >= $3::bigint)
    ON CONFLICT (account_id, month) DO UPDATE SET used = u.used + excluded.used
      WHERE (SELECT quota FROM account) IS NULL OR u.used + excluded.used <= (SELECT quota FROM account)
    RETURNING used)
  SELECT a.id, a.tariff, a.quota, (SELECT used FROM counted) AS counted,
    (SELECT used FROM data_usage WHERE account_id = a.id AND month = $2::date) AS before
  FROM account a`;
const CHECK_AND_COUNT = checkAndCountSql(ACCOUNT_BY_KEY);
const CHECK_AND_COUNT_ACCOUNT = checkAndCountSql(ACCOUNT_BY_ID);

/** The account of an active key with its usage, taking `units` requests from the quota when they fit. */
export function checkAndCount(db: Db, key: string, units: number, now = new Date()): Promise<Usage | undefined> {
  return countIn(db, CHECK_AND_COUNT, hashSecret(key), units, now);
}

/** The same for an account known by its id (a user signed in through OAuth: src/data-api/oauth-auth.ts). */
export function checkAndCountAccount(
  db: Db,
  accountId: string,
  units: number,
  now = new Date(),
): Promise<Usage | undefined> {
  return countIn(db, CHECK_AND_COUNT_ACCOUNT, accountId, units, now);
}

async function countIn(
  db: Db,
  sql: string,
  subject: Buffer | string,
  units: number,
  now: Date,
): Promise<Usage | undefined> {
  const { month, resetsAt, monthDay } = calendarMonth(now);
  const result = await db.query<{
    id: string;
    tariff: Tariff;
    quota: number | null;
    counted: number | null;
    before: number | null;
  }>(sql, [subject, monthDay, units]);
  const row = result.rows[0];
  if (!row) return undefined;
  const allowed = units === 0 || row.counted !== null;
  // `before` is read in the statement's snapshot, which a request that waited on the row's lock sees stale; a refusal
  // itself proves at least quota - units + 1 were used, so what it reports never shows units left that were not.
  const before = row.before ?? 0;
  const used = row.counted ?? (allowed || row.quota === null ? before : Math.max(before, row.quota - units + 1));
  return {
    accountId: row.id,
    tariff: row.tariff,
    quota: row.quota,
    used,
    allowed,
    month: monthDay,
    resetsAt,
    windowSeconds: (resetsAt.getTime() - month.getTime()) / 1000,
  };
}

/** The calendar month (UTC) of `now`: its first day, that day as YYYY-MM-DD, and the start of the next month. */
function calendarMonth(now: Date): { month: Date; monthDay: string; resetsAt: Date } {
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { month, monthDay: month.toISOString().slice(0, 10), resetsAt };
}

/** An account's tariff and this month's usage as its owner reads them; `monthly_quota` and `remaining` null: unlimited. */
export interface AccountUsage {
  tariff: Tariff;
  monthly_quota: number | null;
  used: number;
  remaining: number | null;
  resets_at: string;
}

/** Reads the usage without counting anything; a user without a data account sees the free tariff, nothing used. */
export async function accountUsage(db: Db, accountId: string, now = new Date()): Promise<AccountUsage> {
  const { monthDay, resetsAt } = calendarMonth(now);
  const result = await db.query<{ tariff: Tariff; quota: number | null; used: number | null }>(
    `SELECT a.tariff, COALESCE(a.monthly_quota, ${QUOTA_SQL}) AS quota,
       (SELECT used FROM data_usage WHERE account_id = a.id AND month = $2::date) AS used
     FROM data_accounts a WHERE a.id = $1`,
    [accountId, monthDay],
  );
  const row = result.rows[0] ?? { tariff: 'free' as const, quota: TARIFF_QUOTAS.free, used: 0 };
  const used = row.used ?? 0;
  return {
    tariff: row.tariff,
    monthly_quota: row.quota,
    used,
    remaining: row.quota === null ? null : Math.max(0, row.quota - used),
    resets_at: resetsAt.toISOString(),
  };
}

/** Requests refused for what they asked, before any search ran. */
const REFUSED_INPUT = new Set(['validation_failed', 'invalid_cursor', 'conflicting_parameters']);

/**
 * The quota rule for a request that has ended: refused for its input (validation_failed, invalid_cursor,
 * conflicting_parameters) or failed on our side (5xx) costs nothing; everything else counts.
 */
export function costsNothing(status: number, code?: string): boolean {
  return status >= 500 || (status === 400 && code !== undefined && REFUSED_INPUT.has(code));
}

/** Gives back units a request took; the usage as it is afterwards. */
export async function giveBack(db: Db, usage: Usage, units = 1): Promise<Usage> {
  const result = await db.query<{ used: number }>(
    'UPDATE data_usage SET used = used - $3 WHERE account_id = $1 AND month = $2::date AND used >= $3 RETURNING used',
    [usage.accountId, usage.month, units],
  );
  return { ...usage, used: result.rows[0]?.used ?? usage.used };
}

/**
 * The unit an MCP tools/call reserves before the protocol layer sees it (so the quota stays exact under concurrency).
 * The tool spends it when it runs; a call the protocol layer refuses (an unknown tool, invalid arguments, a wrong
 * Accept) never runs and its unit goes back when the request ends, as does the unit of a call that ran but costs
 * nothing. Given back at most once; never throws, since it runs while a failure is being answered.
 */
export class ReservedUnit {
  #state: 'reserved' | 'spent' | 'returned' = 'reserved';

  constructor(
    private readonly db: Db,
    private readonly usage: Usage,
    private readonly log: Logger,
  ) {}

  /** The tool is about to run. False when the unit went back already (the request ended before the tool ran). */
  spend(): boolean {
    if (this.#state !== 'reserved') return false;
    this.#state = 'spent';
    return true;
  }

  /** The call costs nothing after all. */
  async giveBack(): Promise<void> {
    if (this.#state === 'returned') return;
    this.#state = 'returned';
    try {
      await giveBack(this.db, this.usage);
    } catch (error) {
      this.log.warn({ err: error, account_id: this.usage.accountId }, 'quota refund failed');
    }
  }

  /** The request has ended: a unit no tool spent goes back. */
  async releaseUnspent(): Promise<void> {
    if (this.#state === 'reserved') await this.giveBack();
  }
}

/**
 * RateLimit-Policy and RateLimit (IETF httpapi-ratelimit-headers): the monthly quota `q` over window `w`, and what
 * remains `r` until the reset in `t` seconds. Unlimited accounts get no policy: there is no limit to announce.
 */
export function rateLimitHeaders(usage: Usage, now = new Date()): Record<string, string> {
  if (usage.quota === null) return {};
  const remaining = Math.max(0, usage.quota - usage.used);
  const reset = Math.max(1, Math.ceil((usage.resetsAt.getTime() - now.getTime()) / 1000));
  return {
    'RateLimit-Policy': `"monthly";q=${usage.quota};w=${usage.windowSeconds}`,
    RateLimit: `"monthly";r=${remaining};t=${reset}`,
  };
}

export function secondsUntilReset(usage: Usage, now = new Date()): number {
  return Math.max(1, Math.ceil((usage.resetsAt.getTime() - now.getTime()) / 1000));
}

/**
 * A data account as administrators see it: its owner's e-mail, tariff, the quota in force (null: unlimited) and
 * whether it is the account's own (`custom_quota`) rather than the tariff's, this month's usage, and its keys.
 */
export interface DataAccountItem {
  id: string;
  email: string;
  tariff: Tariff;
  monthly_quota: number | null;
  custom_quota: boolean;
  used: number;
  keys: DataKeyItem[];
}

// $1 month (first day, UTC); the caller adds its WHERE, ORDER and LIMIT.
const ACCOUNTS_SQL = `
  SELECT a.id, u.email, a.tariff, COALESCE(a.monthly_quota, ${QUOTA_SQL}) AS quota, a.monthly_quota IS NOT NULL AS custom_quota,
    COALESCE(d.used, 0) AS used
  FROM data_accounts a JOIN users u ON u.id = a.id LEFT JOIN data_usage d ON d.account_id = a.id AND d.month = $1::date`;

type AccountRow = {
  id: string;
  email: string;
  tariff: Tariff;
  quota: number | null;
  custom_quota: boolean;
  used: number;
};

async function withKeys(db: Db, rows: AccountRow[]): Promise<DataAccountItem[]> {
  const keys = await listDataKeysOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    tariff: row.tariff,
    monthly_quota: row.quota,
    custom_quota: row.custom_quota,
    used: row.used,
    keys: keys.get(row.id) ?? [],
  }));
}

/** Data accounts, newest first, whose owner's e-mail contains `q` (any case); `starting_after` is an account id. */
export async function listDataAccounts(
  db: Db,
  filter: { q?: string; tariff?: Tariff; limit: number; starting_after?: string },
  now = new Date(),
): Promise<{ items: DataAccountItem[]; has_more: boolean }> {
  const pattern = filter.q === undefined ? null : `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const result = await db.query<AccountRow>(
    `${ACCOUNTS_SQL}
     WHERE ($2::text IS NULL OR u.email ILIKE $2)
       AND ($3::uuid IS NULL OR (a.created_at, a.id) < (SELECT created_at, id FROM data_accounts WHERE id = $3))
       AND ($5::text IS NULL OR a.tariff = $5)
     ORDER BY a.created_at DESC, a.id DESC LIMIT $4`,
    [calendarMonth(now).monthDay, pattern, filter.starting_after ?? null, filter.limit + 1, filter.tariff ?? null],
  );
  return { items: await withKeys(db, result.rows.slice(0, filter.limit)), has_more: result.rows.length > filter.limit };
}

export async function findDataAccount(
  db: Db,
  accountId: string,
  now = new Date(),
): Promise<DataAccountItem | undefined> {
  if (!isUuid(accountId)) return undefined;
  const result = await db.query<AccountRow>(`${ACCOUNTS_SQL} WHERE a.id = $2`, [
    calendarMonth(now).monthDay,
    accountId,
  ]);
  return (await withKeys(db, result.rows))[0];
}

/**
 * Changes the tariff and the account's own quota (null: the tariff's again). Every data request reads both afresh
 * (checkAndCount), so the change holds from the next request on every instance.
 */
export async function updateDataAccount(
  db: Db,
  accountId: string,
  changes: { tariff?: Tariff; monthly_quota?: number | null },
): Promise<{ before: DataAccountItem; after: DataAccountItem } | undefined> {
  const before = await findDataAccount(db, accountId);
  if (!before) return undefined;
  await db.query(
    `UPDATE data_accounts SET tariff = COALESCE($2, tariff),
        monthly_quota = CASE WHEN $3::boolean THEN $4::bigint ELSE monthly_quota END, updated_at = now()
      WHERE id = $1`,
    [accountId, changes.tariff ?? null, changes.monthly_quota !== undefined, changes.monthly_quota ?? null],
  );
  return { before, after: (await findDataAccount(db, accountId))! };
}
