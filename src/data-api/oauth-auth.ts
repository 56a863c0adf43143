// OAuth access tokens at the data server (issue 25, "Agents sign in"): beside svc_mcp_ keys, an access token of this
// service's own issuer is accepted on /mcp/ and /v1 when its audience is the data server (RFC 8707: the sign-in named
// `{mcp_url}` or `{mcp_url}/mcp/` as its resource, src/sso/resources.ts). The token is a JWT (RFC 9068): its signature
// is checked against the published signing keys (a retired key's tokens fail here), its issuer and its audience; then
// its row, by jti, in the shared PostgreSQL on every request, as a key is, so a revoked token, or one of a disabled
// client, is refused from the next request on although its signature is still valid. The request is charged to the
// signed-in user's data account (a user's account has the user's id, as the cabinet's keys make it), made on the free
// tariff on first use.
import type { Db, DbClient } from '../db.ts';
import type { Config } from '../config.ts';
import { looksLikeJwt, verifyAccessToken } from '../sso/tokens.ts';
import { dataServerResources } from '../sso/resources.ts';
import { checkAndCountAccount, type Usage } from './quota.ts';

/** Whether a presented credential is meant as an access token (a JWT), not a svc_mcp_ key. */
export const isAccessToken = looksLikeJwt;

type TokenConfig = Pick<Config, 'MCP_URL' | 'BASE_URL'>;

/** The user behind a live access token for the data server, or undefined (bad signature, expired, revoked, another audience). */
export async function dataServerUser(db: DbClient, config: TokenConfig, token: string) {
  const verified = await verifyAccessToken(db, config.BASE_URL, token);
  const resources = dataServerResources(config);
  if (!verified || !verified.audience.some((audience) => resources.includes(audience))) return undefined;
  const result = await db.query<{ user_id: string; client_id: string; scope: string }>(
    `SELECT t.user_id, t.client_id, t.scope
       FROM sso_access_tokens t JOIN sso_clients c ON c.client_id = t.client_id
       LEFT JOIN marketplaces m ON m.id = c.marketplace_id
      WHERE t.jti = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND t.audience = ANY($2::text[])
        AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)`,
    [verified.jti, resources],
  );
  return result.rows[0];
}

/** The signed-in user's data account with its usage, taking `units` from its quota as a key's request does. */
export async function checkAndCountForAccessToken(
  db: Db,
  config: TokenConfig,
  token: string,
  units: number,
): Promise<(Usage & { clientId: string }) | undefined> {
  const user = await dataServerUser(db, config, token);
  if (!user) return undefined;
  await db.query(`INSERT INTO data_accounts (id, tariff) VALUES ($1, 'free') ON CONFLICT (id) DO NOTHING`, [
    user.user_id,
  ]);
  const usage = await checkAndCountAccount(db, user.user_id, units);
  return usage && { ...usage, clientId: user.client_id };
}
