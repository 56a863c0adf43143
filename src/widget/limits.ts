// Abuse limits on widget deal creation. The public key is public, so anyone can call it: cap creations per key and
// per client address, in fixed windows kept in PostgreSQL (as the login limits are), so that every main server
// instance counts together and the limit holds however many run. Every attempt counts, refused ones included, so a
// flood cannot outrun the window.
import type { Db } from '../db.ts';
import { Problem, problem } from '../http/problem.ts';
import { addressKey } from '../accounts/login-limits.ts';

/** The subject of the per-address limit: IPv4 as is, IPv6 by its /64 (one subscriber usually holds a whole /64). */
export const addressSubject = (ip: string) => `address:${addressKey(ip)}`;
export const keySubject = (marketplaceId: string) => `key:${marketplaceId}`;
/** Lookups (every page load of the widget) have windows of their own: reloading never uses up the creations. */
export const lookupSubject = (ip: string) => `lookup:${addressKey(ip)}`;

/** Counts one attempt for `subject`; the seconds until its window closes when that exceeds `limit`, else undefined. */
export async function countCreation(
  db: Db,
  subject: string,
  limit: number,
  windowSeconds: number,
): Promise<number | undefined> {
  // One statement: concurrent attempts on any instance each get their own count, so never more than `limit` pass.
  const result = await db.query<{ hits: number; retry_after: number }>(
    `INSERT INTO widget_create_windows AS w (subject, hits, window_started_at) VALUES ($1, 1, now())
     ON CONFLICT (subject) DO UPDATE SET
       hits = CASE WHEN w.window_started_at <= now() - make_interval(secs => $2) THEN 1 ELSE w.hits + 1 END,
       window_started_at = CASE WHEN w.window_started_at <= now() - make_interval(secs => $2) THEN now() ELSE w.window_started_at END
     RETURNING hits, greatest(1, ceil(extract(epoch FROM w.window_started_at + make_interval(secs => $2) - now())))::int AS retry_after`,
    [subject, windowSeconds],
  );
  // Now and then, drop windows long closed, so the table follows current traffic only.
  if (Math.random() < 0.01) {
    await db
      .query(`DELETE FROM widget_create_windows WHERE window_started_at < now() - interval '1 day'`)
      .catch(() => {});
  }
  const row = result.rows[0];
  return row.hits > limit ? row.retry_after : undefined;
}

export function rateLimited(retryAfterSeconds: number, what: string, calls = 'creations'): Problem {
  return problem('rate_limited', `Too many widget deal ${calls} ${what}; retry in ${retryAfterSeconds} s.`, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}
