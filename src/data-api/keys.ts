// Data API keys (svc_mcp_): one account per user, a tariff with a monthly quota, keys stored as hashes. Each key has a
// public id, a name its owner gives it and a display prefix, so the owner can tell keys apart and revoke one without
// the key itself ever being stored or shown again.
import type { PoolClient } from 'pg';
import { inTransaction, type Db } from '../db.ts';
import { ensureUser } from '../accounts/users.ts';
import { problem, notFound } from '../http/problem.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { isUuid } from '../uuid.ts';

export const DATA_KEY_PREFIX = 'svc_mcp_';
/** Random characters shown after `svc_mcp_`: 24 of the key's 256 bits, enough to recognise it, never to use it. */
const SHOWN_CHARACTERS = 4;
export const DATA_KEY_NAME_MAX = 100;
/** Active keys one account may hold: a user cannot fill the table, and 20 covers a key per app or machine. */
export const ACTIVE_DATA_KEYS_MAX = 20;
/** Revoked keys kept for the owner's list; older ones are deleted when a key is issued (a deleted key stays invalid). */
const REVOKED_DATA_KEYS_KEPT = 20;

/** Monthly requests per tariff, summed over the account's keys; null is unlimited. */
export const TARIFF_QUOTAS = { free: 1000, pro: 50_000, business: 500_000, enterprise: null } as const;
export type Tariff = keyof typeof TARIFF_QUOTAS;
export const TARIFFS = Object.keys(TARIFF_QUOTAS) as [Tariff, ...Tariff[]];

/** A key as its owner sees it; `prefix` is null for keys issued before prefixes were kept. */
export interface DataKeyItem {
  id: string;
  name: string;
  prefix: string | null;
  created_at: string;
  revoked_at: string | null;
}

interface KeyRow {
  id: string;
  name: string;
  prefix: string | null;
  created_at: Date;
  revoked_at: Date | null;
}
const KEY_COLUMNS = 'id, name, prefix, created_at, revoked_at';

const item = (row: KeyRow): DataKeyItem => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  created_at: row.created_at.toISOString(),
  revoked_at: row.revoked_at?.toISOString() ?? null,
});

async function insertKey(client: PoolClient, accountId: string, name: string): Promise<{ key: string; row: KeyRow }> {
  const key = newSecret(DATA_KEY_PREFIX);
  const result = await client.query<KeyRow>(
    `INSERT INTO data_keys (key_hash, account_id, name, prefix) VALUES ($1, $2, $3, $4) RETURNING ${KEY_COLUMNS}`,
    [hashSecret(key), accountId, name, key.slice(0, DATA_KEY_PREFIX.length + SHOWN_CHARACTERS)],
  );
  return { key, row: result.rows[0] };
}

/** Issues a key to the account of this e-mail, making the user and the account when needed; sets the tariff. */
export async function issueDataKey(
  db: Db,
  input: { email: string; tariff: Tariff },
): Promise<{ key: string; account_id: string; tariff: Tariff }> {
  const { user } = await ensureUser(db, { email: input.email });
  const key = await inTransaction(db, async (client) => {
    await client.query(
      `INSERT INTO data_accounts (id, tariff) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET tariff = excluded.tariff, updated_at = now()`,
      [user.id, input.tariff],
    );
    return (await insertKey(client, user.id, '')).key;
  });
  return { key, account_id: user.id, tariff: input.tariff };
}

/**
 * The signed-in user issues a named key to their own account (made on the free tariff when there is none). The
 * account row is locked while the active keys are counted, so concurrent requests cannot pass the limit together.
 */
