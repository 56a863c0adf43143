// Administrator tokens: stored as SHA-256 hashes, compared in constant time; SVC_BOOTSTRAP_ADMIN_TOKEN when set.
// Every administrative request that changes something is written to the audit log under the token's name.
import type { Middleware } from 'koa';
import type { Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { auditEntryFor, recordAudit } from '../admin/audit.ts';
import { unauthorized } from '../http/problem.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';

export const ADMIN_TOKEN_PREFIX = 'adm_';

export async function createAdminToken(db: Db, name: string): Promise<string> {
  const token = newSecret(ADMIN_TOKEN_PREFIX);
  await db.query('INSERT INTO admin_tokens (name, token_hash) VALUES ($1, $2)', [name, hashSecret(token)]);
  return token;
}

export async function isAdminToken(db: Db, token: string, bootstrapToken: string | undefined): Promise<boolean> {
  return (await adminActor(db, token, bootstrapToken)) !== undefined;
}

/** Who holds this token, as the audit log names them (`bootstrap`, or `token:<name>`); undefined when it is not valid. */
export async function adminActor(db: Db, token: string, bootstrapToken: string | undefined): Promise<string | undefined> {
  const presented = hashSecret(token);
  if (bootstrapToken !== undefined && safeEqual(presented, hashSecret(bootstrapToken))) return 'bootstrap';
  const result = await db.query<{ token_hash: Buffer; name: string }>(
    'SELECT token_hash, name FROM admin_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
    [presented],
  );
  const row = result.rows[0];
  return row && safeEqual(presented, row.token_hash) ? `token:${row.name}` : undefined;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `Authorization: Bearer <admin token>`, or 401 with a bearer challenge. */
export function requireAdmin(db: Db, bootstrapToken: string | undefined): Middleware {
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('Authorization'));
    if (!token) {
      throw unauthorized('Send an administrator token as Authorization: Bearer <token>.', 'Bearer realm="admin"');
    }
    const actor = await adminActor(db, token, bootstrapToken);
    if (!actor) throw unauthorized('The administrator token is not valid.', 'Bearer realm="admin", error="invalid_token"');
    ctx.state.adminActor = actor;
    await next();
    if (READS.has(ctx.method) || ctx.status >= 400) return;
    // The action is done by now: a log that cannot be written is an alarm for the operators, not a failed request
    // (the caller would retry an action that happened).
    await recordAudit(db, auditEntryFor(ctx, actor)).catch((err: unknown) =>
      (ctx.state.log as Logger | undefined)?.error({ err, action: ctx.path }, 'the audit log could not be written'),
    );
  };
}

export function bearerToken(header: string): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
