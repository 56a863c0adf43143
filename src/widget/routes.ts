// The widget API (`/api/mkt/widget`): the buyer's side of a deal, driven from the storefront by the widget script.
// It reuses the deal service (createDeal, continueDeal, startEscrow) so both follow the same rules. A page load finds
// its order's deal again with the lookup (the storefront's external_id and the buyer's e-mail, as a repeat of the
// creation would, but making nothing): the browser keeps no token between page views.
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { idempotency } from '../http/idempotency.ts';
import type { Services } from '../services.ts';
import { Problem } from '../http/problem.ts';
import { continueDeal, createDeal, startEscrow } from '../deals/service.ts';
import { DealConflictProblem, DealFields, dealConflicts, EscrowResponse, escrowResponse } from '../deals/views.ts';
import { dealStatus, type DealSnapshot } from '../deals/model.ts';
import { findDeal, loadSnapshot } from '../deals/store.ts';
import { marketplaceForPublicKey, requireWidgetToken, type WidgetState } from './auth.ts';
import { preflight, widgetCors } from './cors.ts';
import { addressSubject, countCreation, keySubject, lookupSubject, rateLimited } from './limits.ts';
import { issueWidgetToken } from './token.ts';
import { decideWidgetMail } from './mail-limits.ts';
import { WidgetDeal, WidgetDealCreated, widgetDeal } from './view.ts';
import { RESULT_PATH } from './pages.ts';

const BASE = '/api/mkt/widget/deals';
const DealParams = z.object({ deal_id: z.string().describe('The deal id') });
const Locale = z
  .enum(['ru', 'en'])
  .default('ru')
  .describe("The widget's language; the generated contract is written in it");

/** What the storefront sends to create or find the deal of its order. */
const WidgetDealRequest = DealFields.extend({
  public_key: z.string().min(1).max(200).describe('The public pk_ key of the marketplace'),
  buyer_locale: z
    .enum(['ru', 'en'])
    .optional()
    .describe(
      "The language the widget shows the buyer, for the buyer's mail and pages as in POST /api/mkt/deals. Not a term " +
        'of the deal: a repeat that differs only in it returns the same deal (the first language stays), never 409.',
    ),
});

/**
 * The buyer's language is how the widget speaks to them, not a term of the deal: a buyer who switched the widget's
 * language and pressed Continue again gets the same deal. Only POST /api/mkt/deals treats another buyer_locale as
 * another deal (409 deal_conflict), as it does every field.
 */
const withoutLanguage = <T extends { buyer_locale?: 'ru' | 'en' }>(fields: T): T => ({
  ...fields,
  buyer_locale: undefined,
});
const languageDiffers = (error: unknown) =>
  error instanceof Problem &&
  error.code === 'deal_conflict' &&
  Array.isArray(error.extensions.fields) &&
  error.extensions.fields.includes('buyer_locale');
const CONFLICT = {
  description:
    'deal_conflict: this external_id names a deal with other values (another buyer) of the fields in `fields`',
  contentType: 'application/problem+json',
  schema: DealConflictProblem,
};

