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
import { authenticateClient } from './clients.ts';
import { clientCredentials, readOAuthForm } from './client-auth.ts';
import { asOAuthProblem, invalidClient, oauthFormProblemResponses, oauthJsonErrors } from './oauth-problem.ts';
import { revokeFamily } from './refresh-tokens.ts';
import { subjectFor } from './subjects.ts';

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
  client_id: z.string().max(128).regex(PRINTABLE).optional().describe('client_secret_post'),
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
      await revokeToken(services.db, client.client_id, token, hint);
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
      const { client, token, hint } = await readRequest(ctx, false);
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
      const state = await introspectToken(services.db, client.client_id, token, hint);
      ctx.body = state.sub === undefined ? state : { ...state, sub: subjectFor(services.masterKey, client, state.sub) };
    },
  });
}

/** Ends the client's token, looking where the hint says first; nothing for another client's or an unknown token. */
export async function revokeToken(db: Db, clientId: string, token: string, hint?: TokenHint): Promise<void> {
  const presented = hashSecret(token);
  const revokeRefresh = async () => {
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
    const found = await db.query<{ token_hash: Buffer }>(
      `UPDATE sso_access_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE token_hash = $1 AND client_id = $2
       RETURNING token_hash`,
      [presented, clientId],
    );
    return found.rowCount === 1;
  };
  const order = hint === 'access_token' ? [revokeAccess, revokeRefresh] : [revokeRefresh, revokeAccess];
  for (const attempt of order) if (await attempt()) return;
}

/** The token's state for its own client; `{active: false}` for anything not live or not this client's. */
export async function introspectToken(
  db: Db,
  clientId: string,
  token: string,
  hint?: TokenHint,
): Promise<Introspection> {
  const presented = hashSecret(token);
  // A client an administrator stopped (or whose marketplace is inactive) has no live tokens, as at userinfo.
  const liveClient = `JOIN sso_clients c ON c.client_id = t.client_id LEFT JOIN marketplaces m ON m.id = c.marketplace_id
      WHERE t.token_hash = $1 AND t.client_id = $2 AND t.revoked_at IS NULL AND t.expires_at > now()
        AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)`;
  const tables = {
    refresh: {
      sql: `, t.resource AS aud FROM sso_refresh_tokens t ${liveClient} AND t.used_at IS NULL`,
      type: 'refresh_token',
    },
    access: { sql: `, t.audience AS aud FROM sso_access_tokens t ${liveClient}`, type: 'Bearer' },
  } as const;
  const order = hint === 'access_token' ? [tables.access, tables.refresh] : [tables.refresh, tables.access];
  for (const table of order) {
    const found = await db.query<{
      token_hash: Buffer;
      scope: string;
      client_id: string;
      user_id: string;
      exp: number;
      iat: number;
      aud: string | null;
    }>(
      `SELECT t.token_hash, t.scope, t.client_id, t.user_id, floor(extract(epoch FROM t.expires_at))::float8 AS exp,
              floor(extract(epoch FROM t.created_at))::float8 AS iat ${table.sql}`,
      [presented, clientId],
    );
    const row = found.rows[0];
    if (row && safeEqual(presented, row.token_hash)) {
      return {
        active: true,
        scope: row.scope,
        client_id: row.client_id,
        sub: row.user_id,
        exp: row.exp,
        iat: row.iat,
        ...(row.aud === null ? {} : { aud: row.aud }),
        token_type: table.type,
      };
    }
  }
  return { active: false };
}
