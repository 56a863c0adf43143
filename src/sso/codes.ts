// Authorization codes (ac_): single use, short-lived, bound to the client, the redirect URI and the PKCE challenge,
// stored only as hashes. Redeeming is one conditional UPDATE, so of concurrent exchanges of one code exactly one wins;
// the same statement checks the client and the user's grant to it and records the access token it issues, so a replay
// always finds (and revokes) it, and a revocation never misses it.
import { createHash } from 'node:crypto';
import type { Db } from '../db.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { OAuthProblem, invalidClient } from './oauth-problem.ts';
import { authenticateClient } from './clients.ts';
import type { ProblemCode } from '../http/problem-catalog.ts';
import { newFamilyId, revokeFamiliesOfCode } from './refresh-tokens.ts';

export const CODE_PREFIX = 'ac_';

export interface CodeGrant {
  clientId: string;
  userId: string;
  redirectUri: string;
  scope: string;
  nonce?: string;
  codeChallenge?: string;
  authTime?: Date;
  /** RFC 8707: the resource the sign-in's access tokens are for (src/sso/resources.ts). */
  resource?: string;
  /** Issued to the spec's authorize with the user's cabinet token (no consent page), not after a browser's consent. */
  viaCabinetToken?: boolean;
  /** How the user signed in (RFC 8176), for the ID token's amr and acr (src/sso/claims.ts). */
  amr?: readonly string[];
}

/** The profile the JSON token exchange (POST /sso/token) answers with, and what the code was issued for. */
export interface Redeemed {
  user: { svc_id: string; email: string; name: string; org: { id: string; name: string } };
  scope: string;
  nonce: string | null;
  authTime: Date | null;
  /** Whether the refresh token asked for was issued (the scope has offline_access; src/sso/refresh-tokens.ts). */
  refreshIssued?: boolean;
  /** The audience of the access token issued (RFC 8707 resource), or null. */
  resource?: string | null;
  /** The code came from the spec's authorize with the user's cabinet token, not from a browser's consent. */
  viaCabinetToken?: boolean;
  /** How the user signed in (RFC 8176), when the code recorded it. */
  amr?: string[] | null;
}

export async function issueCode(db: Db, grant: CodeGrant, ttlSeconds: number): Promise<string> {
  const code = newSecret(CODE_PREFIX);
  await db.query(
    `INSERT INTO sso_codes (code_hash, client_id, user_id, redirect_uri, scope, nonce, code_challenge, auth_time, expires_at, resource, via_cabinet_token, amr)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9), $10, $11, $12)`,
    [
      hashSecret(code),
      grant.clientId,
      grant.userId,
      grant.redirectUri,
      grant.scope,
      grant.nonce ?? null,
      grant.codeChallenge ?? null,
      grant.authTime ?? null,
      ttlSeconds,
      grant.resource ?? null,
      grant.viaCabinetToken ?? false,
      grant.amr ?? null,
    ],
  );
  // Now and then, forget codes long past use (kept a day after expiry so that replays are still recognised).
  if (Math.random() < 0.01)
    await db.query(`DELETE FROM sso_codes WHERE expires_at < now() - interval '1 day'`).catch(() => {});
  return code;
}

/** base64url(SHA-256(verifier)): the S256 challenge of a PKCE verifier (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export interface Redemption {
  code: string;
  /** secret undefined: a public client, whose code must have a PKCE challenge and come with its verifier. */
  client: { id: string; secret: string | undefined };
  redirectUri: string;
  codeVerifier?: string;
  /** The access token (its jti) to record with the code (the OpenID Connect endpoint), or none (POST /sso/token). */
  accessToken?: { jti: string; ttlSeconds: number };
  /** With accessToken: a refresh token to record, starting a family, when the code's scope has offline_access. */
  refreshToken?: { token: string; ttlSeconds: number };
  /** WWW-Authenticate for invalid_client, when the client authenticated with a scheme (HTTP Basic). */
  clientChallenge?: string;
  /** RFC 8707 at the token request: when given, it must be the resource the authorize step named. */
  resource?: string;
}

