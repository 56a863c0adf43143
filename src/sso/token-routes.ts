// What a site's server does with the tokens it holds: revoke them (RFC 7009) and ask whether they are live (RFC 7662).
// Both endpoints are form-encoded and client-authenticated like the token endpoint. A client only ever reaches its own
// tokens: another client's token is answered as an unknown one (revocation 200 without revoking, introspection
// inactive), so the endpoints tell nobody whether a token exists. Revoking a refresh token ends its family (every
// refresh and access token of that sign-in, src/sso/refresh-tokens.ts); revoking an access token ends that token.
import { z } from 'zod';
import type { Context } from 'koa';
import type { Db } from '../db.ts';
import type { Api } from '../http/api.ts';
import { FORM_LIMIT_BYTES } from '../http/body.ts';
import { validationFailed } from '../http/problem.ts';
import type { Services } from '../services.ts';
import { hashSecret, safeEqual } from '../secrets.ts';
import { MAX_CLIENT_ID_LENGTH, authenticateClient } from './clients.ts';
import { clientCredentials, readOAuthForm } from './client-auth.ts';
import { asOAuthProblem, invalidClient, oauthFormProblemResponses, oauthJsonErrors } from './oauth-problem.ts';
import { revokeFamily } from './refresh-tokens.ts';
import { subjectFor } from './subjects.ts';
import { looksLikeJwt, verifyAccessToken } from './tokens.ts';

export const REVOKE_PATH = '/sso/oidc/revoke';
export const INTROSPECT_PATH = '/sso/oidc/introspect';

const PRINTABLE = /^[\x21-\x7e]+$/; // RFC 6749 Appendix A: VSCHAR without the space

export const TokenHint = z.enum(['access_token', 'refresh_token']);
export type TokenHint = z.infer<typeof TokenHint>;

/** The form of both endpoints (documented; unknown parameters are ignored, RFC 6749 §3.2). */
const TokenForm = z.object({
  token: z.string().min(1).max(4096).regex(PRINTABLE).describe('The access or refresh token'),
  token_type_hint: z
    .string()
    .max(64)
    .regex(PRINTABLE)
    .optional()
    .describe('`access_token` or `refresh_token`: where to look first; any other value is ignored'),
  client_id: z.string().max(MAX_CLIENT_ID_LENGTH).regex(PRINTABLE).optional().describe('client_secret_post'),
  client_secret: z.string().max(256).regex(PRINTABLE).optional().describe('client_secret_post'),
});

const Introspection = z.object({
  active: z.boolean(),
  scope: z.string().optional(),
  client_id: z.string().optional(),
  sub: z.string().optional().describe('The user’s `sub`, as in the ID token (pairwise for a pairwise client)'),
  exp: z.number().int().optional(),
  iat: z.number().int().optional(),
  aud: z
    .string()
    .optional()
    .describe('The resource (RFC 8707) the token is for, when the sign-in named one: the data server'),
  token_type: z
    .enum(['Bearer', 'refresh_token'])
    .optional()
    .describe('`Bearer` for an access token, `refresh_token` for a refresh token'),
});
type Introspection = z.infer<typeof Introspection>;

export function tokenRoutes(api: Api, services: Services): void {
  const tokens = { tags: ['OpenID Connect'] };
  const common = {
    security: ['clientSecretBasic'],
    use: [oauthJsonErrors(() => services.config.BASE_URL)],
    bodyLimitBytes: FORM_LIMIT_BYTES,
  };

  const tokenContext = (): TokenContext => ({
    db: services.db,
    issuer: services.config.BASE_URL,
    familyMaxSeconds: services.config.SSO_REFRESH_FAMILY_MAX_SECONDS,
  });

  /** The authenticated client's id and the checked form; invalid_client before anything else. */
  const readRequest = async (ctx: Context, publicAllowed: boolean) => {
    const field = await readOAuthForm(ctx);
    const credentials = clientCredentials(ctx, field('client_id'), field('client_secret'));
    // A public client may revoke its tokens (RFC 7009 §5), not introspect them (RFC 7662 §2.1).
    const client =
      credentials.secret === undefined && !publicAllowed
        ? undefined
        : await authenticateClient(services.db, credentials.id, credentials.secret);
    if (!client) throw invalidClient(credentials.challenge);
    const parsed = TokenForm.safeParse({
      token: field('token'),
      token_type_hint: field('token_type_hint'),
      client_id: field('client_id'),
      client_secret: field('client_secret'),
    });
    if (!parsed.success) throw asOAuthProblem(validationFailed(parsed.error, 'body'));
    const hint = TokenHint.safeParse(parsed.data.token_type_hint);
    return { client, token: parsed.data.token, hint: hint.success ? hint.data : undefined };
  };

  api.route({
    ...tokens,
    ...common,
    method: 'post',
    path: REVOKE_PATH,
    operationId: 'oidcRevoke',
    summary: 'Revoke an access or refresh token (RFC 7009)',
    description:
      'Form-encoded: `token` and optionally `token_type_hint`; the client authenticates as at the token endpoint. ' +
      'Revoking a refresh token ends every refresh and access token of its sign-in; revoking an access token ends it. ' +
      'Answers 200 also for a token that is unknown, already ended or another client’s (which stays as it is).',
    rawBody: {
      contentType: 'application/x-www-form-urlencoded',
      description: 'The token to revoke',
      schema: TokenForm,
    },
    responses: { 200: { description: 'Revoked, or nothing to revoke (empty body)' }, ...oauthFormProblemResponses },
    handler: async (ctx) => {
      const { client, token, hint } = await readRequest(ctx, true);
      await revokeToken(tokenContext(), client.client_id, token, hint);
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 200;
      ctx.body = '';
    },
  });

  api.route({
    ...tokens,
    ...common,
    method: 'post',
    path: INTROSPECT_PATH,
    operationId: 'oidcIntrospect',
    summary: 'Whether a token is live, and what it carries (RFC 7662)',
    description:
      'Form-encoded: `token` and optionally `token_type_hint`; the client authenticates as at the token endpoint. ' +
      'A live token of this client answers `active: true` with `scope`, `client_id`, `sub`, `exp`, `iat` and ' +
      '`token_type`; anything else (unknown, expired, revoked, spent, another client’s) answers only `active: false`.',
    rawBody: {
      contentType: 'application/x-www-form-urlencoded',
      description: 'The token to look at',
      schema: TokenForm,
    },
    responses: { 200: { description: 'The token’s state', schema: Introspection }, ...oauthFormProblemResponses },
    handler: async (ctx) => {
      // The hint needs no lookup order here: a JWT is an access token, anything else a refresh token.
      const { client, token } = await readRequest(ctx, false);
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
      const state = await introspectToken(tokenContext(), client.client_id, token);
      ctx.body = state.sub === undefined ? state : { ...state, sub: subjectFor(services.masterKey, client, state.sub) };
    },
  });
}

