// Who may call the widget API: the public pk_ key on creation, the widget token on everything else. The secret mk_
// key is refused outright on both (its presence in a browser means it leaked), and the widget token is never a
// marketplace credential (requireSecretKey reads only X-Svc-Key and wants mk_).
import type { Context, Middleware } from 'koa';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import { problem, notFound, unauthorized } from '../http/problem.ts';
import {
  findMarketplace,
  marketplaceByKey,
  PUBLIC_KEY_PREFIX,
  SECRET_KEY_PREFIX,
  type Marketplace,
} from '../marketplaces/marketplaces.ts';
import { loadSnapshot } from '../deals/store.ts';
import type { DealSnapshot } from '../deals/model.ts';
import { checkOrigin } from './cors.ts';
import { verifyWidgetToken } from './token.ts';

export interface WidgetState {
  marketplace: Marketplace;
  snapshot: DealSnapshot;
}

const SECRET_KEY_REFUSED =
  'The widget API never takes the secret mk_ key: it must not be in a web page. Rotate it if it was published, and use the widget token.';

function refuseSecretKey(ctx: Context, presented?: string): void {
  if (ctx.get('X-Svc-Key') || presented?.startsWith(SECRET_KEY_PREFIX)) throw unauthorized(SECRET_KEY_REFUSED);
}

/** The active marketplace of a public key (and an origin it allows), or 401. */
export async function marketplaceForPublicKey(
  services: Services,
  ctx: Context,
  publicKey: string,
): Promise<Marketplace> {
  refuseSecretKey(ctx, publicKey);
  const marketplace = publicKey.startsWith(PUBLIC_KEY_PREFIX)
    ? await marketplaceByKey(services.db, publicKey, 'public')
    : undefined;
  if (!marketplace) throw unauthorized('The public_key is not a valid public key of an active marketplace.');
  await checkOrigin(ctx, marketplace, () => findMarketplace(services.db, marketplace.id));
  return marketplace;
}

/** X-Svc-Widget-Token (or `wt` for top-level navigations) for the deal in the path → ctx.state.widget. */
export function requireWidgetToken(services: Services): Middleware {
  return async (ctx, next) => {
    const fromQuery = typeof ctx.query.wt === 'string' ? ctx.query.wt : '';
    const token = ctx.get('X-Svc-Widget-Token').trim() || fromQuery.trim();
    refuseSecretKey(ctx, token);
    if (!token)
      throw unauthorized('Send the widget token from the widget deal creation in the X-Svc-Widget-Token header.');
    const claims = await verifyWidgetToken(services.masterKey, token);
    const dealId = ctx.params.deal_id ?? '';
    if (claims.dealId !== dealId) throw problem('forbidden', 'This widget token is for another deal.');
    const marketplace = await findMarketplace(services.db, claims.marketplaceId);
    if (!marketplace?.active) throw unauthorized('The marketplace of this widget token is no longer active.');
    await checkOrigin(ctx, marketplace);
    const snapshot = isUuid(dealId) ? await loadSnapshot(services.db, dealId) : undefined;
    if (!snapshot || snapshot.deal.marketplace_id !== marketplace.id) throw notFound('No such deal.');
    ctx.state.widget = { marketplace, snapshot } satisfies WidgetState;
    await next();
  };
}
