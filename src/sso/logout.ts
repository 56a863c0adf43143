// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) at GET|POST /sso/oidc/logout, the discovery's
// end_session_endpoint. The site sends the browser with id_token_hint (an ID token we signed: its signature is checked
// with our keys, its expiry is not, so a site can sign out a user whose token has lapsed), client_id,
// post_logout_redirect_uri and state. The redirect URI must be one the client registered in post_logout_redirect_uris,
// compared exactly, and is checked before anything changes: a wrong one is an error page, never a redirect. Then the
// browser's cabinet session ends (unless the hint names another person), that client's access and refresh tokens for
// the user end, and the other clients with a back-channel logout URI are told (src/sso/backchannel.ts).
import { compactVerify, createLocalJWKSet } from 'jose';
import { z } from 'zod';
import type { Context } from 'koa';
import type { Api } from '../http/api.ts';
import { FORM_LIMIT_BYTES } from '../http/body.ts';
import { html } from '../http/html.ts';
import { inTransaction, type Db } from '../db.ts';
import type { Services } from '../services.ts';
import { translator } from '../web/i18n.ts';
import { CABINET_SITE, csrfField } from '../web/layout.ts';
import { readForm, send, type Page } from '../web/page.ts';
import { SESSION_COOKIE, pageUser, readCookie, sameToken, setCookie } from '../web/session.ts';
import { hashSecret } from '../secrets.ts';
import { findClient, type SsoClient } from './clients.ts';
import { ssoLang, ssoTranslator, type SsoMessage, type SsoTranslate } from './i18n.ts';
import { endRefreshTokens } from './refresh-tokens.ts';
import { publishedKeys } from './signing-keys.ts';
import { queueBackchannelLogout } from './backchannel.ts';
import { userOfSubject } from './subjects.ts';

export const LOGOUT_PATH = '/sso/oidc/logout';

// As the authorize step's: a value that is not one string is absent (the URL's own limit bounds the length).
const text = (description: string) => z.string().optional().catch(undefined).describe(description);
const LogoutParams = z.object({
  id_token_hint: text('An ID token this provider issued to the client (an expired one is accepted)'),
  client_id: text('The client; required with post_logout_redirect_uri unless id_token_hint names it'),
  post_logout_redirect_uri: text('One of the client’s registered post_logout_redirect_uris, exactly'),
  state: text('Passed back to post_logout_redirect_uri'),
  ui_locales: text('`ru` or `en` for the page'),
});
/** The confirmation form's own fields (POST only). */
const CONFIRM_FIELDS = ['_csrf'] as const;
type LogoutParams = z.infer<typeof LogoutParams>;

class LogoutRefusal extends Error {
  constructor(readonly key: SsoMessage & `logout_${string}`) {
    super(key);
  }
}

/** The hint's claims when we signed it (any published key), whatever its expiry; undefined otherwise. */
export async function verifyIdTokenHint(
  db: Db,
  issuer: string,
  hint: string,
): Promise<{ aud: string[]; sub: string } | undefined> {
  try {
    const { payload, protectedHeader } = await compactVerify(
      hint,
      createLocalJWKSet({ keys: await publishedKeys(db) }),
    );
    // Our access tokens (at+jwt) and logout tokens (logout+jwt) are signed with the same keys: only an ID token hints.
    if (protectedHeader.typ !== undefined && protectedHeader.typ.toUpperCase() !== 'JWT') return undefined;
    const claims = JSON.parse(new TextDecoder().decode(payload)) as { iss?: unknown; aud?: unknown; sub?: unknown };
    const aud = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
    if (claims.iss !== issuer || typeof claims.sub !== 'string' || !Array.isArray(aud) || aud.length === 0)
      return undefined;
    if (!aud.every((value): value is string => typeof value === 'string')) return undefined;
    return { aud, sub: claims.sub };
  } catch {
    return undefined;
  }
}

/** What the request asks, checked before anything changes; a LogoutRefusal otherwise. */
async function checkRequest(services: Services, params: LogoutParams) {
  const hint = params.id_token_hint
    ? await verifyIdTokenHint(services.db, services.config.BASE_URL, params.id_token_hint)
    : undefined;
  if (params.id_token_hint && !hint) throw new LogoutRefusal('logout_hint_invalid');
  if (hint && params.client_id && !hint.aud.includes(params.client_id)) throw new LogoutRefusal('logout_hint_invalid');
  const clientId = params.client_id ?? hint?.aud[0];
  const client = clientId ? await findClient(services.db, clientId) : undefined;
  if (clientId && !client) throw new LogoutRefusal('logout_client_unknown');
  const target = params.post_logout_redirect_uri;
  if (target !== undefined && !(client && client.post_logout_redirect_uris.includes(target)))
    throw new LogoutRefusal('logout_redirect_not_allowed');
  const hintUser = hint && client ? await userOfSubject(services.db, client, hint.sub) : undefined;
  return { client, hinted: hint !== undefined, hintUser, target };
}

/** Ends the client's tokens for the user (the grant, and so consent, stays), locking the grant as a revocation does. */
async function endClientTokens(db: Db, userId: string, client: SsoClient): Promise<void> {
  await inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM sso_grants WHERE user_id = $1 AND client_id = $2 FOR UPDATE', [
      userId,
      client.client_id,
    ]);
    await endRefreshTokens(tx, userId, client.client_id);
    await tx.query(
      'UPDATE sso_access_tokens SET revoked_at = now() WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL',
      [userId, client.client_id],
    );
  });
}

