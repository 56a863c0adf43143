// Who may administer, and as whom. Three kinds of adm_ token, all stored as SHA-256 hashes and compared in constant
// time: SVC_BOOTSTRAP_ADMIN_TOKEN (from the environment), named tokens (made by scripts such as `npm start`'s demo),
// and an administrator's sign-in (`POST /admin/login` or the console), which carries that person's role and expires.
// The role is read on every request from PostgreSQL, so disabling someone or changing their role holds at once on
// every instance. Every administrative request that changes something is written to the audit log as its actor.
import type { Context, Middleware } from 'koa';
import type { Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { Problem, problem, unauthorized } from '../http/problem.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { auditEntryFor, recordAudit } from './audit.ts';

export const ADMIN_TOKEN_PREFIX = 'adm_';
export const ADMIN_ROLES = ['admin', 'arbiter', 'support'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

/** Who is asking: the audit log's name for them, their role, and (an administrator's sign-in) which person it is. */
export interface AdminActor {
  actor: string;
  role: AdminRole;
  administratorId?: string;
}

export async function createAdminToken(db: Db, name: string): Promise<string> {
  const token = newSecret(ADMIN_TOKEN_PREFIX);
  await db.query('INSERT INTO admin_tokens (name, token_hash) VALUES ($1, $2)', [name, hashSecret(token)]);
  return token;
}

export async function isAdminToken(db: Db, token: string, bootstrapToken: string | undefined): Promise<boolean> {
  return (await adminActor(db, token, bootstrapToken)) !== undefined;
}

/**
 * The holder of this token, or undefined when it is not valid: `bootstrap` and named tokens (`token:<name>`) act as
 * `admin`; an administrator's sign-in acts as their e-mail with their role while they are enabled and it is fresh.
 */
export async function adminActor(
  db: Db,
  token: string,
  bootstrapToken: string | undefined,
): Promise<AdminActor | undefined> {
  const presented = hashSecret(token);
  if (bootstrapToken !== undefined && safeEqual(presented, hashSecret(bootstrapToken)))
    return { actor: 'bootstrap', role: 'admin' };
  const result = await db.query<{
    token_hash: Buffer;
    name: string;
    administrator_id: string | null;
    email: string | null;
    role: AdminRole | null;
  }>(
    `SELECT t.token_hash, t.name, t.administrator_id, u.email, a.role
       FROM admin_tokens t
       LEFT JOIN administrators a ON a.user_id = t.administrator_id
       LEFT JOIN users u ON u.id = a.user_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
        AND (t.administrator_id IS NULL OR (a.disabled_at IS NULL AND a.totp_confirmed_at IS NOT NULL))`,
    [presented],
  );
  const row = result.rows[0];
  if (!row || !safeEqual(presented, row.token_hash)) return undefined;
  if (row.administrator_id === null) return { actor: `token:${row.name}`, role: 'admin' };
  return { actor: row.email!, role: row.role!, administratorId: row.administrator_id };
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * `Authorization: Bearer <admin token>`, or 401 with a bearer challenge. Every role reads; a change needs one of
 * `may` (by default `admin` alone), or it is 403 `forbidden`. Changes that succeed are written to the audit log.
 */
export function requireAdmin(
  db: Db,
  bootstrapToken: string | undefined,
  options: { may?: readonly AdminRole[] } = {},
): Middleware {
  const may = options.may ?? ['admin'];
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('Authorization'));
    if (!token) {
      throw unauthorized('Send an administrator token as Authorization: Bearer <token>.', 'Bearer realm="admin"');
    }
    const actor = await adminActor(db, token, bootstrapToken);
    if (!actor)
      throw unauthorized('The administrator token is not valid.', 'Bearer realm="admin", error="invalid_token"');
    const changes = !READS.has(ctx.method);
    if (changes && !may.includes(actor.role)) throw forbiddenFor(actor.role);
    ctx.state.admin = actor;
    await next();
    // A replayed answer (Idempotency-Key) changed nothing this time: its first attempt is in the log.
    if (!changes || ctx.status >= 400 || ctx.response.get('Idempotent-Replayed')) return;
    await audit(ctx, db, actor.actor);
  };
}

export function forbiddenFor(role: AdminRole): Problem {
  return problem('forbidden', `The ${role} role may not do this; ask an administrator with the admin role.`);
}

/**
 * Writes the audit record of a change that is done. A log that cannot be written is an alarm for the operators, not a
 * failed request: the caller would retry an action that happened.
 */
async function audit(ctx: Context, db: Db, actor: string): Promise<void> {
  await recordAudit(db, auditEntryFor(ctx, actor)).catch((err: unknown) =>
    (ctx.state.log as Logger | undefined)?.error({ err, action: ctx.path }, 'the audit log could not be written'),
  );
}

export function bearerToken(header: string): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
