// Idempotency-Key on money-moving requests: a retry of the same request within 24 hours answers the first attempt's
// status and body (Idempotent-Replayed: true) instead of moving money again, also when that attempt answered 503 or
// timed out after the deal's workflow had applied it. The first answer is kept in PostgreSQL per caller (scope) and key;
// the key also reaches the workflow as the Temporal update id (updateDeal), so a re-run of an attempt whose answer was
// lost is the same Update, and Temporal answers that Update's outcome instead of applying it twice.
//
// What is kept follows Stripe's idempotent requests: every answer the endpoint produced once it began (2xx, and 4xx
// refusals such as deal_closed) is replayed; a request refused by validation (400 validation_failed, before or inside
// the verb) keeps nothing, so a corrected request may use the same key; an attempt that failed with 5xx or an
// unexpected error keeps nothing final either: a retry runs it again under the same update id.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { Problem, problem } from './problem.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** How long an answer is kept and replayed. */
const RETENTION = '24 hours';
/**
 * How long an attempt holds its key: longer than updateDeal's 30 s deadline, so an attempt still running is never
 * run twice, and a retry after an attempt that died or answered 503 runs again once it passes.
 */
const LOCK_SECONDS = 35;
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The idempotency of the request being handled, as updateDeal reads it. */
interface Attempt {
  /** Stands for (scope, key, the row's creation): the base of the Temporal update ids of this request. */
  base: string;
  /** True when an earlier attempt with this key may have sent its update already. */
  retry: boolean;
}
const attempts = new AsyncLocalStorage<Attempt>();

/**
 * The Temporal update id for this update of the request being handled under an Idempotency-Key, or undefined without
 * one: deterministic, so the same request sends the same Update again and Temporal answers its first outcome.
 */
/**
 * A UUID that stands for this request's key and `purpose` (the same on every retry under the key), for a record the
 * change makes and an acquirer keys by it (a partial refund); a random one without a key.
 */
export function idempotentUuid(purpose: string): string {
  const attempt = attempts.getStore();
  if (!attempt) return randomUUID();
  const hex = createHash('sha256').update(`${attempt.base}:${purpose}`).digest('hex');
  // Laid out as a version 4, variant 1 UUID, so every uuid column and check takes it.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function idempotentUpdate(updateName: string): { updateId: string; retry: boolean } | undefined {
  const attempt = attempts.getStore();
  return attempt && { updateId: `idem:${attempt.base}:${updateName}`, retry: attempt.retry };
}

export interface Idempotency {
  run(ctx: Context, body: unknown, handle: () => Promise<void> | void): Promise<void>;
}

interface KeyRow {
  method: string;
  path: string;
  body_sha256: string;
  created_at: Date;
  locked: boolean;
  status: number | null;
  content_type: string | null;
  location: string | null;
  body: string | null;
}

/** Who the key belongs to: keys of different callers never meet. */
function scopeOf(ctx: Context): string | undefined {
  const state = ctx.state as Record<string, any>;
  if (state.widget?.snapshot?.deal?.id) return `widget:${state.widget.snapshot.deal.id}`;
  if (state.marketplace?.id) return `marketplace:${state.marketplace.id}`;
  if (state.user?.id) return `user:${state.user.id}`;
  if (state.admin?.actor) return `admin:${state.admin.actor}`;
  return undefined;
}

function refuseKey(message: string): Problem {
  return problem('validation_failed', `The request header is invalid: ${IDEMPOTENCY_HEADER}: ${message}`, {
    errors: [{ path: IDEMPOTENCY_HEADER, message }],
  });
}

