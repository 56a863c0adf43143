// Marketplaces and their keys: the secret mk_ key for server calls, the public pk_ key for the widget.
// Keys are stored only as SHA-256 hashes and found by hash, then compared in constant time.
import type { Middleware } from 'koa';
import type { PoolClient } from 'pg';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import { unauthorized } from '../http/problem.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import type { FeeMoment } from '../money/fee.ts';
import type { LiveProvider } from '../escrow/providers.ts';

export const SECRET_KEY_PREFIX = 'mk_';
export const PUBLIC_KEY_PREFIX = 'pk_';

export type MarketplaceMode = 'sandbox' | 'live';

export interface Marketplace {
  id: string;
  name: string;
  mode: MarketplaceMode;
  active: boolean;
  sso_redirect_uri: string | null;
  allowed_origins: string[];
  /** The fee applied to each new deal's amount (src/money/fee.ts); its numbers as PostgreSQL writes them, exact. */
  fee_schedule: StoredFeeSchedule;
  /** When a deal's fee moves to the marketplace: when the money is held, or when the deal closes. */
  fee_moment: FeeMoment;
  /** The live acquirer of new deals (a sandbox marketplace's deals are the sandbox's whatever this says). */
  provider: LiveProvider;
  /** Days the buyer has after delivery to open a dispute before the money is released (0: at delivery). */
  inspection_days: number;
  created_at: Date;
}

/** The fee schedule's parts as decimal text ("2.50"), null where a part is not set. */
export interface StoredFeeSchedule {
  percent: string | null;
  fixed: string | null;
  min: string | null;
  max: string | null;
}

export interface NewMarketplace {
  name: string;
  mode: MarketplaceMode;
  sso_redirect_uri?: string;
  allowed_origins?: string[];
}

/**
 * A Marketplace's columns, of the table aliased `alias` (with its dot) or not aliased. The fee schedule's numeric
 * columns are read as text: money is never a float here.
 */
export function marketplaceColumns(alias = ''): string {
  const a = alias;
  return `${a}id, ${a}name, ${a}mode, ${a}active, ${a}sso_redirect_uri, ${a}allowed_origins, ${a}created_at,
    json_build_object('percent', ${a}fee_percent::text, 'fixed', ${a}fee_fixed::text, 'min', ${a}fee_min::text, 'max', ${a}fee_max::text) AS fee_schedule,
    ${a}fee_moment, ${a}provider, ${a}inspection_days`;
}
const COLUMNS = marketplaceColumns();

/** `alongside` runs in the same transaction (the SSO client of `sso_redirect_uri`), so both exist or neither. */
export async function createMarketplace<T = undefined>(
  db: Db,
  input: NewMarketplace,
  alongside?: (client: PoolClient, marketplace: Marketplace) => Promise<T>,
): Promise<{ marketplace: Marketplace; secretKey: string; publicKey: string; extra: T | undefined }> {
  const secretKey = newKey('secret');
  const publicKey = newKey('public');
  const { marketplace, extra } = await inTransaction(db, async (client) => {
    const created = await client.query<Marketplace>(
      `INSERT INTO marketplaces (name, mode, sso_redirect_uri, allowed_origins) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
      [input.name, input.mode, input.sso_redirect_uri ?? null, input.allowed_origins ?? []],
    );
    const row = created.rows[0];
    await insertKey(client, row.id, 'secret', secretKey);
    await insertKey(client, row.id, 'public', publicKey);
    return { marketplace: row, extra: await alongside?.(client, row) };
  });
  return { marketplace, secretKey, publicKey, extra };
}

export type KeyKind = 'secret' | 'public';

/** How many characters of a key the console shows to tell keys apart: the kind's prefix and 8 of its random ones. */
const SHOWN_KEY_LENGTH = 11;

/** Stores a new key of the marketplace: its hash, and its first characters for the console. */
export async function insertKey(client: DbClient, marketplaceId: string, kind: KeyKind, key: string): Promise<void> {
  await client.query('INSERT INTO marketplace_keys (key_hash, marketplace_id, kind, prefix) VALUES ($1, $2, $3, $4)', [
    hashSecret(key),
    marketplaceId,
    kind,
    key.slice(0, SHOWN_KEY_LENGTH),
  ]);
}

export function newKey(kind: KeyKind): string {
  return kind === 'secret' ? newSecret(SECRET_KEY_PREFIX) : newSecret(PUBLIC_KEY_PREFIX, 24);
}

export async function findMarketplace(db: Db, id: string): Promise<Marketplace | undefined> {
  const result = await db.query<Marketplace>(`SELECT ${COLUMNS} FROM marketplaces WHERE id = $1`, [id]);
  return result.rows[0];
}

/**
 * The active marketplace that owns this key of this kind, or undefined. Asked of PostgreSQL on every call, never
 * cached in the process: a revoked or expired key or a deactivated marketplace must be refused by every instance at
 * once (by the database's clock, so instances agree), and the lookup is one primary-key probe joined to one row.
 */
export async function marketplaceByKey(db: Db, key: string, kind: KeyKind): Promise<Marketplace | undefined> {
  const presented = hashSecret(key);
  const result = await db.query<Marketplace & { key_hash: Buffer }>(
    `SELECT k.key_hash, ${marketplaceColumns('m.')}
       FROM marketplace_keys k JOIN marketplaces m ON m.id = k.marketplace_id
      WHERE k.key_hash = $1 AND k.kind = $2 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
        AND m.active`,
    [presented, kind],
  );
  const row = result.rows[0];
  if (!row || !safeEqual(presented, row.key_hash)) return undefined;
  const { key_hash: _hash, ...marketplace } = row;
  return marketplace;
}

/** `X-Svc-Key: mk_…` → `ctx.state.marketplace`, or 401. */
export function requireSecretKey(db: Db): Middleware {
  return async (ctx, next) => {
    const key = ctx.get('X-Svc-Key').trim();
    if (!key) throw unauthorized('Send the marketplace secret key in the X-Svc-Key header.');
    if (key.startsWith(PUBLIC_KEY_PREFIX)) {
      throw unauthorized('This is the public pk_ key; server-to-server calls need the secret mk_ key.');
    }
    const marketplace = key.startsWith(SECRET_KEY_PREFIX) ? await marketplaceByKey(db, key, 'secret') : undefined;
    if (!marketplace) throw unauthorized('The X-Svc-Key is not a valid secret key of an active marketplace.');
    ctx.state.marketplace = marketplace;
    await next();
  };
}
