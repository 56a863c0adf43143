// What administrators do with marketplaces, for the JSON operations and the console alike: the list and the card,
// activation, changes, key rotation, deactivation. Keys are shown only when made; afterwards only their first
// characters. Every change of keys or of `active` is in PostgreSQL, which every instance asks on every request.
import type { PoolClient } from 'pg';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import { createMarketplaceClient, type ClientCard } from '../sso/clients.ts';
import type { FeeMoment } from '../money/fee.ts';
import type { LiveProvider } from '../escrow/providers.ts';
import {
  createMarketplace,
  insertKey,
  marketplaceColumns,
  newKey,
  type KeyKind,
  type Marketplace,
  type MarketplaceMode,
  type NewMarketplace,
} from './marketplaces.ts';

/** How long a rotated secret key keeps working unless the administrator chooses: a day, to deploy the new one. */
export const DEFAULT_KEY_OVERLAP_SECONDS = 86_400;
/** At most a week, as the webhook secret's overlap. */
export const MAX_KEY_OVERLAP_SECONDS = 7 * 24 * 3600;

export type KeyStatus = 'active' | 'expiring' | 'expired' | 'revoked';

export interface MarketplaceKeyInfo {
  kind: KeyKind;
  /** The key's first characters; null for keys made before they were kept. */
  prefix: string | null;
  status: KeyStatus;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export interface MarketplaceCard extends Marketplace {
  /** The SSO client made for sso_redirect_uri (its client_id is the marketplace id), or null. */
  sso_client_id: string | null;
  keys: MarketplaceKeyInfo[];
  updated_at: Date;
}

export interface MarketplaceChanges {
  name?: string;
  mode?: MarketplaceMode;
  allowed_origins?: string[];
  sso_redirect_uri?: string;
  /** Replaces the whole schedule: each part a number, or null (also for a part left out). */
  fee_schedule?: { percent?: number | null; fixed?: number | null; min?: number | null; max?: number | null };
  fee_moment?: FeeMoment;
  /** The live acquirer of new deals (a sandbox marketplace's deals stay the sandbox's whatever this says). */
  provider?: LiveProvider;
  /** Days the buyer has after delivery to open a dispute before the money is released: 0 (at delivery) to 60. */
  inspection_days?: number;
}

const COLUMNS = marketplaceColumns('m.');

/**
 * Marketplaces newest first. `q` matches a part of the name (case-insensitive) or the start of the id; `startingAfter`
 * is the id of the last marketplace of the previous page. Undefined when that id is not a marketplace.
 */
export async function listMarketplaces(
  db: Db,
  filter: { q?: string; limit: number; startingAfter?: string; mode?: 'sandbox' | 'live'; active?: boolean },
): Promise<{ items: Marketplace[]; has_more: boolean } | undefined> {
  const cursor = filter.startingAfter ?? null;
  if (
    cursor !== null &&
    !(isUuid(cursor) && (await db.query('SELECT 1 FROM marketplaces WHERE id = $1', [cursor])).rowCount)
  )
    return undefined;
  const pattern = filter.q ? `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const idStart = filter.q ? `${filter.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const result = await db.query<Marketplace>(
    `SELECT ${COLUMNS} FROM marketplaces m
      WHERE ($1::text IS NULL OR m.name ILIKE $1 OR m.id::text LIKE $2)
        AND ($3::uuid IS NULL OR (m.created_at, m.id) < (SELECT created_at, id FROM marketplaces WHERE id = $3::uuid))
        AND ($5::text IS NULL OR m.mode = $5) AND ($6::boolean IS NULL OR m.active = $6)
      ORDER BY m.created_at DESC, m.id DESC
      LIMIT $4`,
    [pattern, idStart, cursor, filter.limit + 1, filter.mode ?? null, filter.active ?? null],
  );
  return { items: result.rows.slice(0, filter.limit), has_more: result.rows.length > filter.limit };
}

export async function marketplaceCard(db: DbClient, id: string): Promise<MarketplaceCard | undefined> {
  if (!isUuid(id)) return undefined;
  const found = await db.query<Marketplace & { sso_client_id: string | null; updated_at: Date }>(
    `SELECT ${COLUMNS}, m.updated_at, c.client_id AS sso_client_id
       FROM marketplaces m LEFT JOIN sso_clients c ON c.marketplace_id = m.id
      WHERE m.id = $1`,
    [id],
  );
  const row = found.rows[0];
  if (!row) return undefined;
  // The status by the database's clock, the one the key check uses.
  const keys = await db.query<MarketplaceKeyInfo>(
    `SELECT kind, prefix, created_at, expires_at, revoked_at,
            CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at IS NULL THEN 'active'
                 WHEN expires_at > now() THEN 'expiring' ELSE 'expired' END AS status
       FROM marketplace_keys WHERE marketplace_id = $1
      ORDER BY created_at DESC, kind`,
    [id],
  );
  return { ...row, keys: keys.rows };
}

/** A new marketplace with its keys and, for an sso_redirect_uri, its SSO client; all of them or none. */
export async function activateMarketplace(
  services: Services,
  input: NewMarketplace,
): Promise<{ marketplace: Marketplace; secretKey: string; publicKey: string; ssoClient: ClientCard | null }> {
  const { marketplace, secretKey, publicKey, extra } = await createMarketplace(services.db, input, (client, created) =>
    created.sso_redirect_uri
      ? createMarketplaceClient(client, services.masterKey, { ...created, sso_redirect_uri: created.sso_redirect_uri })
      : Promise.resolve(null),
  );
  return { marketplace, secretKey, publicKey, ssoClient: extra ?? null };
}

/**
 * Changes the marketplace; its automatic SSO client follows its name and redirect URI (one is made when a redirect
 * URI is set on a marketplace without one). Undefined when there is no such marketplace.
 */
export async function updateMarketplace(
  services: Services,
  id: string,
  changes: MarketplaceChanges,
): Promise<{ before: MarketplaceCard; after: MarketplaceCard } | undefined> {
  if (!isUuid(id)) return undefined;
  return inTransaction(services.db, async (client) => {
    const before = await lockedCard(client, id);
    if (!before) return undefined;
    const origins = changes.allowed_origins && [...new Set(changes.allowed_origins)];
    const fee = changes.fee_schedule;
    // The schedule's numbers go to PostgreSQL as their decimal text: numeric keeps them exactly.
    const part = (value: number | null | undefined) => (value === null || value === undefined ? null : String(value));
    const updated = await client.query<Marketplace>(
      `UPDATE marketplaces m SET name = COALESCE($2, name), mode = COALESCE($3, mode), allowed_origins = COALESCE($4, allowed_origins),
              sso_redirect_uri = COALESCE($5, sso_redirect_uri),
              fee_percent = CASE WHEN $6 THEN $7::numeric ELSE fee_percent END, fee_fixed = CASE WHEN $6 THEN $8::numeric ELSE fee_fixed END,
              fee_min = CASE WHEN $6 THEN $9::numeric ELSE fee_min END, fee_max = CASE WHEN $6 THEN $10::numeric ELSE fee_max END,
              fee_moment = COALESCE($11, fee_moment), provider = COALESCE($12, provider),
              inspection_days = COALESCE($13::integer, inspection_days), updated_at = now()
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        id,
        changes.name ?? null,
        changes.mode ?? null,
        origins ?? null,
        changes.sso_redirect_uri ?? null,
        fee !== undefined,
        part(fee?.percent),
        part(fee?.fixed),
        part(fee?.min),
        part(fee?.max),
        changes.fee_moment ?? null,
        changes.provider ?? null,
        changes.inspection_days ?? null,
      ],
    );
    const marketplace = updated.rows[0];
    if (marketplace.sso_redirect_uri) {
      const followed = await client.query(
        'UPDATE sso_clients SET name = $2, redirect_uris = ARRAY[$3] WHERE marketplace_id = $1',
        [id, marketplace.name, marketplace.sso_redirect_uri],
      );
      if (followed.rowCount === 0) {
        await createMarketplaceClient(client, services.masterKey, {
          ...marketplace,
          sso_redirect_uri: marketplace.sso_redirect_uri,
        });
      }
    }
    return { before, after: (await marketplaceCard(client, id))! };
  });
}

/**
 * A new secret key. The one it replaces keeps working for `overlapSeconds` (0: stops at once); a key replaced by an
 * earlier rotation whose overlap still runs stops at once, so at most two secret keys ever work. Undefined when there
 * is no such marketplace.
 */
export async function rotateSecretKey(
  db: Db,
  id: string,
  overlapSeconds: number,
): Promise<
  { secretKey: string; previousExpiresAt: Date | null; before: MarketplaceCard; after: MarketplaceCard } | undefined
> {
  if (!isUuid(id)) return undefined;
  return inTransaction(db, async (client) => {
    const before = await lockedCard(client, id);
    if (!before) return undefined;
    await client.query(
      `UPDATE marketplace_keys SET revoked_at = now()
        WHERE marketplace_id = $1 AND kind = 'secret' AND revoked_at IS NULL AND expires_at > now()`,
      [id],
    );
    const replaced = await client.query<{ expires_at: Date }>(
      `UPDATE marketplace_keys SET expires_at = now() + make_interval(secs => $2)
        WHERE marketplace_id = $1 AND kind = 'secret' AND revoked_at IS NULL AND expires_at IS NULL
        RETURNING expires_at`,
      [id, overlapSeconds],
    );
    const secretKey = newKey('secret');
    await insertKey(client, id, 'secret', secretKey);
    return {
      secretKey,
      previousExpiresAt: replaced.rows[0]?.expires_at ?? null,
      before,
      after: (await marketplaceCard(client, id))!,
    };
  });
}

/** A new public key; the one it replaces stops at once (it is in web pages, so there is nothing to wait for). */
export async function rotatePublicKey(
  db: Db,
  id: string,
): Promise<{ publicKey: string; before: MarketplaceCard; after: MarketplaceCard } | undefined> {
  if (!isUuid(id)) return undefined;
  return inTransaction(db, async (client) => {
    const before = await lockedCard(client, id);
    if (!before) return undefined;
    await client.query(
      `UPDATE marketplace_keys SET revoked_at = now() WHERE marketplace_id = $1 AND kind = 'public' AND revoked_at IS NULL`,
      [id],
    );
    const publicKey = newKey('public');
    await insertKey(client, id, 'public', publicKey);
    return { publicKey, before, after: (await marketplaceCard(client, id))! };
  });
}

/**
 * Deactivates (its mk_ and pk_ keys, widget tokens and SSO client stop at once) or activates again (they work again,
 * except keys revoked or expired meanwhile). Its deals and webhook log stay readable by administrators.
 */
export async function setMarketplaceActive(
  db: Db,
  id: string,
  active: boolean,
): Promise<{ before: MarketplaceCard; after: MarketplaceCard } | undefined> {
  if (!isUuid(id)) return undefined;
  return inTransaction(db, async (client) => {
    const before = await lockedCard(client, id);
    if (!before) return undefined;
    await client.query('UPDATE marketplaces SET active = $2, updated_at = now() WHERE id = $1', [id, active]);
    return { before, after: (await marketplaceCard(client, id))! };
  });
}

/** The card, with the marketplace's row locked until the transaction ends: changes of one marketplace queue up. */
async function lockedCard(client: PoolClient, id: string): Promise<MarketplaceCard | undefined> {
  const locked = await client.query('SELECT 1 FROM marketplaces WHERE id = $1 FOR UPDATE', [id]);
  return locked.rowCount ? marketplaceCard(client, id) : undefined;
}
