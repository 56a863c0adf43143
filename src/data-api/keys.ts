// Data API keys (svc_mcp_): one account per user, a tariff with a monthly quota, any number of keys, stored as hashes.
import { inTransaction, type Db } from '../db.ts';
import { ensureUser } from '../accounts/users.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';

export const DATA_KEY_PREFIX = 'svc_mcp_';

/** Monthly requests per tariff, summed over the account's keys; null is unlimited. */
export const TARIFF_QUOTAS = { free: 1000, pro: 50_000, business: 500_000, enterprise: null } as const;
export type Tariff = keyof typeof TARIFF_QUOTAS;
export const TARIFFS = Object.keys(TARIFF_QUOTAS) as [Tariff, ...Tariff[]];

/** Issues a key to the account of this e-mail, making the user and the account when needed; sets the tariff. */
export async function issueDataKey(
  db: Db,
  input: { email: string; tariff: Tariff },
): Promise<{ key: string; account_id: string; tariff: Tariff }> {
  const { user } = await ensureUser(db, { email: input.email });
  const key = newSecret(DATA_KEY_PREFIX);
  await inTransaction(db, async (client) => {
    await client.query(
      `INSERT INTO data_accounts (id, tariff) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET tariff = excluded.tariff, updated_at = now()`,
      [user.id, input.tariff],
    );
    await client.query('INSERT INTO data_keys (key_hash, account_id) VALUES ($1, $2)', [hashSecret(key), user.id]);
  });
  return { key, account_id: user.id, tariff: input.tariff };
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