/** What revocation and introspection need besides the token: the issuer its JWT names, the families' lifetime. */
export interface TokenContext {
  db: Db;
  issuer: string;
  familyMaxSeconds: number;
}

/**
 * Ends the client's token, looking where the hint says first; nothing for another client's or an unknown token. An
 * access token is a JWT of ours whose row (by jti) is ended; a refresh token ends its family.
 */
export async function revokeToken(
  { db, issuer }: TokenContext,
  clientId: string,
  token: string,
  hint?: TokenHint,
): Promise<void> {
  const revokeRefresh = async () => {
    const presented = hashSecret(token);
    const found = await db.query<{ token_hash: Buffer; family_id: string }>(
      'SELECT token_hash, family_id FROM sso_refresh_tokens WHERE token_hash = $1 AND client_id = $2',
      [presented, clientId],
    );
    const row = found.rows[0];
    if (!row || !safeEqual(presented, row.token_hash)) return false;
    await revokeFamily(db, row.family_id);
    return true;
  };
  const revokeAccess = async () => {
    const verified = await verifyAccessToken(db, issuer, token);
    if (!verified) return false;
    const found = await db.query(
      'UPDATE sso_access_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE jti = $1 AND client_id = $2',
      [verified.jti, clientId],
    );
    return found.rowCount === 1;
  };
  // A JWT is never a refresh token: look no further than its row.
  const order = looksLikeJwt(token)
    ? [revokeAccess]
    : hint === 'access_token'
      ? [revokeAccess, revokeRefresh]
      : [revokeRefresh, revokeAccess];
  for (const attempt of order) if (await attempt()) return;
}

interface TokenRow {
  scope: string;
  client_id: string;
  user_id: string;
  exp: number;
  iat: number;
  aud: string | null;
}

/** The token's state for its own client; `{active: false}` for anything not live or not this client's. */
export async function introspectToken(
  { db, issuer, familyMaxSeconds }: TokenContext,
  clientId: string,
  token: string,
): Promise<Introspection> {
  // A client an administrator stopped (or whose marketplace is inactive) has no live tokens, as at userinfo.
  const liveClient = `JOIN sso_clients c ON c.client_id = t.client_id LEFT JOIN marketplaces m ON m.id = c.marketplace_id
      WHERE t.client_id = $2 AND t.revoked_at IS NULL AND t.expires_at > now()
        AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)`;
  const columns = `t.scope, t.client_id, t.user_id, floor(extract(epoch FROM t.expires_at))::float8 AS exp,
              floor(extract(epoch FROM t.created_at))::float8 AS iat`;
  const active = (row: TokenRow, type: 'Bearer' | 'refresh_token'): Introspection => ({
    active: true,
    scope: row.scope,
    client_id: row.client_id,
    sub: row.user_id,
    exp: row.exp,
    iat: row.iat,
    ...(row.aud === null ? {} : { aud: row.aud }),
    token_type: type,
  });
  if (looksLikeJwt(token)) {
    // Its signature (a published key, this issuer, not expired) first, then its row: revoked is inactive.
    const verified = await verifyAccessToken(db, issuer, token);
    if (!verified) return { active: false };
    const found = await db.query<TokenRow>(
      `SELECT ${columns}, t.audience AS aud FROM sso_access_tokens t ${liveClient} AND t.jti = $1`,
      [verified.jti, clientId],
    );
    return found.rows[0] ? active(found.rows[0], 'Bearer') : { active: false };
  }
  const presented = hashSecret(token);
  const found = await db.query<TokenRow & { token_hash: Buffer }>(
    `SELECT t.token_hash, ${columns}, t.resource AS aud FROM sso_refresh_tokens t ${liveClient}
        AND t.token_hash = $1 AND t.used_at IS NULL AND t.family_started_at > now() - make_interval(secs => $3)`,
    [presented, clientId, familyMaxSeconds],
  );
  const row = found.rows[0];
  return row && safeEqual(presented, row.token_hash) ? active(row, 'refresh_token') : { active: false };
}
