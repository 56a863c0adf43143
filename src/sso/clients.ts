// SSO clients: registration, the administrative card, secret rotation and client authentication. The cs_ secret is
// checked through its SHA-256 in constant time and kept sealed with the master key so that the card can show it.
import { isUniqueViolation, type DbClient } from '../db.ts';
import { Problem } from '../http/problem.ts';
import { decryptSecret, encryptSecret, hashSecret, newSecret, safeEqual } from '../secrets.ts';

export const CLIENT_SECRET_PREFIX = 'cs_';

export interface SsoClient {
  client_id: string;
  name: string;
  redirect_uris: string[];
  marketplace_id: string | null;
  created_at: Date;
  secret_rotated_at: Date | null;
}

interface StoredClient extends SsoClient {
  secret_hash: Buffer;
  secret_sealed: string;
}

/** The client as the card shows it: redirect URIs space-separated as registered, the secret unsealed. */
export interface ClientCard {
  client_id: string;
  name: string;
  redirect_uris: string;
  client_secret: string;
  marketplace_id: string | null;
  created_at: string;
  secret_rotated_at: string | null;
}

const COLUMNS = 'c.client_id, c.name, c.redirect_uris, c.marketplace_id, c.created_at, c.secret_rotated_at, c.secret_hash, c.secret_sealed';
// A marketplace's client works only while the marketplace is active.
const USABLE = 'FROM sso_clients c LEFT JOIN marketplaces m ON m.id = c.marketplace_id WHERE (c.marketplace_id IS NULL OR m.active)';

export async function createClient(
  db: DbClient,
  masterKey: Buffer,
  input: { client_id: string; name: string; redirect_uris: string[]; marketplace_id?: string },
): Promise<ClientCard> {
  const secret = newSecret(CLIENT_SECRET_PREFIX);
  try {
    const result = await db.query<StoredClient>(
      `INSERT INTO sso_clients AS c (client_id, name, redirect_uris, secret_hash, secret_sealed, marketplace_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [input.client_id, input.name, input.redirect_uris, hashSecret(secret), encryptSecret(masterKey, secret), input.marketplace_id ?? null],
    );
    return card(masterKey, result.rows[0]!);
  } catch (error) {
    if (isUniqueViolation(error)) throw new Problem(409, 'client_id_taken', `An SSO client with client_id ${JSON.stringify(input.client_id)} is already registered.`);
    throw error;
  }
}

/** The SSO client a marketplace activated with sso_redirect_uri gets: its id as client_id, its one fixed URI. */
export function createMarketplaceClient(
  db: DbClient,
  masterKey: Buffer,
  marketplace: { id: string; name: string; sso_redirect_uri: string },
): Promise<ClientCard> {
  return createClient(db, masterKey, {
    client_id: marketplace.id,
    name: marketplace.name,
    redirect_uris: [marketplace.sso_redirect_uri],
    marketplace_id: marketplace.id,
  });
}

/** A usable client (its marketplace, if any, active), or undefined. */
export async function findClient(db: DbClient, clientId: string): Promise<SsoClient | undefined> {
  return (await findStored(db, clientId))?.client;
}

/** Any registered client's card, for administrators, whatever its marketplace's state. */
export async function clientCard(db: DbClient, masterKey: Buffer, clientId: string): Promise<ClientCard | undefined> {
  const result = await db.query<StoredClient>(`SELECT ${COLUMNS} FROM sso_clients c WHERE c.client_id = $1`, [clientId]);
  return result.rows[0] && card(masterKey, result.rows[0]);
}

/** A registered client's name, whatever its marketplace's state (for pages that name a client the user had). */
export async function clientName(db: DbClient, clientId: string): Promise<string | undefined> {
  const result = await db.query<{ name: string }>('SELECT name FROM sso_clients WHERE client_id = $1', [clientId]);
  return result.rows[0]?.name;
}

export async function listClients(db: DbClient): Promise<SsoClient[]> {
  const result = await db.query<StoredClient>(`SELECT ${COLUMNS} FROM sso_clients c ORDER BY c.created_at DESC, c.client_id LIMIT 1000`);
  return result.rows.map(withoutSecret);
}

/** A new secret; the old one stops working at once. */
export async function rotateSecret(db: DbClient, masterKey: Buffer, clientId: string): Promise<ClientCard | undefined> {
  const secret = newSecret(CLIENT_SECRET_PREFIX);
  const result = await db.query<StoredClient>(
    `UPDATE sso_clients c SET secret_hash = $2, secret_sealed = $3, secret_rotated_at = now() WHERE c.client_id = $1 RETURNING ${COLUMNS}`,
    [clientId, hashSecret(secret), encryptSecret(masterKey, secret)],
  );
  return result.rows[0] && card(masterKey, result.rows[0]);
}

/** The client when the secret is its current one, compared in constant time; undefined otherwise. */
export async function authenticateClient(db: DbClient, clientId: string, secret: string): Promise<SsoClient | undefined> {
  const presented = hashSecret(secret);
  const stored = await findStored(db, clientId);
  // Compare against something even for an unknown client, so both paths do the same work.
  const matches = safeEqual(presented, stored?.secretHash ?? UNKNOWN_CLIENT_HASH);
  return matches && stored ? stored.client : undefined;
}

const UNKNOWN_CLIENT_HASH = hashSecret('no client has this secret');

async function findStored(db: DbClient, clientId: string) {
  if (clientId.length === 0 || clientId.length > 128) return undefined;
  const result = await db.query<StoredClient>(`SELECT ${COLUMNS} ${USABLE} AND c.client_id = $1`, [clientId]);
  const row = result.rows[0];
  return row && { client: withoutSecret(row), secretHash: row.secret_hash };
}

function withoutSecret(row: StoredClient): SsoClient {
  const { secret_hash: _hash, secret_sealed: _sealed, ...client } = row;
  return client;
}

function card(masterKey: Buffer, row: StoredClient): ClientCard {
  return {
    client_id: row.client_id,
    name: row.name,
    redirect_uris: row.redirect_uris.join(' '),
    client_secret: decryptSecret(masterKey, row.secret_sealed),
    marketplace_id: row.marketplace_id,
    created_at: row.created_at.toISOString(),
    secret_rotated_at: row.secret_rotated_at?.toISOString() ?? null,
  };
}
