// OAuth access tokens at the data server (issue 25, "Agents sign in"): beside svc_mcp_ keys, an access token of this
// service's own issuer is accepted on /mcp/ and /v1 when its audience is the data server (RFC 8707: the sign-in named
// `{mcp_url}` or `{mcp_url}/mcp/` as its resource, src/sso/resources.ts). The token is looked up in the shared
// PostgreSQL on every request, as a key is, so a revoked or expired token, or one of a disabled client, is refused from
// the next request on. The request is charged to the signed-in user's data account (a user's account has the user's
// id, as the cabinet's keys make it), made on the free tariff on first use.
import type { Db } from '../db.ts';
import type { Config } from '../config.ts';
import { hashSecret, safeEqual } from '../secrets.ts';
import { ACCESS_TOKEN_PREFIX } from '../sso/tokens.ts';
import { dataServerResources } from '../sso/resources.ts';
import { checkAndCountAccount, type Usage } from './quota.ts';

export const isAccessToken = (token: string) => token.startsWith(ACCESS_TOKEN_PREFIX);

/** The user behind a live access token for the data server, or undefined (unknown, expired, revoked, another audience). */
export async function dataServerUser(db: Db, config: Pick<Config, 'MCP_URL'>, token: string) {
  const presented = hashSecret(token);
  const result = await db.query<{ token_hash: Buffer; user_id: string; client_id: string; scope: string }>(
    `SELECT t.token_hash, t.user_id, t.client_id, t.scope
       FROM sso_access_tokens t JOIN sso_clients c ON c.client_id = t.client_id
       LEFT JOIN marketplaces m ON m.id = c.marketplace_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND t.audience = ANY($2::text[])
        AND c.disabled_at IS NULL AND (c.marketplace_id IS NULL OR m.active)`,
    [presented, dataServerResources(config)],
  );
  const row = result.rows[0];
  return row && safeEqual(presented, row.token_hash) ? row : undefined;
}

/** The signed-in user's data account with its usage, taking `units` from its quota as a key's request does. */
export async function checkAndCountForAccessToken(
  db: Db,
  config: Pick<Config, 'MCP_URL'>,
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
