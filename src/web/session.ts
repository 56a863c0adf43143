// The web pages' session: the cabinet token (ct_…) kept in an HttpOnly cookie for the whole site, so the cabinet and
// the SSO authorize step share one sign-in, and CSRF tokens for every form.
// A form's token is an HMAC of the session token (or, before sign-in, of a random pre-session cookie) with the master
// key, so nothing extra is stored and a token from one session is useless in another.
import type { Context, Middleware } from 'koa';
import type { Services } from '../services.ts';
import { keyedDigest, newSecret, safeEqual } from '../secrets.ts';
import { CABINET_TOKEN_PREFIX, requireCabinetUser, revokeSession, sessionForToken } from '../accounts/sessions.ts';
import type { Session } from '../accounts/operations.ts';
import { endSessionTellingSites } from '../sso/backchannel.ts';

export const SESSION_COOKIE = 'svc_session';
const PRE_SESSION_COOKIE = 'svc_pre';
const PRE_SESSION_SECONDS = 24 * 3600;
export const LANG_COOKIE = 'svc_lang';

export function readCookie(ctx: Context, name: string): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * Written by hand rather than with ctx.cookies: behind a TLS-terminating proxy Koa sees http and would refuse a
 * Secure cookie. Values here are our own base64url tokens and fixed words, so they need no encoding.
 */
export function setCookie(ctx: Context, services: Services, name: string, value: string, maxAgeSeconds: number): void {
  const secure = services.config.BASE_URL.startsWith('https:') ? '; Secure' : '';
  ctx.append('Set-Cookie', `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`);
}

function sessionToken(ctx: Context): string | undefined {
  const token = readCookie(ctx, SESSION_COOKIE);
  return token?.startsWith(CABINET_TOKEN_PREFIX) ? token : undefined;
}

/** The signed-in user of this browser, with the CSRF token for their forms. */
export async function pageUser(
  ctx: Context,
  services: Services,
): Promise<(NonNullable<Awaited<ReturnType<typeof sessionForToken>>> & { csrf: string }) | undefined> {
  const token = sessionToken(ctx);
  const session = token ? await sessionForToken(services.db, token) : undefined;
  return session && token ? { ...session, csrf: keyedDigest(services.masterKey, 'cabinet-csrf', token) } : undefined;
}

/** Sets the session cookie; a session this browser had before is revoked, so one browser holds one session. */
export async function startPageSession(ctx: Context, services: Services, session: Session): Promise<void> {
  const previous = sessionToken(ctx);
  if (previous) await revokeSession(services.db, previous);
  setCookie(ctx, services, SESSION_COOKIE, session.token, services.config.CABINET_TOKEN_TTL_SECONDS);
}

export async function endPageSession(ctx: Context, services: Services): Promise<void> {
  const token = sessionToken(ctx);
  // A sign-out reaches the person's sites with a back-channel logout URI too.
  if (token) await endSessionTellingSites(services.db, token, services.config.BASE_URL);
  setCookie(ctx, services, SESSION_COOKIE, '', 0);
}

/** The CSRF token for forms shown before sign-in (sign-in, invitation), made from a random cookie set here. */
export function preSessionCsrf(ctx: Context, services: Services): string {
  let nonce = readCookie(ctx, PRE_SESSION_COOKIE);
  if (!nonce || !/^pre_[A-Za-z0-9_-]{43}$/.test(nonce)) {
    nonce = newSecret('pre_');
    setCookie(ctx, services, PRE_SESSION_COOKIE, nonce, PRE_SESSION_SECONDS);
  }
  return keyedDigest(services.masterKey, 'cabinet-csrf-pre', nonce);
}

/** Checks a pre-session form's token against this browser's pre-session cookie. */
export function validPreSessionCsrf(ctx: Context, services: Services, presented: string | undefined): boolean {
  const nonce = readCookie(ctx, PRE_SESSION_COOKIE);
  return !!nonce && sameToken(keyedDigest(services.masterKey, 'cabinet-csrf-pre', nonce), presented);
}

/** Constant-time comparison of the expected and presented CSRF tokens. */
export function sameToken(expected: string, presented: string | undefined): boolean {
  return presented !== undefined && safeEqual(Buffer.from(expected), Buffer.from(presented));
}

/** `Authorization: Bearer ct_…` as before; without that header, the page session cookie. GET routes only. */
export function bearerOrPageSession(services: Services): Middleware {
  const bearer = requireCabinetUser(services.db);
  return async (ctx, next) => {
    const signedIn = ctx.get('Authorization') === '' ? await pageUser(ctx, services) : undefined;
    if (!signedIn) return bearer(ctx, next);
    ctx.state.user = signedIn.user;
    ctx.state.sessionId = signedIn.sessionId;
    await next();
  };
}
