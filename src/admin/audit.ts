// The audit log: who did what to which object, when, with the object before and after. Written for every
// administrative action that changed something; append-only in the database (a trigger refuses UPDATE and DELETE).
import type { Context } from 'koa';
import type { DbClient } from '../db.ts';

export interface AuditEntry {
  actor: string;
  action: string;
  object_type: string;
  object_id: string | null;
  before?: unknown;
  after?: unknown;
}

export interface AuditRecord extends Required<AuditEntry> {
  id: string;
  at: string;
}

/** Field names whose values never reach the log, at any depth: the log is read by every administrator. */
const SECRET_FIELD = /secret|password|token|totp|^key$|_key$|authorization/i;
const REDACTED = '[redacted]';

export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([name, field]) => [
      name,
      SECRET_FIELD.test(name) && field !== null ? REDACTED : redact(field),
    ]),
  );
}

export async function recordAudit(db: DbClient, entry: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (actor, action, object_type, object_id, before, after) VALUES ($1, $2, $3, $4, $5, $6)`,
    [entry.actor, entry.action, entry.object_type, entry.object_id, json(entry.before), json(entry.after)],
  );
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(redact(value)));

export interface AuditFilter {
  actor?: string;
  action?: string;
  object_id?: string;
  /** The id of the last record of the previous page: newer records come first, so this returns older ones. */
  starting_after?: string;
  /** Records at or after this moment, and before this one (the console's days). */
  at_gte?: string;
  at_lt?: string;
  limit: number;
}

export async function listAudit(
  db: DbClient,
  filter: AuditFilter,
): Promise<{ items: AuditRecord[]; has_more: boolean }> {
  const result = await db.query<AuditRecord>(
    `SELECT id::text, at, actor, action, object_type, object_id, before, after FROM audit_log
      WHERE ($1::text IS NULL OR actor = $1) AND ($2::text IS NULL OR action = $2) AND ($3::text IS NULL OR object_id = $3)
        AND ($4::bigint IS NULL OR id < $4)
        AND ($6::timestamptz IS NULL OR at >= $6) AND ($7::timestamptz IS NULL OR at < $7)
      ORDER BY audit_log.id DESC LIMIT $5`,
    [
      filter.actor ?? null,
      filter.action ?? null,
      filter.object_id ?? null,
      filter.starting_after ?? null,
      filter.limit + 1,
      filter.at_gte ?? null,
      filter.at_lt ?? null,
    ],
  );
  const items = result.rows.slice(0, filter.limit).map((row) => ({ ...row, at: new Date(row.at).toISOString() }));
  return { items, has_more: result.rows.length > filter.limit };
}

/**
 * What an administrative request did, as an audit entry: the route's operation is the action; the object is named by
 * the path (its type from the first segment after /admin, its id from the path parameter) or, for a creation, by the
 * id the answer carries. A handler that changes an existing object leaves it in `ctx.state.auditBefore`.
 */
export function auditEntryFor(ctx: Context, actor: string): AuditEntry {
  const params = (ctx.params ?? {}) as Record<string, string>;
  const answer =
    ctx.body !== null && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body)
      ? (ctx.body as Record<string, unknown>)
      : undefined;
  const segments = ctx.path.split('/').filter(Boolean);
  const plural = segments[1] === 'sso' ? `sso_${segments[2] ?? ''}` : (segments[1] ?? 'admin');
  const objectType = plural.replace(/ies$/, 'y').replace(/s$/, '').replace(/-/g, '_');
  const fromAnswer = answer?.id ?? answer?.client_id ?? answer?.account_id;
  const objectId = params.id ?? params.client_id ?? (typeof fromAnswer === 'string' ? fromAnswer : null);
  const action = (ctx as Context & { _matchedRouteName?: string })._matchedRouteName ?? `${ctx.method} ${ctx.path}`;
  return { actor, action, object_type: objectType, object_id: objectId, before: ctx.state.auditBefore, after: answer };
}
