// Marketplaces and their keys: the secret mk_ key for server calls, the public pk_ key for the widget.
// Keys are stored only as SHA-256 hashes and found by hash, then compared in constant time.
import type { Context, Middleware } from 'koa';
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

/** A key that works now, by the database's clock: not revoked, not expired, of an active marketplace (`k` and `m`). */
const LIVE_KEY = `k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()) AND m.active`;

/** What a lookup of a key found: its marketplace, and the version of the marketplace's row it read. */
interface FoundKey {
  hash: Buffer;
  marketplace: Marketplace;
  /** The row's xmin, which every UPDATE of the row changes: the marketplace exactly as read while it is the same. */
  version: string;
}

/**
 * The active marketplace that owns the key of this hash and kind, with its row's version. Asked of PostgreSQL, by the
 * database's clock, so instances agree: one primary-key probe joined to one row, prepared once per connection.
 */
async function findKey(db: Db, presented: Buffer, kind: KeyKind): Promise<FoundKey | undefined> {
  const result = await db.query<Marketplace & { key_hash: Buffer; version: string }>({
    name: 'marketplaceByKey',
    text: `SELECT k.key_hash, m.xmin::text AS version, ${marketplaceColumns('m.')}
             FROM marketplace_keys k JOIN marketplaces m ON m.id = k.marketplace_id
            WHERE k.key_hash = $1 AND k.kind = $2 AND ${LIVE_KEY}`,
    values: [presented, kind],
  });
  const row = result.rows[0];
  if (!row || !safeEqual(presented, row.key_hash)) return undefined;
  const { key_hash: _hash, version, ...marketplace } = row;
  return { hash: presented, marketplace, version };
}

/**
 * The active marketplace that owns this key of this kind, or undefined. Asked of PostgreSQL on every call: a revoked or
 * expired key or a deactivated marketplace must be refused by every instance at once.
 */
export async function marketplaceByKey(db: Db, key: string, kind: KeyKind): Promise<Marketplace | undefined> {
  return (await findKey(db, hashSecret(key), kind))?.marketplace;
}

/** The secret key of the X-Svc-Key header, or 401 when there is none or it is another kind of key. */
function presentedSecretKey(ctx: Context): string {
  const key = ctx.get('X-Svc-Key').trim();
  if (!key) throw unauthorized('Send the marketplace secret key in the X-Svc-Key header.');
  if (key.startsWith(PUBLIC_KEY_PREFIX)) {
    throw unauthorized('This is the public pk_ key; server-to-server calls need the secret mk_ key.');
  }
  return key;
}

const invalidSecretKey = () => unauthorized('The X-Svc-Key is not a valid secret key of an active marketplace.');

/** `X-Svc-Key: mk_…` → `ctx.state.marketplace`, or 401. */
export function requireSecretKey(db: Db): Middleware {
  return async (ctx, next) => {
    const key = presentedSecretKey(ctx);
    const marketplace = key.startsWith(SECRET_KEY_PREFIX) ? await marketplaceByKey(db, key, 'secret') : undefined;
    if (!marketplace) throw invalidSecretKey();
    ctx.state.marketplace = marketplace;
    await next();
  };
}

/**
 * How long a server may go on using a secret key's marketplace as one lookup read it, and for how many keys. Never as
 * proof: see RememberedKey. The age bounds the memory of keys no longer used, and keeps a row's version (its xmin, a
 * 32-bit transaction id) far from ever being reused while remembered.
 */
const REMEMBER_MS = 60_000;
const REMEMBER_KEYS = 1_000;

/** The keys one server looked up lately, by hash: what it read, and when. */
class KeyMemory {
  private readonly keys = new Map<string, FoundKey & { at: number }>();

  recall(hash: Buffer): FoundKey | undefined {
    const known = this.keys.get(hash.toString('base64'));
    return known && Date.now() - known.at <= REMEMBER_MS && safeEqual(hash, known.hash) ? known : undefined;
  }