function readKey(ctx: Context): string | undefined {
  const raw = ctx.req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  if (raw === undefined) return undefined;
  const key = Array.isArray(raw) ? raw.join(', ') : raw;
  if (key.length === 0) throw refuseKey('must not be empty');
  if (key.length > 255) throw refuseKey('must be at most 255 characters');
  if (!KEY_PATTERN.test(key)) throw refuseKey('must be printable ASCII characters (a UUID is a good key)');
  return key;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function createIdempotency(db: Db, options: { baseUrl: () => string; logger: Logger }): Idempotency {
  let lastCleaning = 0;
  const clean = () => {
    if (Date.now() - lastCleaning < 10 * 60_000) return;
    lastCleaning = Date.now();
    db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '${RETENTION}'`).catch(
      (error: unknown) => {
        options.logger.warn({ err: error }, 'could not clean old idempotency keys');
      },
    );
  };

  const columns = `method, path, body_sha256, created_at, locked_until > now() AS locked, status, content_type, location, body`;

  /** Takes the key for this attempt: the row (fresh or taken over), or the row another attempt holds or answered. */
  async function take(scope: string, key: string, method: string, path: string, bodySha: string) {
    // A row older than 24 hours is no more: the key starts afresh.
    const inserted = await db.query<KeyRow>(
      `INSERT INTO idempotency_keys (scope, key, method, path, body_sha256, locked_until)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
       ON CONFLICT (scope, key) DO UPDATE SET method = EXCLUDED.method, path = EXCLUDED.path, body_sha256 = EXCLUDED.body_sha256,
         created_at = now(), locked_until = EXCLUDED.locked_until, status = NULL, content_type = NULL, location = NULL, body = NULL, completed_at = NULL
         WHERE idempotency_keys.created_at < now() - interval '${RETENTION}'
       RETURNING ${columns}`,
      [scope, key, method, path, bodySha, LOCK_SECONDS],
    );
    if (inserted.rows[0]) return { row: inserted.rows[0], mine: true, retry: false };
    const existing = (
      await db.query<KeyRow>(`SELECT ${columns} FROM idempotency_keys WHERE scope = $1 AND key = $2`, [scope, key])
    ).rows[0];
    if (!existing) return take(scope, key, method, path, bodySha);
    if (
      existing.method !== method ||
      existing.path !== path ||
      existing.body_sha256 !== bodySha ||
      existing.status !== null ||
      existing.locked
    ) {
      return { row: existing, mine: false, retry: false };
    }
    // The earlier attempt ended without an answer to keep (5xx, a timeout, a process that died): run it again.
    const taken = await db.query<KeyRow>(
      `UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => $3)
       WHERE scope = $1 AND key = $2 AND status IS NULL AND locked_until <= now() RETURNING ${columns}`,
      [scope, key, LOCK_SECONDS],
    );
    return taken.rows[0]
      ? { row: taken.rows[0], mine: true, retry: true }
      : { row: existing, mine: false, retry: false };
  }

  return {
    async run(ctx, body, handle) {
      const key = readKey(ctx);
      const scope = key === undefined ? undefined : scopeOf(ctx);
      if (key === undefined || scope === undefined) return void (await handle());
      clean();
      const method = ctx.method;
      const path = ctx.path;
      const bodySha = sha256(JSON.stringify(body ?? null));
      const { row, mine, retry } = await take(scope, key, method, path, bodySha);
      if (!mine) {
        if (row.method !== method || row.path !== path || row.body_sha256 !== bodySha) {
          throw problem(
            'idempotency_key_reused',
            `This ${IDEMPOTENCY_HEADER} was used for another request (${row.method} ${row.path}${row.path === path ? ' with another body' : ''}) within the last 24 hours; send a new key for a new request.`,
          );
        }
        if (row.status === null) {
          throw problem(
            'idempotency_key_in_use',
            `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry in a second.`,
            {
              headers: { 'Retry-After': '1' },
            },
          );
        }
        ctx.status = row.status;
        if (row.location) ctx.set('Location', row.location);
        ctx.body = row.body === null ? null : JSON.parse(row.body);
        if (row.content_type) ctx.type = row.content_type;
        if (row.body === null && row.status < 300 && row.status !== 204) ctx.body = '';
        ctx.set('Idempotent-Replayed', 'true');
        return;
      }

      const base = idempotencyBase(scope, key, row.created_at);
      const store = (status: number, contentType: string | null, location: string | null, answer: string | null) =>
        db.query(
          `UPDATE idempotency_keys SET status = $3, content_type = $4, location = $5, body = $6, completed_at = now()
           WHERE scope = $1 AND key = $2`,
          [scope, key, status, contentType, location, answer],
        );
      try {
        await attempts.run({ base, retry }, async () => handle());
      } catch (error) {
        if (error instanceof Problem && error.status < 500) {
          if (error.code === 'validation_failed') {
            // As Stripe: a request refused by validation keeps nothing; the key may be used again.
            await db.query('DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2', [scope, key]);
          } else {
            await store(error.status, 'application/problem+json', null, JSON.stringify(error.body(options.baseUrl())));
          }
        } else {
          // Nothing final: a retry runs it again, under the same update id, once this attempt has let go.
          await db
            .query('UPDATE idempotency_keys SET locked_until = now() WHERE scope = $1 AND key = $2', [scope, key])
            .catch(() => {});
        }
        throw error;
      }
      const answer = ctx.body;
      const json = answer !== null && answer !== undefined && typeof answer === 'object' && !Buffer.isBuffer(answer);
      const location = ctx.response.get('Location') || null;
      await store(ctx.status, json ? 'application/json' : null, location, json ? JSON.stringify(answer) : null);
    },
  };
}

const perServices = new WeakMap<object, Idempotency>();

/** The Idempotency of these services (one per process's services, for the route option `idempotent`). */
export function idempotency(services: { db: Db; logger: Logger; config: { BASE_URL: string } }): Idempotency {
  let found = perServices.get(services);
  if (!found) {
    found = createIdempotency(services.db, { baseUrl: () => services.config.BASE_URL, logger: services.logger });
    perServices.set(services, found);
  }
  return found;
}

/** Runs `work` as an attempt of a request under an Idempotency-Key would: for tests that drive a verb directly. */
export function asIdempotentAttempt<T>(attempt: Attempt, work: () => Promise<T>): Promise<T> {
  return attempts.run(attempt, work);
}

/** The base of the Temporal update ids of a key's requests (scope, key, and when its row was made). */
export function idempotencyBase(scope: string, key: string, createdAt: Date): string {
  return sha256(`${scope}\n${key}\n${createdAt.getTime()}`);
}
