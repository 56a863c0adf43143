// CORS for the widget API. A preflight carries no key, token or body, so it cannot tell whose storefront asks: it is
// answered for any origin, and the real request is where the marketplace's origins are enforced (a refused origin
// gets 403 origin_not_allowed and no Access-Control-Allow-Origin, so nothing of the answer is readable).
import type { Context, Middleware } from 'koa';
import { problem } from '../http/problem.ts';
import type { Marketplace } from '../marketplaces/marketplaces.ts';

const ALLOW_METHODS = 'GET, POST';
const ALLOW_HEADERS = 'Content-Type, X-Svc-Widget-Token, Idempotency-Key';
const EXPOSE_HEADERS = 'Retry-After, X-Request-Id, Idempotent-Replayed';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Sandbox marketplaces accept any origin (integration on any test page); live ones only their registered origins. */
export function originAllowed(marketplace: Pick<Marketplace, 'mode' | 'allowed_origins'>, origin: string): boolean {
  return marketplace.mode === 'sandbox' || marketplace.allowed_origins.includes(origin);
}

/**
 * Refuses a browser request from an origin the marketplace has not registered. No Origin header means no
 * cross-origin browser request (a server, curl): CORS has nothing to protect there. `fresh` re-reads the origins
 * before refusing, for callers holding a cached marketplace (an origin added a moment ago works at once).
 */
export async function checkOrigin(
  ctx: Context,
  marketplace: Marketplace,
  fresh?: () => Promise<Marketplace | undefined>,
) {
  const origin = ctx.get('Origin');
  if (!origin) return;
  let allowed = originAllowed(marketplace, origin);
  if (!allowed && fresh) {
    const current = await fresh();
    allowed = current !== undefined && originAllowed(current, origin);
  }
  ctx.state.corsAllowed = allowed;
  if (!allowed) {
    throw problem(
      'origin_not_allowed',
      `The origin ${origin} is not registered for this marketplace's widget; an administrator adds it to allowed_origins.`,
    );
  }
}

/** Adds the CORS headers once the request is done, errors included, unless checkOrigin refused the origin. */
export const widgetCors: Middleware = async (ctx, next) => {
  ctx.vary('Origin');
  try {
    await next();
  } finally {
    const origin = ctx.get('Origin');
    if (origin && ctx.state.corsAllowed !== false) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    }
  }
};

export const preflight: Middleware = (ctx) => {
  const origin = ctx.get('Origin');
  ctx.vary('Origin');
  ctx.status = 204;
  if (!origin) return;
  ctx.set('Access-Control-Allow-Origin', origin);
  ctx.set('Access-Control-Allow-Methods', ALLOW_METHODS);
  ctx.set('Access-Control-Allow-Headers', ALLOW_HEADERS);
  ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
};
