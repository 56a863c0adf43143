// Limits password guessing (cabinet sign-in and the SSO login form) in fixed windows kept in PostgreSQL (so every
// server instance counts together). Three counters, so that strangers' wrong passwords never lock the owner out:
// - per (account, address): the owner's typos, and one stranger guessing one account, stop here;
// - per address: one machine guessing many accounts;
// - per account: only a high ceiling against guessing from many addresses at once (NIST SP 800-63B §5.2.2 asks for
//   at most 100 failed attempts), counted only for attempts the first two let through, so one stranger stopped at
//   their own limits cannot spend it: the owner's right password from another address still works.
// An attempt is counted before the password is checked, so concurrent guesses cannot slip past a limit; a correct
// password takes its attempt back.
import { isIPv6 } from 'node:net';
import type { Config } from '../config.ts';
import type { Db } from '../db.ts';
import { hashSecret } from '../secrets.ts';

export interface LoginLimits {
  perAccountAddress: number;
  perAddress: number;
  perAccount: number;
  windowSeconds: number;
}

export function loginLimits(config: Config): LoginLimits {
  return {
    perAccountAddress: config.SSO_LOGIN_ACCOUNT_ADDRESS_LIMIT,
    perAddress: config.SSO_LOGIN_ADDRESS_LIMIT,
    perAccount: config.SSO_LOGIN_ACCOUNT_LIMIT,
    windowSeconds: config.SSO_LOGIN_WINDOW_SECONDS,
  };
}

export interface LoginSubjects {
  account: string;
  address: string;
  accountAddress: string;
}

/** The e-mail (any case, hashed: no addresses typed by strangers are stored) and the client's address. */
export function loginSubjects(email: string, ip: string): LoginSubjects {
  const account = hashSecret(email.trim().toLowerCase()).toString('base64url');
  const address = addressKey(ip);
  return {
    account: `account:${account}`,
    address: `address:${address}`,
    accountAddress: `account-address:${account}/${address}`,
  };
}

/** Counts the attempt; `retryAfter` (seconds) when a limit is exceeded, and then the password must not be checked. */
export async function countLoginAttempt(
  db: Db,
  subjects: LoginSubjects,
  limits: LoginLimits,
): Promise<{ retryAfter?: number }> {
  const own = await count(
    db,
    { [subjects.accountAddress]: limits.perAccountAddress, [subjects.address]: limits.perAddress },
    limits.windowSeconds,
  );
  if (own.retryAfter) return own;
  return count(db, { [subjects.account]: limits.perAccount }, limits.windowSeconds);
}

/** Adds one attempt to each subject's window: the longest wait of those now over their limit, if any. */
async function count(db: Db, limitOf: Record<string, number>, windowSeconds: number): Promise<{ retryAfter?: number }> {
  // Always the same order, so two requests never wait on each other's rows crosswise.
  const result = await db.query<{ subject: string; attempts: number; retry_after: number }>(
    `INSERT INTO sso_login_attempts AS a (subject, attempts, window_started_at)
     SELECT subject, 1, now() FROM unnest($1::text[]) AS subject
     ON CONFLICT (subject) DO UPDATE SET
       attempts = CASE WHEN a.window_started_at <= now() - make_interval(secs => $2) THEN 1 ELSE a.attempts + 1 END,
       window_started_at = CASE WHEN a.window_started_at <= now() - make_interval(secs => $2) THEN now() ELSE a.window_started_at END
     RETURNING subject, attempts, greatest(1, ceil(extract(epoch FROM a.window_started_at + make_interval(secs => $2) - now())))::int AS retry_after`,
    [Object.keys(limitOf).sort(), windowSeconds],
  );
  const over = result.rows.filter((row) => row.attempts > limitOf[row.subject]);
  return over.length > 0 ? { retryAfter: Math.max(...over.map((row) => row.retry_after)) } : {};
}

/**
 * A correct password: the account starts afresh at this address; the address and the account's ceiling get this
 * attempt back (not more, so guessing from elsewhere is not forgiven by the owner's sign-in).
 */
export async function loginSucceeded(db: Db, subjects: LoginSubjects): Promise<void> {
  await db.query(
    `WITH forget AS (DELETE FROM sso_login_attempts WHERE subject = $1)
     UPDATE sso_login_attempts SET attempts = greatest(0, attempts - 1) WHERE subject = ANY($2::text[])`,
    [subjects.accountAddress, [subjects.account, subjects.address].sort()],
  );
  // Now and then, drop windows long closed.
  if (Math.random() < 0.01)
    await db.query(`DELETE FROM sso_login_attempts WHERE window_started_at < now() - interval '1 day'`).catch(() => {});
}

/** IPv4 as is; IPv6 by its /64, since one subscriber usually holds a whole /64. */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
