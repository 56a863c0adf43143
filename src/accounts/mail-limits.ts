// How many sign-up and password-reset mails go out, so nobody can flood an inbox through our forms: per address (any
// case, hashed: no address typed by a stranger is stored) and per client address, in fixed windows kept in
// PostgreSQL. Over a limit the caller still answers 202 and sends nothing, so the answer never tells whether an
// account exists or a limit was reached.
import type { Db } from '../db.ts';
import { hashSecret } from '../secrets.ts';
import { addressKey } from './login-limits.ts';

export const MAIL_LIMITS = { perEmail: 3, perClient: 20, windowSeconds: 3600 } as const;

export type MailKind = 'signup' | 'password_reset';

/** Counts one more mail of this kind to `email` asked from `ip`: whether it may go. */
export async function mailAllowed(db: Db, kind: MailKind, email: string, ip: string): Promise<boolean> {
  const account = hashSecret(email.trim().toLowerCase()).toString('base64url');
  const limitOf: Record<string, number> = {
    [`${kind}:email:${account}`]: MAIL_LIMITS.perEmail,
    [`${kind}:client:${addressKey(ip)}`]: MAIL_LIMITS.perClient,
  };
  // Always the same order, so two requests never wait on each other's rows crosswise.
  const result = await db.query<{ subject: string; hits: number }>(
    `INSERT INTO account_mail_windows AS w (subject, hits, window_started_at)
     SELECT subject, 1, now() FROM unnest($1::text[]) AS subject
     ON CONFLICT (subject) DO UPDATE SET
       hits = CASE WHEN w.window_started_at <= now() - make_interval(secs => $2) THEN 1 ELSE w.hits + 1 END,
       window_started_at = CASE WHEN w.window_started_at <= now() - make_interval(secs => $2) THEN now() ELSE w.window_started_at END
     RETURNING subject, hits`,
    [Object.keys(limitOf).sort(), MAIL_LIMITS.windowSeconds],
  );
  if (Math.random() < 0.01)
    await db
      .query(`DELETE FROM account_mail_windows WHERE window_started_at < now() - interval '1 day'`)
      .catch(() => {});
  return result.rows.every((row) => row.hits <= limitOf[row.subject]);
}
