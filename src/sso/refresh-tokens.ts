// Refresh tokens (rt_) of the OpenID Connect token endpoint: a code exchange whose scope has offline_access starts a
// family (src/sso/codes.ts); each use spends the token and issues the next of the family with a new access token; a
// spent token presented again revokes the whole family, its refresh tokens and every access token issued from it.
// Each token of a family carries its first sign-in's auth_time and amr, which every refreshed ID token repeats.
// A family lives at most SSO_REFRESH_FAMILY_MAX_SECONDS from its first sign-in (family_started_at), however often it
// is refreshed: past that, a refresh is invalid_grant and the family is revoked. Stored only as hashes. Rotation is one conditional UPDATE, so of concurrent uses of one token exactly one wins and
// the other counts as reuse. The same statement holds the user's grant to the client shared, as a code exchange does,
// so a revocation of the grant or of all the user's access (src/sso/grants.ts, src/accounts/sessions.ts) either waits
// for the new tokens and revokes them too, or makes the rotation find the token revoked.
import { randomUUID } from 'node:crypto';
import type { Db, DbClient } from '../db.ts';
import { inTransaction } from '../db.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { authenticateClient } from './clients.ts';
import type { Redeemed } from './codes.ts';
import { OAuthProblem, invalidClient } from './oauth-problem.ts';

export const REFRESH_TOKEN_PREFIX = 'rt_';
export const OFFLINE_ACCESS = 'offline_access';

export const newRefreshToken = () => newSecret(REFRESH_TOKEN_PREFIX);
export const newFamilyId = () => randomUUID();

/** The scope values of a scope string (RFC 6749 §3.3: separated by spaces), each once, in their first order. */
export function scopeValues(scope: string): string[] {
  return [...new Set(scope.split(/\s+/).filter(Boolean))];
}

/**
 * The scope an access token from a refresh gets: the family's scope when none is asked for, the asked one when every
 * value of it was granted; undefined when it asks for more (RFC 6749 §6: never wider than granted).
 */
export function narrowScope(granted: string, requested: string | undefined): string | undefined {
  if (requested === undefined) return granted;
  const allowed = new Set(scopeValues(granted));
  const asked = scopeValues(requested);
  return asked.every((value) => allowed.has(value)) ? asked.join(' ') : undefined;
}

export interface Refresh {
  refreshToken: string;
  /** secret undefined: a public client. */
  client: { id: string; secret: string | undefined };
  /** The scope asked for (RFC 6749 §6), or undefined for the family's. */
  scope?: string;
  /** The new access token's jti (its row; src/sso/tokens.ts). */
  accessToken: { jti: string; ttlSeconds: number };
  next: { token: string; ttlSeconds: number };
  /** The family's absolute lifetime from its first sign-in. */
  familyMaxSeconds: number;
  /** WWW-Authenticate for invalid_client, when the client authenticated with a scheme (HTTP Basic). */
  clientChallenge?: string;
  /** RFC 8707 at the token request: when given, it must be the resource the sign-in named. */
  resource?: string;
}

/** The user and claims of a refreshed grant; `scope` is the new access token's. */
export type Refreshed = Redeemed;

/**
 * Authenticates the client, spends its refresh token and issues the next one with an access token, in one statement;
 * otherwise 401 invalid_client or a 400: invalid_scope for a wider scope (the token stays usable), invalid_grant for a
 * token that is not live, and for a spent one, after revoking its family.
 */
