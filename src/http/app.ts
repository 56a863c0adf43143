// What both Koa servers share: request ids, access logs, problem responses for every error (404 and 405 included),
// security headers, /healthz, /metrics, the OpenAPI document and its /docs page, the /problems/{code} pages, and
// which client address a request has (TRUST_PROXY).
import { randomUUID } from 'node:crypto';
import Koa, { type Context, type Middleware } from 'koa';
import helmet from 'koa-helmet';
import type { Logger } from '../log.ts';
import { createRouter, type Api } from './api.ts';
import { Problem, problem } from './problem.ts';
import { docsRouter } from './docs.ts';
import { problemPagesRouter } from './problem-pages.ts';
import { HttpMetrics } from './metrics.ts';
import { requestText } from './text.ts';

export interface HealthCheck {
  name: string;
  check: () => Promise<unknown>;
}

export interface AppOptions {
  /** Names the server in logs and metrics: `main` or `data`. */
  name: string;
  baseUrl: string;
  logger: Logger;
  api: Api;
  /** Where the OpenAPI document is served, e.g. `/api/openapi.json`. */
  openapiPath: string;
  health: HealthCheck[];
  /**
   * Reverse proxies in front of the server (TRUST_PROXY). 0 trusts no X-Forwarded-* header; N takes the client
   * address N entries from the right of X-Forwarded-For, so entries a client sends itself are ignored. Nothing reads
   * X-Forwarded-Proto or -Host: links, Secure cookies and HSTS follow BASE_URL.
   */
  proxyHops: number;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const HEALTH_TIMEOUT_MS = 2_000;

export function createApp(options: AppOptions): Koa {
  // Koa's ctx.ip is the first of the last `maxIpsCount` X-Forwarded-For entries: the address the outermost trusted proxy saw.
  const app = new Koa({ proxy: options.proxyHops > 0, maxIpsCount: options.proxyHops });
  const metrics = new HttpMetrics(options.name);

  app.use(requestIdAndAccessLog(options.logger, metrics));
  app.use(problems(options.baseUrl, options.logger));
  app.use(securityHeaders(options.baseUrl));
  app.use(requestText());

  const infra = createRouter();
  infra.get('/healthz', async (ctx) => {
    const failing = await failingChecks(options.health);
    ctx.set('Cache-Control', 'no-store');
    if (failing.length > 0) {
      throw problem('not_ready', `Not ready: ${failing.join(', ')} not answering yet. Retry shortly.`, {
        headers: { 'Retry-After': '1' },
      });
    }
    ctx.body = { ok: true };
  });
  infra.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  infra.get(options.openapiPath, (ctx) => {
    ctx.body = options.api.openapi(options.baseUrl);
  });

  const docs = docsRouter(options.openapiPath, options.api.info.title);
  for (const router of [infra, docs, problemPagesRouter(options.baseUrl), options.api.router]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}

/** Helmet's defaults, but HSTS and upgrade-insecure-requests only where we are served over https. */
function securityHeaders(baseUrl: string): Middleware {
  const https = baseUrl.startsWith('https:');
  return helmet({
    contentSecurityPolicy: {
      directives: { frameAncestors: ["'none'"], upgradeInsecureRequests: https ? [] : null },
    },
    strictTransportSecurity: https,
    frameguard: { action: 'deny' },
  });
}

function requestIdAndAccessLog(logger: Logger, metrics: HttpMetrics): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ req_id: requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.observe(ctx.method, String(route), ctx.status, seconds);
      // The path only: query strings may carry tokens (the widget's `wt`).
      ctx.state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, duration_ms: Math.round(seconds * 1000) },
        'request',
      );
    }
  };
}

/** Every error becomes problem+json; unexpected ones are logged and answered without internals. */
function problems(baseUrl: string, logger: Logger): Middleware {
  return async (ctx, next) => {
    let answer: Problem | undefined;
    try {
      await next();
      if (ctx.body == null && ctx.status === 404) answer = problem('not_found', `No route ${ctx.path}.`);
      if (ctx.body == null && ctx.status === 405) {
        answer = problem('method_not_allowed', `${ctx.method} is not allowed here; use ${ctx.response.get('Allow')}.`);
      }
    } catch (error) {
      answer = toProblem(error);
      const log = (ctx.state.log as Logger | undefined) ?? logger;
      // A dependency that is away (503) is an outage to see in the log, not a defect of ours: no stack, no alarm word.
      if (answer.status === 503 && !(error instanceof Problem))
        log.warn({ code: answer.code, reason: (error as Error).message }, 'dependency unavailable');
      else if (answer.status >= 500 && !(error instanceof Problem)) log.error({ err: error }, 'unhandled error');
    }
    if (!answer) return;
    ctx.status = answer.status;
    for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
    ctx.body = answer.body(baseUrl);
    ctx.type = 'application/problem+json';
  };
}

function toProblem(error: unknown): Problem {
  if (error instanceof Problem) return error;
  // Errors thrown by Koa itself and its helpers carry an HTTP status and a safe message: raw-body's for a body that
  // does not match its Content-Length (its other 4xx, too large and aborted, are read in body.ts).
  const status = (error as { status?: number; expose?: boolean }).status;
  if (typeof status === 'number' && status >= 400 && status < 500 && (error as { expose?: boolean }).expose) {
    return problem('bad_request', (error as Error).message);
  }
  if (temporalUnavailable(error)) {
    return problem('temporal_unavailable', 'The workflow engine does not answer right now; retry in a few seconds.', {
      headers: { 'Retry-After': '5' },
    });
  }
  if (databaseUnavailable(error)) {
    return problem('database_unavailable', 'The database does not answer right now; retry in a few seconds.', {
      headers: { 'Retry-After': '5' },
    });
  }
  return problem(
    'internal_error',
    'Something went wrong on our side. Retry later; if it persists, contact support with the X-Request-Id.',
  );
}

/**
 * Temporal down or restarting, wherever a route calls it (a deal's creation starts its workflow): gRPC UNAVAILABLE or
 * DEADLINE_EXCEEDED, or our namespace "not found" (as a gRPC NOT_FOUND or the client's NamespaceNotFoundError), which
 * it always is while the server cannot read its own database. The client wraps the gRPC error as the cause of its own.
 */
function temporalUnavailable(error: unknown): boolean {
  for (
    let cause = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    cause && depth < 4;
    cause = cause.cause as typeof cause, depth++
  ) {
    if (cause.code === 14 || cause.code === 4 || cause.name === 'NamespaceNotFoundError') return true;
    if (cause.code === 5 && typeof cause.message === 'string' && /Namespace .+ is not found/.test(cause.message))
      return true;
  }
  return false;
}

/**
 * PostgreSQL down, restarting or out of connections: nothing is wrong with the request, and the pool reconnects by
 * itself once the database is back, so the caller is told to retry (a 503), not that we failed (a 500).
 */
function databaseUnavailable(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  // SQLSTATE class 08 (connection exception), 57P01–57P03 (shut down, crashed, starting up), 53300 (too many connections).
  if (typeof code === 'string' && (/^08/.test(code) || /^57P0[123]$/.test(code) || code === '53300')) return true;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE') return true;
  // pg's own words when a connection drops mid-query or none can be had in time.
  return (
    typeof message === 'string' &&
    /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(
      message,
    )
  );
}

async function failingChecks(checks: HealthCheck[]): Promise<string[]> {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), HEALTH_TIMEOUT_MS);
      });
      try {
        await Promise.race([check(), timeout]);
        return undefined;
      } catch {
        return name;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return results.filter((name): name is string => name !== undefined);
}
