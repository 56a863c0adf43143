// SSO clients: registration, the administrative list and card, changes (name, redirect URIs, disabled), deletion,
// secret rotation and client authentication. The cs_ secret is checked through its SHA-256 in constant time and kept
// sealed with the master key so that the card can show it. A disabled client, like the client of an inactive
// marketplace, is not usable: every lookup that authorizes or authenticates goes through USABLE.
import { isUniqueViolation, type DbClient } from '../db.ts';
import { Problem, problem } from '../http/problem.ts';
import { decryptSecret, encryptSecret, hashSecret, newSecret, safeEqual } from '../secrets.ts';

export const CLIENT_SECRET_PREFIX = 'cs_';
/** Administrators' client IDs have at most 128 characters; a client ID metadata document's URL at most this. */
export const MAX_CLIENT_ID_LENGTH = 255;

/** How a client authenticates at the token endpoints; `none` is a public client (no secret, PKCE required). */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
export const SUBJECT_TYPES = ['public', 'pairwise'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** What a client registers beside its redirect URIs (issue 25). */
export interface ClientSettings {
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  subject_type: SubjectType;
  post_logout_redirect_uris: string[];
  backchannel_logout_uri: string | null;
}

/** The grants a client may use at the token endpoint (RFC 7591 `grant_types`). */
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

export interface SsoClient {
  client_id: string;
  name: string;
  redirect_uris: string[];
  marketplace_id: string | null;
  created_at: Date;
  secret_rotated_at: Date | null;
  disabled_at: Date | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  subject_type: SubjectType;
  post_logout_redirect_uris: string[];
  backchannel_logout_uri: string | null;
  /** Registered itself at /sso/oidc/register (RFC 7591): a public client. */
  registered_dynamically: boolean;
  grant_types: GrantType[];
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
  /** Made with a marketplace, which owns it. */
  automatic: boolean;
  disabled: boolean;
  created_at: string;
  secret_rotated_at: string | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  subject_type: SubjectType;
  /** Space-separated, as registered ('' for none). */
  post_logout_redirect_uris: string;
  backchannel_logout_uri: string | null;
  /** Registered itself at /sso/oidc/register (RFC 7591), not by an administrator. */
  registered_dynamically: boolean;
}

/** The card without its secret: what lists and the audit log carry. */
export type ClientSummary = Omit<ClientCard, 'client_secret'>;

const COLUMNS =
  'c.client_id, c.name, c.redirect_uris, c.marketplace_id, c.created_at, c.secret_rotated_at, c.disabled_at, c.secret_hash, c.secret_sealed, ' +
  'c.token_endpoint_auth_method, c.subject_type, c.post_logout_redirect_uris, c.backchannel_logout_uri, ' +
  'c.registered_dynamically, c.grant_types';
// A client works while it is enabled, and a marketplace's client only while the marketplace is active.
const USABLE =
  'FROM sso_clients c LEFT JOIN marketplaces m ON m.id = c.marketplace_id WHERE c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)';

export async function createClient(
  db: DbClient,
  masterKey: Buffer,
  input: {
    client_id: string;
    name: string;
    redirect_uris: string[];
    marketplace_id?: string;
    /** A client registering itself (RFC 7591) rather than an administrator's. */
    registered_dynamically?: boolean;
    grant_types?: GrantType[];
  } & Partial<ClientSettings>,
): Promise<ClientCard> {
  const secret = newSecret(CLIENT_SECRET_PREFIX);
  try {
    const result = await db.query<StoredClient>(
      `INSERT INTO sso_clients AS c (client_id, name, redirect_uris, secret_hash, secret_sealed, marketplace_id,
          token_endpoint_auth_method, subject_type, post_logout_redirect_uris, backchannel_logout_uri,
          registered_dynamically, grant_types)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${COLUMNS}`,
      [
        input.client_id,
        input.name,
        input.redirect_uris,
        hashSecret(secret),
        encryptSecret(masterKey, secret),
        input.marketplace_id ?? null,
        input.token_endpoint_auth_method ?? 'client_secret_basic',
        input.subject_type ?? 'public',
        input.post_logout_redirect_uris ?? [],
        input.backchannel_logout_uri ?? null,
        input.registered_dynamically ?? false,
        input.grant_types ?? [...GRANT_TYPES],
      ],
    );
    return card(masterKey, result.rows[0]);
  } catch (error) {
    if (isUniqueViolation(error))
      throw problem(
        'client_id_taken',
        `An SSO client with client_id ${JSON.stringify(input.client_id)} is already registered.`,
      );
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
  const result = await db.query<StoredClient>(`SELECT ${COLUMNS} FROM sso_clients c WHERE c.client_id = $1`, [
    clientId,
  ]);
  return result.rows[0] && card(masterKey, result.rows[0]);
}

/** A registered client's name, whatever its marketplace's state (for pages that name a client the user had). */
export async function clientName(db: DbClient, clientId: string): Promise<string | undefined> {
  const result = await db.query<{ name: string }>('SELECT name FROM sso_clients WHERE client_id = $1', [clientId]);
  return result.rows[0]?.name;
}

/** Who made a client: its marketplace, an administrator, or the client itself (RFC 7591). */
export const CLIENT_MAKERS = ['marketplace', 'here', 'itself'] as const;
export type ClientMaker = (typeof CLIENT_MAKERS)[number];

/** The console's filters of the clients list; each one left out matches every client. */
export interface ClientFilter {
  /** A part of the name or of the client_id, case-insensitive. */
  q?: string;
  /** A public client has no secret (`token_endpoint_auth_method` none); a confidential one has. */
  type?: 'public' | 'confidential';
  made?: ClientMaker;
  state?: 'enabled' | 'disabled';
}

/**
 * A page cursor of the clients the console lists: a client_id, an administrator's or a metadata document's URL. The
 * pager joins cursors with commas and cuts them at 200 characters, so one with a comma or that long starts anew.
 */
export const isClientCursor = (cursor: string) => cursor.length < 200 && !cursor.includes(',');

/** A page of clients, newest first, as filtered; `starting_after` is the last client_id of the previous page. */
export async function listClients(
  db: DbClient,
  page: { limit: number; starting_after?: string } & ClientFilter,
): Promise<{ items: ClientSummary[]; has_more: boolean }> {
  const pattern = page.q ? `%${page.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const result = await db.query<StoredClient>(
    `SELECT ${COLUMNS} FROM sso_clients c
      WHERE ($1::text IS NULL OR (c.created_at, c.client_id) < (SELECT created_at, client_id FROM sso_clients WHERE client_id = $1))
        AND ($3::text IS NULL OR c.name ILIKE $3 OR c.client_id ILIKE $3)
        AND ($4::text IS NULL OR (c.token_endpoint_auth_method = 'none') = ($4 = 'public'))
        AND ($5::text IS NULL OR $5 = CASE WHEN c.marketplace_id IS NOT NULL THEN 'marketplace'
                                           WHEN c.registered_dynamically THEN 'itself' ELSE 'here' END)
        AND ($6::text IS NULL OR (c.disabled_at IS NOT NULL) = ($6 = 'disabled'))
      ORDER BY c.created_at DESC, c.client_id DESC LIMIT $2`,
    [page.starting_after ?? null, page.limit + 1, pattern, page.type ?? null, page.made ?? null, page.state ?? null],
  );
  return { items: result.rows.slice(0, page.limit).map(summary), has_more: result.rows.length > page.limit };
}

/** Why a change or deletion of a marketplace's own client is refused: the marketplace's settings decide it. */
function ownedByMarketplace(action: string): Problem {
  return problem(
    'sso_client_of_marketplace',
    `This SSO client was made with its marketplace and belongs to it: ${action} it through the marketplace (PATCH /admin/marketplaces/{id} ` +
      'with sso_redirect_uri, or deactivate the marketplace). It can only be disabled and enabled here.',
  );
}

/**
 * Renames, re-points or disables (enables) a client in one statement; undefined when there is no such client. A
 * marketplace's client can only be disabled or enabled (409 `sso_client_of_marketplace` otherwise).
 */
export async function updateClient(
  db: DbClient,
  clientId: string,
  changes: { name?: string; redirect_uris?: string[]; disabled?: boolean } & Partial<ClientSettings>,
): Promise<{ before: ClientSummary; after: ClientSummary } | undefined> {
  const before = await clientSummary(db, clientId);
  if (!before) return undefined;
  if (before.automatic && (changes.name !== undefined || changes.redirect_uris !== undefined))
    throw ownedByMarketplace('change');
  // backchannel_logout_uri: undefined keeps it, null removes it.
  const result = await db.query<StoredClient>(
    `UPDATE sso_clients c SET name = COALESCE($2, c.name), redirect_uris = COALESCE($3, c.redirect_uris),
        disabled_at = CASE WHEN $4::boolean IS NULL THEN c.disabled_at WHEN $4 THEN COALESCE(c.disabled_at, now()) END,
        token_endpoint_auth_method = COALESCE($5, c.token_endpoint_auth_method),
        subject_type = COALESCE($6, c.subject_type),
        post_logout_redirect_uris = COALESCE($7, c.post_logout_redirect_uris),
        backchannel_logout_uri = CASE WHEN $8::boolean THEN $9 ELSE c.backchannel_logout_uri END
      WHERE c.client_id = $1 RETURNING ${COLUMNS}`,
    [
      clientId,
      changes.name ?? null,
      changes.redirect_uris ?? null,
      changes.disabled ?? null,
      changes.token_endpoint_auth_method ?? null,
      changes.subject_type ?? null,
      changes.post_logout_redirect_uris ?? null,
      changes.backchannel_logout_uri !== undefined,
      changes.backchannel_logout_uri ?? null,
    ],
  );
  const row = result.rows[0];
  return row && { before, after: summary(row) };
}

/**
 * Deletes a client with its codes, access tokens and grants (the foreign keys cascade), so nothing it was issued works
 * any more; the deleted client is the answer, undefined when there was none. A marketplace's client: 409.
 */
export async function deleteClient(db: DbClient, clientId: string): Promise<ClientSummary | undefined> {
  const existing = await clientSummary(db, clientId);
  if (!existing) return undefined;
  if (existing.automatic) throw ownedByMarketplace('delete');
  const result = await db.query<StoredClient>(
    `DELETE FROM sso_clients c WHERE c.client_id = $1 AND c.marketplace_id IS NULL RETURNING ${COLUMNS}`,
    [clientId],
  );
  return result.rows[0] && summary(result.rows[0]);
}

/** Any registered client without its secret, or undefined. */
export async function clientSummary(db: DbClient, clientId: string): Promise<ClientSummary | undefined> {
  if (clientId.length === 0 || clientId.length > MAX_CLIENT_ID_LENGTH) return undefined;
  const result = await db.query<StoredClient>(`SELECT ${COLUMNS} FROM sso_clients c WHERE c.client_id = $1`, [
    clientId,
  ]);
  return result.rows[0] && summary(result.rows[0]);
}

/**
 * The client a client ID metadata document describes (src/sso/client-metadata.ts): made on its first use, its name,
 * redirect URIs and grants replaced by each new fetch of the document. Public (PKCE required) and marked as registered
 * by itself; an operator's disabling stays. The secret it is made with is never a credential (method `none`).
 * Answers whether the client was made now (PostgreSQL's xmax is 0 for a row this statement inserted).
 */
export async function saveMetadataDocumentClient(
  db: DbClient,
  masterKey: Buffer,
  input: { client_id: string; name: string; redirect_uris: string[]; grant_types: GrantType[] },
): Promise<{ created: boolean }> {
  const secret = newSecret(CLIENT_SECRET_PREFIX);
  const result = await db.query<{ created: boolean }>(
    `INSERT INTO sso_clients (client_id, name, redirect_uris, secret_hash, secret_sealed, token_endpoint_auth_method,
                              registered_dynamically, grant_types)
     VALUES ($1, $2, $3, $4, $5, 'none', true, $6)
     ON CONFLICT (client_id) DO UPDATE SET name = EXCLUDED.name, redirect_uris = EXCLUDED.redirect_uris,
       grant_types = EXCLUDED.grant_types
     WHERE sso_clients.token_endpoint_auth_method = 'none' AND sso_clients.marketplace_id IS NULL
     RETURNING xmax = 0 AS created`,
    [
      input.client_id,
      input.name,
      input.redirect_uris,
      hashSecret(secret),
      encryptSecret(masterKey, secret),
      input.grant_types,
    ],
  );
  return { created: result.rows[0]?.created ?? false };
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

/**
 * The client when the secret is its current one, compared in constant time; undefined otherwise. A public client
 * (token_endpoint_auth_method `none`) authenticates with no secret (undefined) and only so; a confidential one only
 * with its secret.
 */
export async function authenticateClient(
  db: DbClient,
  clientId: string,
  secret: string | undefined,
): Promise<SsoClient | undefined> {
  const stored = await findStored(db, clientId);
  if (secret === undefined) return stored?.client.token_endpoint_auth_method === 'none' ? stored.client : undefined;
  const presented = hashSecret(secret);
  // Compare against something even for an unknown client, so both paths do the same work.
  const matches = safeEqual(presented, stored?.secretHash ?? UNKNOWN_CLIENT_HASH);
  return matches && stored && stored.client.token_endpoint_auth_method !== 'none' ? stored.client : undefined;
}

const UNKNOWN_CLIENT_HASH = hashSecret('no client has this secret');

async function findStored(db: DbClient, clientId: string) {
  if (clientId.length === 0 || clientId.length > MAX_CLIENT_ID_LENGTH) return undefined;
  const result = await db.query<StoredClient>(`SELECT ${COLUMNS} ${USABLE} AND c.client_id = $1`, [clientId]);
  const row = result.rows[0];
  return row && { client: withoutSecret(row), secretHash: row.secret_hash };
}

function withoutSecret(row: StoredClient): SsoClient {
  const { secret_hash: _hash, secret_sealed: _sealed, ...client } = row;
  return client;
}

function summary(row: StoredClient): ClientSummary {
  return {
    client_id: row.client_id,
    name: row.name,
    redirect_uris: row.redirect_uris.join(' '),
    marketplace_id: row.marketplace_id,
    automatic: row.marketplace_id !== null,
    disabled: row.disabled_at !== null,
    created_at: row.created_at.toISOString(),
    secret_rotated_at: row.secret_rotated_at?.toISOString() ?? null,
    token_endpoint_auth_method: row.token_endpoint_auth_method,
    subject_type: row.subject_type,
    post_logout_redirect_uris: row.post_logout_redirect_uris.join(' '),
    backchannel_logout_uri: row.backchannel_logout_uri,
    registered_dynamically: row.registered_dynamically,
  };
}

function card(masterKey: Buffer, row: StoredClient): ClientCard {
  const { client_id, name, redirect_uris, ...rest } = summary(row);
  return { client_id, name, redirect_uris, client_secret: decryptSecret(masterKey, row.secret_sealed), ...rest };
}