export function widgetRoutes(api: Api, services: Services): void {
  const { config } = services;
  const window = config.WIDGET_CREATE_WINDOW_SECONDS;
  // Every attempt counts against the address, valid or not, so guessing keys or flooding costs the same.
  const addressLimit: Middleware = async (ctx, next) => {
    const wait = await countCreation(
      services.db,
      addressSubject(ctx.ip),
      config.WIDGET_CREATE_LIMIT_PER_ADDRESS,
      window,
    );
    if (wait !== undefined) throw rateLimited(wait, 'from this address');
    await next();
  };
  const lookupLimit: Middleware = async (ctx, next) => {
    const wait = await countCreation(services.db, lookupSubject(ctx.ip), config.WIDGET_FIND_LIMIT_PER_ADDRESS, window);
    if (wait !== undefined) throw rateLimited(wait, 'from this address', 'lookups');
    await next();
  };
  const token = requireWidgetToken(services);
  /** What the creation and the lookup answer: the deal, a fresh token, and whether a mail invited the buyer. */
  const withToken = async (snapshot: DealSnapshot, marketplaceId: string, invitationSent: boolean) => {
    const issued = await issueWidgetToken(
      services.masterKey,
      { dealId: snapshot.deal.id, marketplaceId },
      config.WIDGET_TOKEN_TTL_SECONDS,
    );
    return {
      id: snapshot.deal.id,
      external_id: snapshot.deal.external_id,
      status: dealStatus(snapshot),
      widget_token: issued.token,
      expires_at: issued.expiresAt.toISOString(),
      invitation_sent: invitationSent,
    };
  };
  const common = { tags: ['Widget'], security: ['widgetToken'], use: [widgetCors, token] };
  const widget = (ctx: Context) => ctx.state.widget as WidgetState;

  for (const path of [BASE, `${BASE}/lookup`, `${BASE}/:deal_id`, `${BASE}/:deal_id/start`, `${BASE}/:deal_id/escrow`])
    api.router.options(path, preflight);

  api.route({
    method: 'post',
    path: BASE,
    operationId: 'widgetCreateDeal',
    summary: 'Create (or find) the deal from the storefront and get a widget token',
    description:
      'Takes the public pk_ key, never the secret one. Idempotent on external_id; a repeat by the same buyer returns the ' +
      'same deal with a fresh token. Limited per public key and per client address (429 with Retry-After).',
    tags: ['Widget'],
    use: [widgetCors, addressLimit],
    body: WidgetDealRequest,
    responses: {
      201: { description: 'A new deal and its widget token', schema: WidgetDealCreated },
      200: { description: 'The deal this external_id names, with a fresh widget token', schema: WidgetDealCreated },
      409: CONFLICT,
    },
    handler: async (ctx, { body }) => {
      const { public_key: publicKey, ...fields } = body;
      const marketplace = await marketplaceForPublicKey(services, ctx, publicKey);
      const wait = await countCreation(
        services.db,
        keySubject(marketplace.id),
        config.WIDGET_CREATE_LIMIT_PER_KEY,
        window,
      );
      if (wait !== undefined) throw rateLimited(wait, 'for this public key');
      // The public key and an external_id are guessable; a repeat gets a token only when it gives the deal's own
      // values, the buyer's e-mail (always given) included: createDeal answers 409 deal_conflict otherwise.
      // A new deal's mails are decided before it is made (its workflow mails the parties right after): a known buyer
      // gets the new-deal mail, an unknown one the invitation, so the answer is the same for both, and an address
      // named too often by anonymous creations gets none (src/widget/mail-limits.ts).
      const known = await findDeal(services.db, { marketplaceId: marketplace.id, externalId: fields.external_id });
      const mails = known
        ? undefined
        : await decideWidgetMail(
            services.db,
            { marketplaceId: marketplace.id, externalId: fields.external_id },
            'created',
            [fields.buyer_email, ...(fields.seller_email ? [fields.seller_email] : [])],
          );
      const { snapshot, created } = await createDeal(services, marketplace, fields).catch((error: unknown) => {
        // Asked again without the language: the same deal, or a 409 naming only the terms that differ.
        if (languageDiffers(error)) return createDeal(services, marketplace, withoutLanguage(fields));
        throw error;
      });
      ctx.status = created ? 201 : 200;
      ctx.body = await withToken(
        snapshot,
        marketplace.id,
        created && mails?.get(fields.buyer_email.trim().toLowerCase()) === true,
      );
    },
  });

  api.route({
    method: 'post',
    path: `${BASE}/lookup`,
    operationId: 'widgetLookupDeal',
    summary: "Find the deal of the storefront's order (the widget's page load), creating nothing",
    description:
      "The same body as the creation. When the external_id names a deal and the fields given match it (the buyer's " +
      'e-mail always), answers it with a fresh widget token as a repeat of the creation would; 204 when there is no ' +
      'such deal, or a field differs (the answer never tells which), so the buyer starts one with the creation. The widget calls it on every page load, so it keeps no ' +
      "token in the storefront's storage. Limited per client address (WIDGET_FIND_LIMIT_PER_ADDRESS), apart from creations.",
    tags: ['Widget'],
    use: [widgetCors, lookupLimit],
    body: WidgetDealRequest,
    responses: {
      200: {
        description: 'The deal this external_id names, with a fresh widget token (invitation_sent is false)',
        schema: WidgetDealCreated,
      },
      204: {
        description:
          "No deal has this external_id, or its fields (the buyer's e-mail among them) differ from those given",
      },
    },
    handler: async (ctx, { body }) => {
      const { public_key: publicKey, ...fields } = body;
      const marketplace = await marketplaceForPublicKey(services, ctx, publicKey);
      ctx.set('Cache-Control', 'no-store');
      const deal = await findDeal(services.db, { marketplaceId: marketplace.id, externalId: fields.external_id });
      // Any mismatch answers as an unknown order does: which field differs would tell a guesser the others are right.
      const matches = deal !== undefined && dealConflicts(deal, withoutLanguage(fields)).length === 0;
      const snapshot = matches ? await loadSnapshot(services.db, deal.id) : undefined;
      if (!snapshot) {
        ctx.status = 204;
        return;
      }
      ctx.body = await withToken(snapshot, marketplace.id, false);
    },
  });

  // Every route behind the widget token takes it in the query too (requireWidgetToken reads it).
  const TokenQuery = z.object({
    wt: z.string().optional().describe('The widget token, for top-level navigations that cannot send headers'),
  });

  api.route({
    ...common,
    method: 'get',
    path: `${BASE}/{deal_id}`,
    operationId: 'widgetGetDeal',
    summary: 'The deal as the buyer sees it, with the cabinet link',
    params: DealParams,
    query: TokenQuery,
    responses: { 200: { description: 'The deal', schema: WidgetDeal } },
    handler: (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      const { snapshot, marketplace } = widget(ctx);
      ctx.body = widgetDeal(snapshot, config.BASE_URL, marketplace.mode);
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: `${BASE}/{deal_id}/start`,
    operationId: 'widgetStart',
    summary:
      'Continue: the contract (when the deal has no document) and the approval (when none is pending or approved)',
    description: "Repeating it changes nothing. The contract is a DOCX in the buyer's cloud, a `contract` document.",
    params: DealParams,
    query: TokenQuery,
    body: z.object({ locale: Locale }),
    responses: { 200: { description: 'The deal after the step', schema: WidgetDeal } },
    handler: async (ctx, { body }) => {
      const { marketplace, snapshot } = widget(ctx);
      ctx.body = widgetDeal(
        await continueDeal(services, { kind: 'widget', marketplace }, snapshot.deal.id, body.locale),
        config.BASE_URL,
        marketplace.mode,
      );
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: `${BASE}/{deal_id}/escrow`,
    idempotent: idempotency(services),
    operationId: 'widgetEscrow',
    summary: 'Pay safely: hold the full amount in escrow (the deal must be approved)',
    description:
      'As the marketplace escrow for the full amount. With `Accept: text/html` (a top-level navigation, token in `wt`) ' +
      "it answers 303 to the acquirer's payment_url (live) or to a result page (sandbox, and on refusals).",
    params: DealParams,
    query: TokenQuery.extend({ locale: Locale }),
    responses: {
      201: { description: 'A new payment', schema: EscrowResponse },
      200: { description: 'The live payment still pending', schema: EscrowResponse },
      303: { description: 'Accept: text/html — to payment_url or the result page' },
    },
    handler: async (ctx, { query }) => {
      const { marketplace, snapshot } = widget(ctx);
      const html = ctx.accepts('json', 'html') === 'html';
      const result = (params: Record<string, string>) =>
        `${config.BASE_URL}${RESULT_PATH}?${new URLSearchParams({ deal_id: snapshot.deal.id, locale: query.locale, ...params })}`;
      try {
        const { payment, created } = await startEscrow(services, { kind: 'widget', marketplace }, snapshot.deal.id, {
          amount: 0,
          description: '',
        });
        if (html) return seeOther(ctx, payment.payment_url ?? result({ status: payment.status }));
        ctx.status = created ? 201 : 200;
        ctx.body = escrowResponse(payment);
      } catch (error) {
        if (!html || !(error instanceof Problem)) throw error;
        seeOther(ctx, result({ error: error.code }));
      }
    },
  });
}

function seeOther(ctx: Context, location: string): void {
  ctx.redirect(location);
  ctx.status = 303;
}