/**
 * Authenticates the client and consumes its code in one statement (the hot path is one round trip), answering the
 * user's profile; otherwise 401 invalid_client or a 400 naming exactly what is wrong with the code.
 */
export async function redeemCode(db: Db, redemption: Redemption): Promise<Redeemed> {
  const codeHash = hashSecret(redemption.code);
  const secretHash = redemption.client.secret === undefined ? null : hashSecret(redemption.client.secret);
  if (secretHash === null && redemption.codeVerifier === undefined) {
    // RFC 9700 §2.1.1: a public client's code is bound to its PKCE verifier; without one the code is refused.
    if (!(await authenticateClient(db, redemption.client.id, undefined)))
      throw invalidClient(redemption.clientChallenge);
    throw new OAuthProblem(
      'invalid_code_verifier',
      'invalid_grant',
      'A public client must use PKCE: send the code_verifier of the authorize step’s code_challenge.',
    );
  }
  // Without a verifier only a code issued without a challenge matches; a verifier for a code without one never does.
  const challenge = redemption.codeVerifier === undefined ? null : s256(redemption.codeVerifier);
  const result = await db.query<{
    code_hash: Buffer;
    secret_hash: Buffer;
    user_id: string;
    email: string;
    name: string;
    org_id: string;
    org_name: string;
    scope: string;
    nonce: string | null;
    auth_time: Date | null;
    refreshed: boolean;
    resource: string | null;
    via_cabinet_token: boolean;
    amr: string[] | null;
  }>(
    `WITH client AS (
       SELECT c.client_id, c.secret_hash FROM sso_clients c LEFT JOIN marketplaces m ON m.id = c.marketplace_id
        WHERE c.client_id = $2 AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)
          AND CASE WHEN $7::bytea IS NULL THEN c.token_endpoint_auth_method = 'none'
                   ELSE c.token_endpoint_auth_method <> 'none' AND c.secret_hash = $7 END
     ), live_grant AS (
       -- Held shared until this exchange commits: a revocation (the site's, or every site's) locks the grant first,
       -- so it either waits for this token and revokes it, or this exchange finds the grant or the code dead.
       SELECT 1 FROM sso_grants g JOIN sso_codes k ON k.user_id = g.user_id AND k.client_id = g.client_id
        WHERE k.code_hash = $1 AND g.client_id = $2 AND g.revoked_at IS NULL FOR SHARE OF g
     ), consumed AS (
       UPDATE sso_codes SET consumed_at = now()
        WHERE code_hash = $1 AND client_id = (SELECT client_id FROM client) AND redirect_uri = $3
          AND code_challenge IS NOT DISTINCT FROM $4 AND consumed_at IS NULL AND expires_at > now() AND EXISTS (SELECT 1 FROM live_grant)
          AND ($11::text IS NULL OR resource = $11)
       RETURNING code_hash, client_id, user_id, scope, nonce, auth_time, resource, via_cabinet_token, amr
     ), refreshed AS (
       INSERT INTO sso_refresh_tokens (token_hash, family_id, code_hash, client_id, user_id, scope, auth_time, expires_at, resource, amr)
       SELECT $8, $10, code_hash, client_id, user_id, scope, auth_time, now() + make_interval(secs => $9), resource, amr FROM consumed
        WHERE $5::uuid IS NOT NULL AND $8::bytea IS NOT NULL AND scope ~ '(^|[[:space:]])offline_access([[:space:]]|$)'
       RETURNING family_id
     ), issued AS (
       INSERT INTO sso_access_tokens (jti, code_hash, family_id, client_id, user_id, scope, expires_at, audience)
       SELECT $5, code_hash, (SELECT family_id FROM refreshed), client_id, user_id, scope, now() + make_interval(secs => $6),
              resource
         FROM consumed WHERE $5::uuid IS NOT NULL
     )
     SELECT c.code_hash, k.secret_hash, c.user_id, u.email, u.name, o.id AS org_id, o.name AS org_name, c.scope, c.nonce, c.auth_time,
            EXISTS (SELECT 1 FROM refreshed) AS refreshed, c.resource, c.via_cabinet_token, c.amr
       FROM consumed c CROSS JOIN client k JOIN users u ON u.id = c.user_id JOIN organizations o ON o.owner_id = u.id AND o.personal`,
    [
      codeHash,
      redemption.client.id,
      redemption.redirectUri,
      challenge,
      redemption.accessToken?.jti ?? null,
      redemption.accessToken?.ttlSeconds ?? 0,
      secretHash,
      redemption.refreshToken ? hashSecret(redemption.refreshToken.token) : null,
      redemption.refreshToken?.ttlSeconds ?? 0,
      newFamilyId(),
      redemption.resource ?? null,
    ],
  );
  const row = result.rows[0];
  if (!row || !safeEqual(codeHash, row.code_hash) || (secretHash !== null && !safeEqual(secretHash, row.secret_hash))) {
    if (!(await authenticateClient(db, redemption.client.id, redemption.client.secret)))
      throw invalidClient(redemption.clientChallenge);
    throw await whyNotRedeemed(
      db,
      codeHash,
      redemption.client.id,
      redemption.redirectUri,
      challenge,
      redemption.resource,
    );
  }
  return {
    user: { svc_id: row.user_id, email: row.email, name: row.name, org: { id: row.org_id, name: row.org_name } },
    scope: row.scope,
    nonce: row.nonce,
    authTime: row.auth_time,
    refreshIssued: row.refreshed,
    resource: row.resource,
    viaCabinetToken: row.via_cabinet_token,
    amr: row.amr,
  };
}

