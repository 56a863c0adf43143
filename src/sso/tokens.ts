// What the OpenID Connect token endpoint issues: an opaque access token for userinfo (stored as a hash, revocable)
// and an ID token signed with the current signing key.
import { SignJWT } from 'jose';
import type { Db } from '../db.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { SIGNING_ALG, currentSigningKey } from './signing-keys.ts';
import type { Redeemed } from './codes.ts';
import { subjectFor } from './subjects.ts';

export const ACCESS_TOKEN_PREFIX = 'at_';

export const newAccessToken = () => newSecret(ACCESS_TOKEN_PREFIX);

export async function signIdToken(
  db: Db,
  masterKey: Buffer,
  claims: { issuer: string; clientId: string; subject: string; redeemed: Redeemed; ttlSeconds: number },
): Promise<string> {
  const key = await currentSigningKey(db, masterKey);
  const { user, nonce, authTime } = claims.redeemed;
  return new SignJWT({
    ...(nonce ? { nonce } : {}),
    ...(authTime ? { auth_time: Math.floor(authTime.getTime() / 1000) } : {}),
    email: user.email,
    name: user.name,
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
 * The user behind a live access token, as userinfo claims; undefined when unknown, expired or revoked, or when its
 * client is disabled (or its marketplace inactive): a client an administrator stopped stops reading profiles at once.
 */
export async function userInfo(db: Db, masterKey: Buffer, token: string) {
  const presented = hashSecret(token);
  const result = await db.query<{
    token_hash: Buffer;
    user_id: string;
    email: string;
    name: string;
    org_id: string;
    org_name: string;
    client_id: string;
    subject_type: 'public' | 'pairwise';
    redirect_uris: string[];
  }>(
    `SELECT t.token_hash, u.id AS user_id, u.email, u.name, o.id AS org_id, o.name AS org_name,
            c.client_id, c.subject_type, c.redirect_uris
       FROM sso_access_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.owner_id = u.id AND o.personal
       JOIN sso_clients c ON c.client_id = t.client_id LEFT JOIN marketplaces m ON m.id = c.marketplace_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now()
        AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)`,
    [presented],
  );
  const row = result.rows[0];
  if (!row || !safeEqual(presented, row.token_hash)) return undefined;
  // A pairwise client learns no identifier that other clients share: no svc_id, no organization id.
  if (row.subject_type === 'pairwise')
    return { sub: subjectFor(masterKey, row, row.user_id), email: row.email, name: row.name };
  return {
    sub: row.user_id,
    svc_id: row.user_id,
    email: row.email,
    name: row.name,
    org: { id: row.org_id, name: row.org_name },
  };
}
