// What the OpenID Connect token endpoint issues: an opaque access token for userinfo (stored as a hash, revocable)
// and an ID token signed with the current signing key.
import { SignJWT } from 'jose';
import type { Db } from '../db.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { SIGNING_ALG, currentSigningKey } from './signing-keys.ts';
import type { Redeemed } from './codes.ts';
import { subjectFor } from './subjects.ts';
import { scopedClaims } from './claims.ts';

export const ACCESS_TOKEN_PREFIX = 'at_';

export const newAccessToken = () => newSecret(ACCESS_TOKEN_PREFIX);

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
): Promise<string> {
  const key = await currentSigningKey(db, masterKey);
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
export async function userInfo(db: Db, masterKey: Buffer, token: string) {
  const presented = hashSecret(token);
  const result = await db.query<{
    token_hash: Buffer;
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
    `SELECT t.token_hash, t.scope, u.id AS user_id, u.email, u.name, o.id AS org_id, o.name AS org_name,
            CASE WHEN u.locale_chosen THEN u.locale END AS locale, u.time_zone,
            c.client_id, c.subject_type, c.redirect_uris
       FROM sso_access_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.owner_id = u.id AND o.personal
       JOIN sso_clients c ON c.client_id = t.client_id LEFT JOIN marketplaces m ON m.id = c.marketplace_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now()
        AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)`,
    [presented],
  );
  const row = result.rows[0];
  if (!row || !safeEqual(presented, row.token_hash)) return undefined;
  const pairwise = row.subject_type === 'pairwise';
  const claims = scopedClaims({ ...row, org: { id: row.org_id, name: row.org_name } }, row.scope, pairwise);
  // A pairwise client learns no identifier that other clients share: no svc_id, no organization id.
  if (pairwise) return { sub: subjectFor(masterKey, row, row.user_id), ...claims };
  return { sub: row.user_id, svc_id: row.user_id, ...claims };
}
