// MCP over Streamable HTTP at /mcp/ (and /mcp), stateless: a fresh server per request from one factory, serving the
// 2026-07-28 revision and, through the SDK's stateless fallback, 2025-era clients (2025-11-25). The key is checked
// before the SDK sees the request; only tools/call takes from the quota.
import type { Middleware } from 'koa';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { readRawBody } from '../http/body.ts';
import type { Services } from '../services.ts';
import { authenticate, presentedKey } from './auth.ts';
import { createMcpServer } from './mcp-tools.ts';
import { searchBounds } from './tenders.ts';

const MCP_PATHS = new Set(['/mcp', '/mcp/']);
const BODY_LIMIT_BYTES = 1024 * 1024;

export function mcpEndpoint(services: Services): Middleware {
  const bounds = searchBounds(services.config.SEARCH_TIMEOUT_MS);
  const handler = createMcpHandler(() => createMcpServer(services.db, bounds), {
    legacy: 'stateless',
    maxRequestBodySize: BODY_LIMIT_BYTES,
    onerror: (error) => services.logger.warn({ err: error }, 'MCP request failed'),
  });
  const serve = toNodeHandler(handler, { maxRequestBodySize: BODY_LIMIT_BYTES });

  return async (ctx, next) => {
    if (!MCP_PATHS.has(ctx.path)) return next();
    let body: unknown;
    let units = 0;
    if (!presentedKey(ctx)) await authenticate(ctx, services, 0, '/mcp'); // 401 before reading anything
    if (ctx.method === 'POST') {
      const raw = await readRawBody(ctx, BODY_LIMIT_BYTES);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        ctx.status = 400;
        ctx.body = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON.' } };
        return;
      }
      units = (Array.isArray(body) ? body : [body]).filter(isToolCall).length;
    }
    await authenticate(ctx, services, units, '/mcp');
    ctx.respond = false;
    await serve(ctx.req, ctx.res, body);
  };
}

function isToolCall(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'tools/call';
}
