// Resource indicators (RFC 8707): the one protected resource this issuer makes tokens for is the data server, named
// `{mcp_url}` or `{mcp_url}/mcp/` (its RFC 9728 metadata gives the latter). An authorization request naming it binds
// the code, the sign-in's refresh tokens and every access token issued from them to that audience, which the data
// server checks (src/data-api/oauth-auth.ts); a token without it is for userinfo alone.
import type { Config } from '../config.ts';

/** The resource values that name the data server, as the CONTRACT has them. */
export function dataServerResources(config: Pick<Config, 'MCP_URL'>): string[] {
  const base = config.MCP_URL.replace(/\/+$/, '');
  return [base, `${base}/mcp/`];
}

/** Whether `resource` names the data server (compared as written: RFC 8707 resources are absolute URIs). */
export function namesDataServer(config: Pick<Config, 'MCP_URL'>, resource: string): boolean {
  return dataServerResources(config).includes(resource);
}

/** RFC 8707 §2: an absolute URI without a fragment; the reason otherwise. */
export function resourceFormProblem(resource: string): string | undefined {
  if (resource.length > 2000) return 'resource is longer than 2000 characters.';
  if (!URL.canParse(resource) || resource.includes('#') || !/^[a-z][a-z0-9+.-]*:/i.test(resource))
    return 'resource must be an absolute URI without a fragment.';
  return undefined;
}