/** Deletes this browser's cabinet session when it is the user's (any user's when userId is undefined); its user. */
async function endBrowserSession(ctx: Context, services: Services, userId?: string): Promise<string | undefined> {
  const token = readCookie(ctx, SESSION_COOKIE);
  if (!token) return undefined;
  const ended = await services.db.query<{ user_id: string }>(
    'DELETE FROM cabinet_sessions WHERE token_hash = $1 AND ($2::uuid IS NULL OR user_id = $2) RETURNING user_id',
    [hashSecret(token), userId ?? null],
  );
  const user = ended.rows[0]?.user_id;
  if (user) setCookie(ctx, services, SESSION_COOKIE, '', 0);
  return user;
}

export function logoutRoutes(api: Api, services: Services): void {
  const handle = async (ctx: Context, params: LogoutParams, confirmation?: string) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    );
    const lang = ssoLang(undefined, params.ui_locales, ctx.get('Accept-Language'));
    const st: SsoTranslate = ssoTranslator(lang);
    const p: Page = { ctx, lang, t: translator(lang), site: CABINET_SITE };
    let checked;
    try {
      checked = await checkRequest(services, params);
    } catch (error) {
      if (!(error instanceof LogoutRefusal)) throw error;
      send(
        p,
        400,
        st('logoutErrorTitle'),
        html`<h1>${st('logoutErrorTitle')}</h1>
<p>${st(error.key)}</p>
<p class="hint" data-code="${error.key}">${error.key}</p>`,
      );
      return;
    }
    const { client, hinted, hintUser, target } = checked;
    // Without an ID token any page could sign the person out (a logout CSRF): a signed-in browser confirms first, on a
    // form carrying its session's CSRF token.
    if (!params.id_token_hint) {
      const signed = await pageUser(ctx, services);
      if (signed && !sameToken(signed.csrf, confirmation)) {
        const carried = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
        const title = st('logoutConfirmTitle', { service: p.t('appName') });
        send(
          p,
          200,
          title,
          html`<h1>${title}</h1>
${client ? html`<p>${st('logoutConfirmText', { email: signed.user.email, client: client.name })}</p>` : ''}
<form method="post" action="${LOGOUT_PATH}">
${csrfField(signed.csrf)}${carried.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}
<div class="actions"><button type="submit">${st('logoutConfirmButton')}</button></div>
</form>`,
        );
        return;
      }
    }
    // The browser's session ends when it is the hint's person (or there is no hint); another person's stays.
    // A hint whose person we cannot find (an account since deleted) ends no session: it may be someone else's.
    const sessionUser = hinted && !hintUser ? undefined : await endBrowserSession(ctx, services, hintUser);
    const user = hintUser ?? sessionUser;
    if (user) {
      if (client) await endClientTokens(services.db, user, client);
      await queueBackchannelLogout(services.db, user, {
        except: client?.client_id,
        issuer: services.config.BASE_URL,
      });
    }
    if (target) {
      const back = new URL(target);
      if (params.state !== undefined) back.searchParams.set('state', params.state);
      ctx.status = 303;
      ctx.redirect(back.toString());
      return;
    }
    send(
      p,
      200,
      st('logoutTitle'),
      html`<h1>${st('logoutTitle')}</h1><p>${st('logoutText', { service: p.t('appName') })}</p>`,
    );
  };

  const common = {
    tags: ['OpenID Connect'],
    security: ['anonymous'],
    summary: 'RP-initiated logout (end_session_endpoint)',
    description:
      'The browser comes from the site with `id_token_hint` (an ID token we issued to it; an expired one is accepted), ' +
      '`client_id`, `post_logout_redirect_uri` and `state`. The redirect URI must be one the client registered in ' +
      '`post_logout_redirect_uris`, exactly: otherwise, and for a hint we did not sign or an unknown client, a 400 page ' +
      'and nothing changes. Then the browser’s svc ID session ends (unless the hint names another person), the ' +
      'client’s access and refresh tokens for the person end, and the other sites with a back-channel logout URI get ' +
      'a logout_token. 303 back to the redirect URI with `state`, or a page saying the person is signed out. Without ' +
      '`id_token_hint` a signed-in browser is asked first: a page whose form POSTs the same parameters with `_csrf`.',
    responses: {
      200: { description: 'Signed out: a page; or, without id_token_hint, the confirmation', contentType: 'text/html' },
      303: { description: 'Signed out: back to post_logout_redirect_uri with state' },
      400: {
        description: 'A hint, client or redirect URI refused: a page, never a redirect',
        contentType: 'text/html',
      },
    },
  };

  api.route({
    ...common,
    method: 'get',
    path: LOGOUT_PATH,
    operationId: 'oidcLogout',
    query: LogoutParams,
    handler: async (ctx, { query }) => handle(ctx, query),
  });

  api.route({
    ...common,
    method: 'post',
    path: LOGOUT_PATH,
    operationId: 'oidcLogoutPost',
    rawBody: {
      contentType: 'application/x-www-form-urlencoded',
      description: 'The same parameters as the GET (none: as the GET without any)',
      required: false,
    },
    bodyLimitBytes: FORM_LIMIT_BYTES,
    handler: async (ctx) => {
      const form = await readForm(ctx);
      const parsed = LogoutParams.parse(
        Object.fromEntries(Object.keys(LogoutParams.shape).map((name) => [name, form.get(name) ?? undefined])),
      );
      await handle(ctx, parsed, form.get(CONFIRM_FIELDS[0]) ?? undefined);
    },
  });
}