export async function rotateRefreshToken(db: Db, refresh: Refresh): Promise<Refreshed> {
  const tokenHash = hashSecret(refresh.refreshToken);
  const secretHash = refresh.client.secret === undefined ? null : hashSecret(refresh.client.secret);
  const requested = refresh.scope === undefined ? null : scopeValues(refresh.scope);
  const result = await db.query<{
    token_hash: Buffer;
    secret_hash: Buffer;
    user_id: string;
    email: string;
    name: string;
    org_id: string;
    org_name: string;
    scope: string;
    auth_time: Date | null;
    resource: string | null;
    amr: string[] | null;
  }>(
    `WITH client AS (
       SELECT c.client_id, c.secret_hash FROM sso_clients c LEFT JOIN marketplaces m ON m.id = c.marketplace_id
        WHERE c.client_id = $2 AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)
          AND CASE WHEN $3::bytea IS NULL THEN c.token_endpoint_auth_method = 'none'
                   ELSE c.token_endpoint_auth_method <> 'none' AND c.secret_hash = $3 END
     ), live_grant AS (
       -- Held shared until this rotation commits, as a code exchange holds it (src/sso/codes.ts).
       SELECT 1 FROM sso_grants g JOIN sso_refresh_tokens r ON r.user_id = g.user_id AND r.client_id = g.client_id
        WHERE r.token_hash = $1 AND g.client_id = $2 AND g.revoked_at IS NULL FOR SHARE OF g
     ), spent AS (
       UPDATE sso_refresh_tokens SET used_at = now()
        WHERE token_hash = $1 AND client_id = (SELECT client_id FROM client) AND used_at IS NULL AND revoked_at IS NULL
          AND expires_at > now() AND EXISTS (SELECT 1 FROM live_grant)
          AND ($4::text[] IS NULL OR $4::text[] <@ regexp_split_to_array(scope, '[[:space:]]+'))
          AND ($10::text IS NULL OR resource = $10) AND family_started_at > now() - make_interval(secs => $11)
       RETURNING token_hash, family_id, code_hash, client_id, user_id, scope, auth_time, resource, family_started_at, amr
     ), next AS (
       INSERT INTO sso_refresh_tokens (token_hash, family_id, code_hash, client_id, user_id, scope, auth_time, expires_at,
                                       resource, family_started_at, amr)
       SELECT $5, family_id, code_hash, client_id, user_id, scope, auth_time,
              LEAST(now() + make_interval(secs => $6), family_started_at + make_interval(secs => $11)), resource,
              family_started_at, amr
         FROM spent
     ), issued AS (
       INSERT INTO sso_access_tokens (jti, family_id, client_id, user_id, scope, expires_at, audience)
       SELECT $7, family_id, client_id, user_id, COALESCE($9, scope), now() + make_interval(secs => $8), resource FROM spent
     )
     SELECT s.token_hash, k.secret_hash, s.user_id, u.email, u.name, o.id AS org_id, o.name AS org_name,
            COALESCE($9, s.scope) AS scope, s.auth_time, s.resource, s.amr
       FROM spent s CROSS JOIN client k JOIN users u ON u.id = s.user_id JOIN organizations o ON o.owner_id = u.id AND o.personal`,
    [
      tokenHash,
      refresh.client.id,
      secretHash,
      requested,
      hashSecret(refresh.next.token),
      refresh.next.ttlSeconds,
      refresh.accessToken.jti,
      refresh.accessToken.ttlSeconds,
      requested?.join(' ') ?? null,
      refresh.resource ?? null,
      refresh.familyMaxSeconds,
    ],
  );
  const row = result.rows[0];
  if (
    !row ||
    !safeEqual(tokenHash, row.token_hash) ||
    (secretHash !== null && !safeEqual(secretHash, row.secret_hash))
  ) {
    if (!(await authenticateClient(db, refresh.client.id, refresh.client.secret)))
      throw invalidClient(refresh.clientChallenge);
    throw await whyNotRefreshed(db, tokenHash, refresh, refresh.client.id);
  }
  // Now and then, forget tokens long past use.
  if (Math.random() < 0.01) await forgetOldRefreshTokens(db).catch(() => {});
  return {
    user: { svc_id: row.user_id, email: row.email, name: row.name, org: { id: row.org_id, name: row.org_name } },
    scope: row.scope,
    nonce: null,
    // OpenID Connect Core 12.2: the refreshed ID token says the family's first sign-in, not this refresh.
    authTime: row.auth_time,
    amr: row.amr,
    resource: row.resource,
  };
}

const invalidRefreshToken = (detail: string) => new OAuthProblem('invalid_refresh_token', 'invalid_grant', detail);

