// Authentication of data API requests by svc_mcp_ key, with the quota counted in the same statement, or by an OAuth
// access token of this service's issuer for the data server (src/data-api/oauth-auth.ts). Nothing about keys or tokens
// is kept in process memory: every request (REST, and every MCP message) looks its credential up in the database, so a
// key revoked in the cabinet (or a revoked token) is refused from the next request on, by every server instance.
import type { Context, Middleware } from 'koa';
import type { Logger } from '../log.ts';
import { Problem, problem, unauthorized } from '../http/problem.ts';
import type { Services } from '../services.ts';
import { DATA_KEY_PREFIX } from './keys.ts';
import { checkAndCountForAccessToken, isAccessToken } from './oauth-auth.ts';
import { checkAndCount, costsNothing, giveBack, rateLimitHeaders, secondsUntilReset, type Usage } from './quota.ts';

export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The Bearer challenge, pointing at the RFC 9728 metadata of the resource. */
export function bearerChallenge(mcpUrl: string, resourcePath = '/mcp'): string {
  return `Bearer realm="svc", resource_metadata="${mcpUrl}${PROTECTED_RESOURCE_METADATA_PATH}${resourcePath}"`;
}

export function presentedKey(ctx: Context): string | undefined {
  const token = presentedBearer(ctx);
  return token?.startsWith(DATA_KEY_PREFIX) ? token : undefined;
}

/** A credential the data server takes: a svc_mcp_ key or an OAuth access token (a JWT), else undefined. */
export function presentedCredential(ctx: Context): string | undefined {
  const token = presentedBearer(ctx);
  return token && (token.startsWith(DATA_KEY_PREFIX) || isAccessToken(token)) ? token : undefined;
}

function presentedBearer(ctx: Context): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'))?.[1];
}

/**
 * Resolves the key and takes `units` requests from its account's quota: 401 without a valid key, 429 when the
 * quota is spent. Sets the RateLimit headers either way and returns the usage.
 */
export async function authenticate(
  ctx: Context,
  services: Services,
  units: number,
  resourcePath: string,
): Promise<Usage> {
  const key = presentedCredential(ctx);
  const token = key !== undefined && isAccessToken(key);
  const usage = !key
    ? undefined
    : token
      ? await checkAndCountForAccessToken(services.db, services.config, key, units)
      : await checkAndCount(services.db, key, units);
  if (!usage) {
    throw unauthorized(
      token
        ? 'The access token is not valid here: expired, revoked, or issued for another resource than the data server ' +
            '(sign in again with resource set to this server).'
        : key
          ? 'The data API key is not valid or was revoked.'
          : 'Send a data API key (Authorization: Bearer svc_mcp_…) or an OAuth access token for this server.',
      bearerChallenge(services.config.MCP_URL, resourcePath) + (token ? ', error="invalid_token"' : ''),
    );
  }
  ctx.state.dataUsage = usage;
  const headers = setRateLimitHeaders(ctx, usage);
  if (!usage.allowed) {
    throw problem(
      'quota_exceeded',
      `The monthly quota of ${usage.quota} requests of this account (tariff ${usage.tariff}) is used up; ` +
        `it renews at ${usage.resetsAt.toISOString()}. A higher tariff raises it.`,
      { headers: { ...headers, 'Retry-After': String(secondsUntilReset(usage)) } },
    );
  }
  return usage;
}

function setRateLimitHeaders(ctx: Context, usage: Usage): Record<string, string> {
  const headers = rateLimitHeaders(usage);
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  return headers;
}

/**
 * For /v1 routes: the request's unit is taken before the route runs (so the quota is exact under concurrency) and
 * given back when the request ends refused by validation or failed on our side.
 */
export function requireDataKey(services: Services): Middleware {
  return async (ctx, next) => {
    const usage = await authenticate(ctx, services, 1, '/v1');
    try {
      await next();
    } catch (error) {
      const { status, code } = outcomeOf(error);
      if (costsNothing(status, code)) await refund(ctx, services, usage);
      throw error;
    }
    if (costsNothing(ctx.status)) await refund(ctx, services, usage);
  };
}

/** The status and code a thrown error is answered with, as the app's error middleware renders it. */
function outcomeOf(error: unknown): { status: number; code?: string } {
  if (error instanceof Problem) return { status: error.status, code: error.code };
  const { status, expose } = error as { status?: unknown; expose?: unknown };
  return { status: typeof status === 'number' && status >= 400 && status < 500 && expose === true ? status : 500 };
}

/**
 * Gives the unit back and corrects the RateLimit headers. Never throws: the failure being answered may be the
 * database's, and the answer must not change because the refund failed too.
 */
async function refund(ctx: Context, services: Services, usage: Usage): Promise<void> {
  try {
    setRateLimitHeaders(ctx, await giveBack(services.db, usage));
  } catch (error) {
    ((ctx.state.log as Logger | undefined) ?? services.logger).warn(
      { err: error, account_id: usage.accountId },
      'quota refund failed',
    );
  }
}
