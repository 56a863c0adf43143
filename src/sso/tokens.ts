// What the OpenID Connect token endpoint issues: a JWT access token (RFC 9068) and an ID token, both signed with the
// current signing key and verifiable with the published JWKS. Each access token also has a row named by its jti
// (sso_access_tokens), which revocation, a revoked grant or "sign out everywhere" marks: a token is live only while
// its signature verifies with a published key and its row is live, so a revoked token is refused although its
// signature stays valid.
import { randomUUID } from 'node:crypto';
import { SignJWT, createLocalJWKSet, jwtVerify } from 'jose';
import type { Db } from '../db.ts';
import { SIGNING_ALG, currentSigningKey, publishedKeys, type RotationPolicy } from './signing-keys.ts';
import type { Redeemed } from './codes.ts';
import { subjectFor } from './subjects.ts';
import { authenticationClaims, scopedClaims } from './claims.ts';

/** RFC 9068 §2.1: the typ of a JWT access token, which no ID token or logout token carries. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';

/** The jti of a new access token, which its row is named by. */
export const newAccessTokenId = () => randomUUID();

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether a presented token has the shape of a JWT (before any database work). */
export const looksLikeJwt = (token: string) => token.length <= 8192 && COMPACT_JWS.test(token);

export interface AccessTokenClaims {
  /** The sign-in's resource (RFC 8707), or the client when it named none. */
  audience: string;
  /** The subject the client knows the user by (pairwise for a pairwise client). */
  subject: string;
  clientId: string;
  scope: string;
  jti: string;
  ttlSeconds: number;
}

/** Signs an access token with the current key: typ at+jwt, iss, sub, aud, client_id, scope, jti, iat, exp. */
export async function signAccessToken(
  db: Db,
  masterKey: Buffer,
  issuer: string,
  claims: AccessTokenClaims,
  policy?: RotationPolicy,
): Promise<string> {
  const key = await currentSigningKey(db, masterKey, policy);
  return new SignJWT({ client_id: claims.clientId, scope: claims.scope })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: ACCESS_TOKEN_TYPE })
    .setIssuer(issuer)
    .setSubject(claims.subject)
    .setAudience(claims.audience)
    .setJti(claims.jti)
    .setIssuedAt()
    .setExpirationTime(`${claims.ttlSeconds}s`)
    .sign(key.privateKey);
}

/**
 * The jti and audience of an access token whose signature verifies with a published key, of this issuer, typ
 * at+jwt, not expired; undefined otherwise. Whether it is still live is its row's to say.
 */
export async function verifyAccessToken(
  db: Pick<Db, 'query'>,
  issuer: string,
  token: string,
): Promise<{ jti: string; audience: string[] } | undefined> {
  if (!looksLikeJwt(token)) return undefined;
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: await publishedKeys(db) }), {
      issuer,
      typ: ACCESS_TOKEN_TYPE,
      algorithms: [SIGNING_ALG],
      requiredClaims: ['jti', 'exp', 'aud', 'sub', 'client_id'],
    });
    if (typeof payload.jti !== 'string' || !UUID.test(payload.jti)) return undefined;
    const audience = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
    return { jti: payload.jti, audience };
  } catch {
    return undefined; // a bad signature, a retired key, another issuer, expired, malformed: not a token of ours
  }
}

export async function signIdToken(
  db: Db,
  masterKey: Buffer,
  claims: {
    issuer: string;
    clientId: string;
    subject: string;
    redeemed: Redeemed;
    ttlSeconds: number;
    pairwise: boolean;
  },
  policy?: RotationPolicy,
): Promise<string> {
  const key = await currentSigningKey(db, masterKey, policy);
  const { user, nonce, authTime, scope } = claims.redeemed;
  const chosen = await db.query<{ locale: string | null; time_zone: string | null }>(
    'SELECT CASE WHEN locale_chosen THEN locale END AS locale, time_zone FROM users WHERE id = $1',
    [user.svc_id],
  );
  const { locale = null, time_zone = null } = chosen.rows[0] ?? {};
  return new SignJWT({
    ...(nonce ? { nonce } : {}),
    ...(authTime ? { auth_time: Math.floor(authTime.getTime() / 1000) } : {}),
    ...scopedClaims({ ...user, locale, time_zone }, scope, claims.pairwise),
    ...authenticationClaims(claims.redeemed.amr),
  })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' })
    .setIssuer(claims.issuer)
    .setSubject(claims.subject)
    .setAudience(claims.clientId)
    .setIssuedAt()
    .setExpirationTime(`${claims.ttlSeconds}s`)
    .sign(key.privateKey);
}

/**
 * The user behind a live access token, as userinfo claims (those its scope selects: src/sso/claims.ts); undefined when unknown, expired or revoked, or when its
 * client is disabled (or its marketplace inactive): a client an administrator stopped stops reading profiles at once.
 */
export async function userInfo(db: Db, masterKey: Buffer, issuer: string, token: string) {
  const verified = await verifyAccessToken(db, issuer, token);
  if (!verified) return undefined;
  const result = await db.query<{
    scope: string;
    user_id: string;
    email: string;
    locale: string | null;
    time_zone: string | null;
    name: string;
    org_id: string;
    org_name: string;
    client_id: string;
    subject_type: 'public' | 'pairwise';
    redirect_uris: string[];
  }>(
    `SELECT t.scope, u.id AS user_id, u.email, u.name, o.id AS org_id, o.name AS org_name,
            CASE WHEN u.locale_chosen THEN u.locale END AS locale, u.time_zone,
            c.client_id, c.subject_type, c.redirect_uris
       FROM sso_access_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.owner_id = u.id AND o.personal
       JOIN sso_clients c ON c.client_id = t.client_id LEFT JOIN marketplaces m ON m.id = c.marketplace_id
      WHERE t.jti = $1 AND t.revoked_at IS NULL AND t.expires_at > now()
        AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)`,
    [verified.jti],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const pairwise = row.subject_type === 'pairwise';
  const claims = scopedClaims({ ...row, org: { id: row.org_id, name: row.org_name } }, row.scope, pairwise);
  // A pairwise client learns no identifier that other clients share: no svc_id, no organization id.
  if (pairwise) return { sub: subjectFor(masterKey, row, row.user_id), ...claims };
  return { sub: row.user_id, svc_id: row.user_id, ...claims };
}