/** After a failed redemption: the reason, in the order an integrator can act on. A replay revokes the code's tokens. */
async function whyNotRedeemed(
  db: Db,
  codeHash: Buffer,
  clientId: string,
  redirectUri: string,
  challenge: string | null,
  resource?: string,
): Promise<OAuthProblem> {
  const found = await db.query<{
    client_id: string;
    redirect_uri: string;
    code_challenge: string | null;
    consumed: boolean;
    expired: boolean;
    resource: string | null;
  }>(
    `SELECT client_id, redirect_uri, code_challenge, consumed_at IS NOT NULL AS consumed, expires_at <= now() AS expired,
            resource
       FROM sso_codes WHERE code_hash = $1`,
    [codeHash],
  );
  const code = found.rows[0];
  const grantProblem = (problemCode: ProblemCode, detail: string) =>
    new OAuthProblem(problemCode, 'invalid_grant', detail);
  const unknown = grantProblem('invalid_code', 'The authorization code is not valid for this client.');
  if (!code) return unknown;
  if (code.consumed) {
    // RFC 6749 §4.1.2: a code used twice may have been stolen; whatever the first use issued stops working.
    await revokeFamiliesOfCode(db, codeHash);
    await db.query('UPDATE sso_access_tokens SET revoked_at = now() WHERE code_hash = $1 AND revoked_at IS NULL', [
      codeHash,
    ]);
    return code.client_id === clientId
      ? grantProblem(
          'code_already_used',
          'The authorization code is already used; tokens issued with it are revoked. Start a new sign-in.',
        )
      : unknown;
  }
  if (code.client_id !== clientId) return unknown;
  if (code.expired) return grantProblem('code_expired', 'The authorization code has expired. Start a new sign-in.');
  if (code.redirect_uri !== redirectUri) {
    return grantProblem('redirect_uri_mismatch', 'The redirect_uri differs from the one given at the authorize step.');
  }
  if (code.code_challenge === null && challenge !== null) {
    return grantProblem(
      'invalid_code_verifier',
      'A code_verifier was sent, but the authorize step had no code_challenge.',
    );
  }
  if (code.code_challenge !== challenge) {
    return grantProblem(
      'invalid_code_verifier',
      challenge === null
        ? 'The code_verifier is required: the authorize step had a code_challenge.'
        : 'The code_verifier does not match the code_challenge.',
    );
  }
  if (resource !== undefined && code.resource !== resource) {
    return new OAuthProblem(
      'invalid_target',
      'invalid_target',
      code.resource === null
        ? 'The authorize step named no resource; leave resource out of the token request.'
        : 'The resource differs from the one the authorize step named.',
    );
  }
  return unknown; // consumed or expired between the two statements
}