export async function issueOwnDataKey(
  db: Db,
  userId: string,
  name: string,
): Promise<{ id: string; name: string; key: string }> {
  return inTransaction(db, async (client) => {
    await client.query(`INSERT INTO data_accounts (id, tariff) VALUES ($1, 'free') ON CONFLICT (id) DO NOTHING`, [
      userId,
    ]);
    await client.query('SELECT 1 FROM data_accounts WHERE id = $1 FOR UPDATE', [userId]);
    const active = await client.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM data_keys WHERE account_id = $1 AND revoked_at IS NULL',
      [userId],
    );
    if (active.rows[0].count >= ACTIVE_DATA_KEYS_MAX) {
      throw problem(
        'too_many_data_keys',
        `An account holds at most ${ACTIVE_DATA_KEYS_MAX} active data API keys; revoke one you no longer use first.`,
      );
    }
    await client.query(
      `DELETE FROM data_keys WHERE account_id = $1 AND id IN (
         SELECT id FROM data_keys WHERE account_id = $1 AND revoked_at IS NOT NULL
         ORDER BY revoked_at DESC OFFSET $2)`,
      [userId, REVOKED_DATA_KEYS_KEPT],
    );
    const { key, row } = await insertKey(client, userId, name);
    return { id: row.id, name: row.name, key };
  });
}

/** The user's keys, active ones first, newest first within each. Never the key itself: only its hash is stored. */
export async function listDataKeys(db: Db, userId: string): Promise<DataKeyItem[]> {
  const result = await db.query<KeyRow>(
    `SELECT ${KEY_COLUMNS} FROM data_keys WHERE account_id = $1
     ORDER BY revoked_at IS NOT NULL, created_at DESC, id`,
    [userId],
  );
  return result.rows.map(item);
}

/**
 * Revokes one of the user's keys: every server refuses it from the next request on, since each request looks its key
 * up in the database. Revoking again changes nothing and keeps the first time. Another user's key is 404.
 */
export async function revokeDataKey(db: Db, userId: string, keyId: string): Promise<DataKeyItem> {
  if (!isUuid(keyId)) throw notFound('No such data API key.');
  const result = await db.query<KeyRow>(
    `UPDATE data_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND account_id = $2 RETURNING ${KEY_COLUMNS}`,
    [keyId, userId],
  );
  const row = result.rows[0];
  if (!row) throw notFound('No such data API key.');
  return item(row);
}

/** The account of an active key, or undefined. */
export async function accountIdForKey(db: Db, key: string): Promise<string | undefined> {
  const presented = hashSecret(key);
  const result = await db.query<{ account_id: string; key_hash: Buffer }>(
    'SELECT account_id, key_hash FROM data_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    [presented],
  );
  const row = result.rows[0];
  return row && safeEqual(presented, row.key_hash) ? row.account_id : undefined;
}

/** The keys of several accounts at once (administrators' lists), each account's in the order of listDataKeys. */
export async function listDataKeysOf(db: Db, accountIds: string[]): Promise<Map<string, DataKeyItem[]>> {
  const keys = new Map<string, DataKeyItem[]>(accountIds.map((id) => [id, []]));
  const result = await db.query<KeyRow & { account_id: string }>(
    `SELECT account_id, ${KEY_COLUMNS} FROM data_keys WHERE account_id = ANY($1::uuid[])
     ORDER BY revoked_at IS NOT NULL, created_at DESC, id`,
    [accountIds],
  );
  for (const row of result.rows) keys.get(row.account_id)?.push(item(row));
  return keys;
}

/** An administrator issues a key to an existing account, with the same limit as its owner has; 404 without one. */
export async function issueAccountKey(
  db: Db,
  accountId: string,
  name: string,
): Promise<{ id: string; name: string; key: string }> {
  if (!(await dataAccountExists(db, accountId))) throw notFound('No such data account.');
  return issueOwnDataKey(db, accountId, name);
}

/** An administrator revokes any account's key by its id: the key before and after, and its account. */
export async function revokeAnyDataKey(
  db: Db,
  keyId: string,
): Promise<{ account_id: string; before: DataKeyItem; after: DataKeyItem }> {
  if (!isUuid(keyId)) throw notFound('No such data API key.');
  const result = await db.query<KeyRow & { account_id: string }>(
    `SELECT account_id, ${KEY_COLUMNS} FROM data_keys WHERE id = $1`,
    [keyId],
  );
  const row = result.rows[0];
  if (!row) throw notFound('No such data API key.');
  return { account_id: row.account_id, before: item(row), after: await revokeDataKey(db, row.account_id, keyId) };
}

export async function dataAccountExists(db: Db, accountId: string): Promise<boolean> {
  if (!isUuid(accountId)) return false;
  return ((await db.query('SELECT 1 FROM data_accounts WHERE id = $1', [accountId])).rowCount ?? 0) > 0;
}