  remember(found: FoundKey): void {
    const id = found.hash.toString('base64');
    this.keys.delete(id);
    if (this.keys.size >= REMEMBER_KEYS) this.keys.delete(this.keys.keys().next().value!);
    this.keys.set(id, { ...found, at: Date.now() });
  }

  forget(hash: Buffer): void {
    this.keys.delete(hash.toString('base64'));
  }
}

/**
 * A secret key this process looked up on an earlier request, with the marketplace as that lookup read it. It proves
 * nothing yet: a key revoked or expired since, a marketplace deactivated or changed since, must be refused at once by
 * every instance. So the request's one write checks it inside its own statement (`rememberedKeyCheck`: the key still
 * live, the marketplace's row still the version read), and whatever is answered without such a write is answered only
 * after `confirm()` asked PostgreSQL. It saves the lookup's round trip on a deal's creation, whose write is one statement.
 */
export class RememberedKey {
  /** True once PostgreSQL confirmed the key and the marketplace as read, in the write's statement or by confirm(). */
  confirmed = false;

  constructor(
    private readonly db: Db,
    private readonly memory: KeyMemory,
    readonly hash: Buffer,
    readonly marketplace: Marketplace,
    readonly version: string,
  ) {}

  /**
   * The key's marketplace as PostgreSQL has it now, and whether it differs from the one remembered (then whatever was
   * decided from that one must be decided again); 401 when the key no longer works.
   */
  async confirm(): Promise<{ marketplace: Marketplace; changed: boolean }> {
    const found = await findKey(this.db, this.hash, 'secret');
    if (!found) {
      this.memory.forget(this.hash);
      throw invalidSecretKey();
    }
    this.memory.remember(found);
    this.confirmed = true;
    return { marketplace: found.marketplace, changed: found.version !== this.version };
  }
}

/**
 * SQL that yields one row when the remembered key is still a live secret key of its marketplace and the marketplace's
 * row is the version read, and none otherwise; $-parameters named by the caller: the key's hash, the marketplace's id,
 * the version. A statement that writes only from that row acts on the key as PostgreSQL has it at that moment.
 */
export function rememberedKeyCheck(hash: string, marketplaceId: string, version: string): string {
  return `SELECT FROM marketplace_keys k JOIN marketplaces m ON m.id = k.marketplace_id
           WHERE k.key_hash = ${hash} AND k.kind = 'secret' AND ${LIVE_KEY} AND m.id = ${marketplaceId} AND m.xmin = ${version}::xid`;
}

/**
 * `X-Svc-Key: mk_…` → `ctx.state.marketplace`, or 401, for a route whose one write checks the key in its own statement
 * (a deal's creation). A key this route looked up in the last REMEMBER_MS is not looked up again: the route gets
 * it as `ctx.state.secretKey`, a RememberedKey that its write must check. An error on the way (a body refused before the
 * write, a database away) is answered only once the key is confirmed: a key that no longer works is 401, as it would
 * have been before anything else was looked at.
 */
export function requireSecretKeyCheckedByWrite(db: Db): Middleware {
  const memory = new KeyMemory();
  return async (ctx, next) => {
    const key = presentedSecretKey(ctx);
    if (!key.startsWith(SECRET_KEY_PREFIX)) throw invalidSecretKey();
    const hash = hashSecret(key);
    const known = memory.recall(hash);
    if (!known) {
      const found = await findKey(db, hash, 'secret');
      if (!found) throw invalidSecretKey();
      memory.remember(found);
      ctx.state.marketplace = found.marketplace;
      return next();
    }
    const remembered = new RememberedKey(db, memory, hash, known.marketplace, known.version);
    ctx.state.marketplace = known.marketplace;
    ctx.state.secretKey = remembered;
    try {
      await next();
    } catch (error) {
      if (!remembered.confirmed) await remembered.confirm();
      throw error;
    }
  };
}
