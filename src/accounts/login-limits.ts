// Limits password guessing (cabinet sign-in and the SSO login form), per account and per client address, in fixed windows kept in
// PostgreSQL (so every server instance counts together). An attempt is counted before the password is checked, so
// concurrent guesses cannot slip past the limit; a correct password takes its attempt back.
import { isIPv6 } from 'node:net';
import type { Db } from '../db.ts';
import { hashSecret } from '../secrets.ts';

export interface LoginLimits {
  perAccount: number;
  perAddress: number;
  windowSeconds: number;
}

export interface LoginSubjects {
  account: string;
  address: string;
}

/** The e-mail (any case, hashed: no addresses typed by strangers are stored) and the client's address. */
export function loginSubjects(email: string, ip: string): LoginSubjects {
  return {
    account: `account:${hashSecret(email.trim().toLowerCase()).toString('base64url')}`,
    address: `address:${addressKey(ip)}`,
  };
}

/** Counts the attempt; `retryAfter` (seconds) when either limit is exceeded, and then the password must not be checked. */
export async function countLoginAttempt(db: Db, subjects: LoginSubjects, limits: LoginLimits): Promise<{ retryAfter?: number }> {
  // Always the same order, so two requests never wait on each other's rows crosswise.
  const result = await db.query<{ subject: string; attempts: number; retry_after: number }>(
    `INSERT INTO sso_login_attempts AS a (subject, attempts, window_started_at)
     SELECT subject, 1, now() FROM unnest($1::text[]) AS subject
     ON CONFLICT (subject) DO UPDATE SET
       attempts = CASE WHEN a.window_started_at <= now() - make_interval(secs => $2) THEN 1 ELSE a.attempts + 1 END,
       window_started_at = CASE WHEN a.window_started_at <= now() - make_interval(secs => $2) THEN now() ELSE a.window_started_at END
     RETURNING subject, attempts, greatest(1, ceil(extract(epoch FROM a.window_started_at + make_interval(secs => $2) - now())))::int AS retry_after`,
    [[subjects.account, subjects.address].sort(), limits.windowSeconds],
  );
  const over = result.rows.filter((row) => row.attempts > (row.subject === subjects.account ? limits.perAccount : limits.perAddress));
  return over.length > 0 ? { retryAfter: Math.max(...over.map((row) => row.retry_after)) } : {};
}

/** A correct password: the account starts afresh, and the address gets this attempt back. */
export async function loginSucceeded(db: Db, subjects: LoginSubjects): Promise<void> {
  await db.query(
    `WITH forget AS (DELETE FROM sso_login_attempts WHERE subject = $1)
     UPDATE sso_login_attempts SET attempts = greatest(0, attempts - 1) WHERE subject = $2`,
    [subjects.account, subjects.address],
  );
  // Now and then, drop windows long closed.
  if (Math.random() < 0.01) await db.query(`DELETE FROM sso_login_attempts WHERE window_started_at < now() - interval '1 day'`).catch(() => {});
}

/** IPv4 as is; IPv6 by its /64, since one subscriber usually holds a whole /64. */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups] : headGroups;
  return `${groups.slice(0, 4).map((group) => group.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
