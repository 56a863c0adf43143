// MCP over Streamable HTTP at /mcp/ (and /mcp), stateless: a fresh server per request from one factory, serving the
// 2026-07-28 revision and, through the SDK's stateless fallback, 2025-era clients (2025-11-25). Before the SDK sees a
// request, the key is checked, the body (at most 64 KiB) passes the service's depth and text rules (text.ts), batches
// are refused (no revision we speak has them), and a tools/call reserves one unit of the quota; the tool spends it only
// if the protocol layer accepts the call (mcp-tools.ts), and an unspent unit goes back when the request ends.
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import {
  createMcpHandler,
  INVALID_PARAMS,
  INVALID_REQUEST,
  PARSE_ERROR,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { readRawBody, SMALL_BODY_LIMIT_BYTES } from '../http/body.ts';
import type { FieldError } from '../http/problem.ts';
import { badTextFields, depthAndText, jsonDepthError } from '../http/text.ts';
import type { Logger } from '../log.ts';
import type { Services } from '../services.ts';
import { authenticate, presentedCredential } from './auth.ts';
import { createMcpServer, type ToolCallScope } from './mcp-tools.ts';
import { ReservedUnit } from './quota.ts';
import { searchBounds } from './tenders.ts';

const MCP_PATHS = new Set(['/mcp', '/mcp/']);
/** An MCP message is a small JSON-RPC request (a tool's arguments are a few short fields): 413 beyond. */
const BODY_LIMIT_BYTES = SMALL_BODY_LIMIT_BYTES;

/** A JSON-RPC error answered by us, before the SDK; `id` is the request's when it has a usable one. */
interface Refusal {
  status: number;
  id: string | number | null;
  code: number;
  message: string;
  data?: unknown;
}

export function mcpEndpoint(services: Services): Middleware {
  const bounds = searchBounds(services.config.SEARCH_TIMEOUT_MS);
  const handler = createMcpHandler(({ authInfo }) => createMcpServer(services.db, bounds, scopeOf(authInfo)), {
    legacy: 'stateless',
    maxRequestBodySize: BODY_LIMIT_BYTES,
    onerror: (error) => services.logger.warn({ err: error }, 'MCP request failed'),
  });
  const serve = toNodeHandler(
    {
      fetch: async (request, options) =>
        settled(await handler.fetch(request, options), scopeOf(options?.authInfo).unit),
    },
    { maxRequestBodySize: BODY_LIMIT_BYTES },
  );

  return async (ctx, next) => {
    if (!MCP_PATHS.has(ctx.path)) return next();
    if (!presentedCredential(ctx)) await authenticate(ctx, services, 0, '/mcp'); // 401 before reading anything
    let body: unknown;
    if (ctx.method === 'POST') {
      const text = (await readRawBody(ctx, BODY_LIMIT_BYTES)).toString('utf8');
      // The depth rule on the raw text first: neither JSON.parse nor the SDK's schemas ever meet a deep message.
      const deep = jsonDepthError(text);
      let refusal: Refusal | undefined = deep ? tooDeepRefusal(deep) : undefined;
      if (!refusal) {
        try {
          body = JSON.parse(text);
        } catch {
          refusal = { status: 400, id: null, code: PARSE_ERROR, message: 'Parse error: the body is not JSON.' };
        }
      }
      refusal ??= refusalOf(body);
      if (refusal) {
        await authenticate(ctx, services, 0, '/mcp'); // a wrong key is still 401; a refused request costs nothing
        ctx.status = refusal.status;
        ctx.body = {
          jsonrpc: '2.0',
          id: refusal.id,
          error: { code: refusal.code, message: refusal.message, ...(refusal.data ? { data: refusal.data } : {}) },
        };
        return;
      }
    }
    const units = isToolCall(body) ? 1 : 0;
    const usage = await authenticate(ctx, services, units, '/mcp');
    const log = (ctx.state.log as Logger | undefined) ?? services.logger;
    const scope: ToolCallScope = {
      requestId: String(ctx.state.requestId),
      log,
      ...(units > 0 ? { unit: new ReservedUnit(services.db, usage, log) } : {}),
    };
    const auth: AuthInfo = {
      token: presentedCredential(ctx)!,
      clientId: usage.accountId,
      scopes: [],
      extra: { scope },
    };
    (ctx.req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    ctx.respond = false;
    try {
      await serve(ctx.req, ctx.res, body);
    } finally {
      await scope.unit?.releaseUnspent(); // the client left before the answer was complete
    }
  };
}

// The scope travels as the request's authInfo, which the SDK hands to the factory of that request's server.
const scopeOf = (authInfo: AuthInfo | undefined) => authInfo!.extra!.scope as ToolCallScope;

/**
 * The answer to a tools/call, held until it is complete and then sent with an unspent unit given back first: by then
 * the tool has run or never will, and a client sees its usage right as soon as it reads the answer (an SSE client
 * reads the answer's event before the stream ends). A tools/call exchange is one answer (our tools send no progress
 * notifications), so holding it back delays nothing.
 */
function settled(response: Response, unit: ReservedUnit | undefined): Response {
  if (!unit || !response.body) return response;
  const chunks: Uint8Array[] = [];
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk) => {
        chunks.push(chunk);
      },
      flush: async (controller) => {
        await unit.releaseUnspent();
        for (const chunk of chunks) controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A message nested deeper than the depth rule allows: refused at the HTTP level (its id is not read). */
function tooDeepRefusal(error: FieldError): Refusal {
  return {
    status: 400,
    id: null,
    code: INVALID_REQUEST,
    message: `Invalid Request: ${error.path || 'the message'} ${error.message}.`,
    data: { code: 'validation_failed', errors: [{ ...error, path: error.path || 'body' }] },
  };
}

/** Why we answer the message ourselves: a batch, nesting beyond the depth rule, or text the text rule refuses. */
function refusalOf(body: unknown): Refusal | undefined {
  if (Array.isArray(body)) {
    return {
      status: 400,
      id: null,
      code: INVALID_REQUEST,
      message:
        'Invalid Request: JSON-RPC batches are not supported (the 2025-11-25 and 2026-07-28 revisions have none); send one message per request.',
    };
  }
  // The depth rule once more on the parsed message (never broken after jsonDepthError), in the text rule's one walk.
  const { deep, errors } = depthAndText(body);
  if (deep) return tooDeepRefusal(deep);
  if (errors.length === 0) return undefined;
  const id = idOf(body);
  const inParams = errors.every((error) => error.path.startsWith('params.'));
  return {
    // A request with an id gets its JSON-RPC answer, as an unknown tool does; anything else is refused at the HTTP level.
    status: id === null ? 400 : 200,
    id,
    code: inParams ? INVALID_PARAMS : INVALID_REQUEST,
    message: `${inParams ? 'Invalid params' : 'Invalid Request'}: ${errors.map((error) => `${error.path} ${error.message}`).join('; ')}.`,
    data: { code: 'validation_failed', errors },
  };
}

function idOf(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id;
  return (typeof id === 'number' || typeof id === 'string') && badTextFields(id).length === 0 ? id : null;
}

/** A tools/call request: one with an id (without one it is a notification, which runs no tool). */
function isToolCall(message: unknown): boolean {
  const { method, id } = (typeof message === 'object' && message !== null ? message : {}) as {
    method?: unknown;
    id?: unknown;
  };
  return method === 'tools/call' && id !== undefined;
}
