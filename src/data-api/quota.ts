// The monthly quota: one atomic statement finds the key's account and counts the request, so with N requests left
// exactly N concurrent requests pass. The upsert's WHERE is re-checked on the row it locks (READ COMMITTED), so two
// racing requests can never both take the last unit.
import type { Db } from '../db.ts';
import { hashSecret } from '../secrets.ts';
import { TARIFF_QUOTAS, type Tariff } from './keys.ts';

export interface Usage {
  accountId: string;
  tariff: Tariff;
  /** null: unlimited. */
  quota: number | null;
  /** Requests counted this month, this one included when it was counted. */
  used: number;
  /** False when the request was refused for the quota. */
  allowed: boolean;
  /** Start of the next calendar month (UTC). */
  resetsAt: Date;
  /** Length of this calendar month, the window of the policy. */
  windowSeconds: number;
}

const QUOTA_SQL = `CASE a.tariff ${Object.entries(TARIFF_QUOTAS)
  .map(([tariff, quota]) => `WHEN '${tariff}' THEN ${quota ?? 'NULL'}`)
  .join(' ')} END`;

// $1 key hash, $2 month (first day, UTC), $3 how many units to take (0: only read).
const CHECK_AND_COUNT = `
  WITH account AS (
    SELECT a.id, a.tariff, COALESCE(a.monthly_quota, ${QUOTA_SQL}) AS quota
    FROM data_keys k JOIN data_accounts a ON a.id = k.account_id
    WHERE k.key_hash = $1 AND k.revoked_at IS NULL),
  counted AS (
    INSERT INTO data_usage AS u (account_id, month, used)
    SELECT id, $2::date, $3::bigint FROM account WHERE $3::bigint > 0 AND (quota IS NULL OR quota >= $3::bigint)
    ON CONFLICT (account_id, month) DO UPDATE SET used = u.used + excluded.used
      WHERE (SELECT quota FROM account) IS NULL OR u.used + excluded.used <= (SELECT quota FROM account)
    RETURNING used)
  SELECT a.id, a.tariff, a.quota, (SELECT used FROM counted) AS counted,
    (SELECT used FROM data_usage WHERE account_id = a.id AND month = $2::date) AS before
  FROM account a`;

/** The account of an active key with its usage, taking `units` requests from the quota when they fit. */
export async function checkAndCount(db: Db, key: string, units: number, now = new Date()): Promise<Usage | undefined> {
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const result = await db.query<{ id: string; tariff: Tariff; quota: number | null; counted: number | null; before: number | null }>(
    CHECK_AND_COUNT,
    [hashSecret(key), month.toISOString().slice(0, 10), units],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const allowed = units === 0 || row.counted !== null;
  return {
    accountId: row.id,
    tariff: row.tariff,
    quota: row.quota,
    used: row.counted ?? row.before ?? 0,
    allowed,
    resetsAt,
    windowSeconds: (resetsAt.getTime() - month.getTime()) / 1000,
  };
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
