// The widget token: a short-lived HS256 JWT (jose) for one deal of one marketplace. Its key is derived from the
// master key, so nothing is stored and every instance of the main server can check it.
import { randomUUID } from 'node:crypto';
import { SignJWT, errors, jwtVerify } from 'jose';
import { problem, unauthorized } from '../http/problem.ts';
import { keyedDigest } from '../secrets.ts';

const ALGORITHM = 'HS256';
// Our own type and audience: no other JWT of the service (SSO id_token) can pass for a widget token.
const TYPE = 'svc-widget+jwt';
const AUDIENCE = 'svc-widget';

export interface WidgetClaims {
  dealId: string;
  marketplaceId: string;
}

const keys = new WeakMap<Buffer, Uint8Array>();

function signingKey(masterKey: Buffer): Uint8Array {
  let key = keys.get(masterKey);
  if (!key) {
    key = Buffer.from(keyedDigest(masterKey, 'widget-token', 'v1'), 'base64url');
    keys.set(masterKey, key);
  }
  return key;
}

/** A fresh token (unique jti, so a repeat never hands out the same string) and when it expires. */
export async function issueWidgetToken(
  masterKey: Buffer,
  claims: WidgetClaims,
  ttlSeconds: number,
  now = Math.floor(Date.now() / 1000),
): Promise<{ token: string; expiresAt: Date }> {
  const exp = now + ttlSeconds;
  const token = await new SignJWT({ mkt: claims.marketplaceId })
    .setProtectedHeader({ alg: ALGORITHM, typ: TYPE })
    .setSubject(claims.dealId)
    .setAudience(AUDIENCE)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(signingKey(masterKey));
  return { token, expiresAt: new Date(exp * 1000) };
}

/** The claims of a valid token; 401 for anything else (the widget renews on `widget_token_expired`). */
export async function verifyWidgetToken(masterKey: Buffer, token: string): Promise<WidgetClaims> {
  try {
    const { payload } = await jwtVerify(token, signingKey(masterKey), {
      algorithms: [ALGORITHM],
      typ: TYPE,
      audience: AUDIENCE,
      requiredClaims: ['sub', 'exp', 'mkt'],
    });
    if (typeof payload.mkt !== 'string')
      throw new errors.JWTClaimValidationFailed('mkt must be a string', payload, 'mkt');
    return { dealId: payload.sub!, marketplaceId: payload.mkt };
  } catch (error) {
    if (error instanceof errors.JWTExpired) {
      throw problem(
        'widget_token_expired',
        'The widget token has expired; repeat the widget deal creation for a fresh one.',
      );
    }
    if (error instanceof errors.JOSEError) throw unauthorized('The widget token is not valid.');
    throw error;
  }
}