/** After a failed rotation by an authenticated client: the reason. A spent token of this client revokes its family. */
async function whyNotRefreshed(
  db: Db,
  tokenHash: Buffer,
  { scope: requested, resource, familyMaxSeconds }: Refresh,
  clientId: string,
): Promise<OAuthProblem> {
  const found = await db.query<{
    family_id: string;
    client_id: string;
    scope: string;
    used: boolean;
    revoked: boolean;
    expired: boolean;
    family_ended: boolean;
    resource: string | null;
  }>(
    `SELECT family_id, client_id, scope, used_at IS NOT NULL AS used, revoked_at IS NOT NULL AS revoked,
            expires_at <= now() AS expired, family_started_at <= now() - make_interval(secs => $2) AS family_ended,
            resource
       FROM sso_refresh_tokens WHERE token_hash = $1`,
    [tokenHash, familyMaxSeconds],
  );
  const token = found.rows[0];
  const unknown = invalidRefreshToken('The refresh token is not valid for this client.');
  if (!token || token.client_id !== clientId) return unknown;
  if (token.used) {
    // RFC 9700 §4.14.2: a refresh token used twice may have been stolen; its whole family stops working.
    await revokeFamily(db, token.family_id);
    return new OAuthProblem(
      'refresh_token_reused',
      'invalid_grant',
      'The refresh token was already used; every token issued from its sign-in is revoked. Start a new sign-in.',
    );
  }
  if (token.revoked) return invalidRefreshToken('The refresh token is revoked. Start a new sign-in.');
  if (token.family_ended) {
    // Past the family's absolute lifetime nothing of that sign-in may live on: its access tokens end too.
    await revokeFamily(db, token.family_id);
    return invalidRefreshToken('The sign-in is older than refresh tokens may extend it. Start a new sign-in.');
  }
  if (token.expired) return invalidRefreshToken('The refresh token has expired. Start a new sign-in.');
  if (narrowScope(token.scope, requested) === undefined)
    return new OAuthProblem('invalid_scope', 'invalid_scope', 'The scope asks for more than the sign-in granted.');
  if (resource !== undefined && token.resource !== resource)
    return new OAuthProblem('invalid_target', 'invalid_target', 'The resource differs from the one the sign-in named.');
  return invalidRefreshToken('The refresh token is no longer valid. Start a new sign-in.'); // the grant is revoked
}

/**
 * Revokes a family: its refresh tokens and every access token issued from it. Its rows are locked first, so a rotation
 * in flight finishes before the revoking statements read, and they see (and revoke) the tokens it issued.
 */
export async function revokeFamily(db: Db, familyId: string): Promise<void> {
  await inTransaction(db, async (client) => {
    await client.query('SELECT 1 FROM sso_refresh_tokens WHERE family_id = $1 ORDER BY token_hash FOR UPDATE', [
      familyId,
    ]);
    await client.query('UPDATE sso_refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [
      familyId,
    ]);
    await client.query('UPDATE sso_access_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [
      familyId,
    ]);
  });
}

/** Revokes the families a code started (a replayed code: whatever its first exchange issued stops working). */
export async function revokeFamiliesOfCode(db: Db, codeHash: Buffer): Promise<void> {
  const families = await db.query<{ family_id: string }>(
    'SELECT DISTINCT family_id FROM sso_refresh_tokens WHERE code_hash = $1',
    [codeHash],
  );
  for (const { family_id } of families.rows) await revokeFamily(db, family_id);
}

/**
 * Ends the user's refresh tokens: for one client (a revoked grant) or for every client (a password change or reset,
 * "sign out everywhere"). Runs inside the caller's transaction, after it locked the user's grants: every rotation that
 * holds a grant has committed by then, and one that comes later finds its token revoked.
 */
export async function endRefreshTokens(client: DbClient, userId: string, clientId?: string): Promise<void> {
  await client.query(
    `UPDATE sso_refresh_tokens SET revoked_at = now()
      WHERE user_id = $1 AND ($2::text IS NULL OR client_id = $2) AND revoked_at IS NULL`,
    [userId, clientId ?? null],
  );
}

/** Now and then, forget refresh tokens long past use (a week after expiry, so that late reuse is still recognised). */
export async function forgetOldRefreshTokens(db: Db): Promise<void> {
  await db.query(`DELETE FROM sso_refresh_tokens WHERE expires_at < now() - interval '7 days'`);
}
