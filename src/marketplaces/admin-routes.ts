// The administrators' marketplace operations: list and card, changes, key rotation, deactivation. Every role reads;
// changes are the admin role's, and the audit log gets each with the card before it (requireAdmin writes it).
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { notFound } from '../http/problem.ts';
import { queryInt } from '../http/query-values.ts';
import { nonBlank } from '../http/text.ts';
import { OriginSchema } from '../http/web-addresses.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../admin/auth.ts';
import { ExactRedirectUri } from '../sso/schemas.ts';
import type { Marketplace, StoredFeeSchedule } from './marketplaces.ts';
import { Money } from '../deals/views.ts';
import { FEE_MOMENTS } from '../money/fee.ts';
import { toMinor, toNumber } from '../money/amount.ts';
import { LIVE_PROVIDERS } from '../escrow/providers.ts';
import {
  DEFAULT_KEY_OVERLAP_SECONDS,
  MAX_KEY_OVERLAP_SECONDS,
  listMarketplaces,
  marketplaceCard,
  rotatePublicKey,
  rotateSecretKey,
  setMarketplaceActive,
  updateMarketplace,
  type MarketplaceCard,
} from './admin.ts';

const Mode = z.enum(['sandbox', 'live']);

export const MarketplaceItem = z.object({
  id: z.uuid(),
  name: z.string(),
  mode: Mode,
  active: z.boolean().describe('false: its keys, widget tokens and SSO client are refused'),
  allowed_origins: z.array(z.string()),
  sso_redirect_uri: z.string().nullable(),
  created_at: z.iso.datetime(),
});

const KeyInfo = z.object({
  kind: z.enum(['secret', 'public']).describe('`secret` is mk_, `public` is pk_'),
  prefix: z
    .string()
    .nullable()
    .describe('The first characters of the key, to tell keys apart; null for keys made before prefixes were kept'),
  status: z
    .enum(['active', 'expiring', 'expired', 'revoked'])
    .describe('`expiring`: replaced by a rotation, working until expires_at'),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime().nullable(),
  revoked_at: z.iso.datetime().nullable(),
});

/** A percentage of at most two decimals, checked on its shortest decimal form as Money is. */
const Percent = z
  .number()
  .min(0)
  .max(100)
  .refine((value) => /^\d+(\.\d{1,2})?$/.test(String(value)), { message: 'must have at most two decimals' })
  .meta({ multipleOf: 0.01 });

const FEE_RULE =
  'The fee of a new deal: `percent` of its amount (rounded half-up to the kopeck) plus `fixed`, raised to `min` and ' +
  'lowered to `max` (the maximum wins when the minimum is larger), never more than the amount. A part that is null or ' +
  '0 is not set. The deal keeps the fee it got: a later change leaves open deals as they are; `fee` on the deal ' +
  'creation overrides the schedule.';

export const FeeScheduleBody = z
  .object({
    percent: Percent.nullable()
      .optional()
      .describe('Per cent of the deal amount, 0–100 with at most two decimals (2.5 is 2.5 %)'),
    fixed: Money.nullable().optional().describe('A fixed part added to every deal'),
    min: Money.nullable().optional().describe('The least fee of a deal'),
    max: Money.nullable().optional().describe('The most fee of a deal'),
  })
  .describe(`Replaces the whole schedule (a part left out is null). ${FEE_RULE}`);

const FeeScheduleView = z
  .object({
    percent: z.number().nullable(),
    fixed: z.number().nullable(),
    min: z.number().nullable(),
    max: z.number().nullable(),
  })
  .describe(FEE_RULE);

const FeeMomentSchema = z
  .enum(FEE_MOMENTS)
  .describe(
    "When a deal's fee moves to the marketplace in the ledger: `payment` when the buyer's money is held, `close` when the deal is released (a refund takes none)",
  );

const ProviderSchema = z
  .enum(LIVE_PROVIDERS)
  .describe(
    'The acquirer of a live marketplace’s escrow: `yookassa_safe_deal` keeps the buyer’s money in a YooKassa Safe Deal ' +
      'and pays the seller out of it; `yookassa_two_stage` holds it as a two-stage card payment captured into the shop. ' +
      'A change applies to payments started from then on (money already held stays with the acquirer that holds it); a ' +
      'sandbox marketplace’s payments are the sandbox’s whatever this says',
  );

/** The buyer's inspection window in whole days, within the bounds the marketplaces table checks. */
export const INSPECTION_DAYS_MAX = 60;
const InspectionDays = z
  .number()
  .int()
  .min(0)
  .max(INSPECTION_DAYS_MAX)
  .describe(
    'Days the buyer has after delivery to open a dispute before the money is released to the seller: 0 (at delivery) to 60',
  );

export const MarketplaceCardSchema = MarketplaceItem.extend({
  fee_schedule: FeeScheduleView,
  fee_moment: FeeMomentSchema,
  provider: ProviderSchema,
  inspection_days: InspectionDays,
  sso_client_id: z
    .string()
    .nullable()
    .describe('The SSO client made for sso_redirect_uri (its client_id is the marketplace id), or null'),
  keys: z.array(KeyInfo).describe('Every key it had, newest first; never the keys themselves'),
  updated_at: z.iso.datetime(),
});

export const MarketplaceChangesBody = z.object({
  name: nonBlank(200).optional(),
  mode: Mode.optional().describe('`sandbox` holds escrow at once; `live` uses the acquirer'),
  allowed_origins: z
    .array(OriginSchema)
    .max(50)
    .optional()
    .describe('Replaces the whole list (storefronts allowed to call the widget API)'),
  sso_redirect_uri: ExactRedirectUri.optional().describe(
    'The redirect URI of its SSO client (made now if it has none)',
  ),
  fee_schedule: FeeScheduleBody.optional(),
  fee_moment: FeeMomentSchema.optional(),
  provider: ProviderSchema.optional(),
  inspection_days: InspectionDays.optional(),
});

export const OverlapSeconds = z
  .number()
  .int()
  .min(0)
  .max(MAX_KEY_OVERLAP_SECONDS)
  .default(DEFAULT_KEY_OVERLAP_SECONDS)
  .describe('How long the replaced key keeps working; 0 stops it at once (a leaked key)');

const iso = (date: Date | null) => date?.toISOString() ?? null;

export const marketplaceItem = (m: Marketplace) => ({
  id: m.id,
  name: m.name,
  mode: m.mode,
  active: m.active,
  allowed_origins: m.allowed_origins,
  sso_redirect_uri: m.sso_redirect_uri,
  created_at: m.created_at.toISOString(),
});

/** The stored schedule as the API's numbers: money exactly (src/money/amount.ts), the percentage as written. */
export const feeScheduleJson = (schedule: StoredFeeSchedule) => {
  const money = (value: string | null) => (value === null ? null : toNumber(toMinor(value)));
  return {
    percent: schedule.percent === null ? null : Number(schedule.percent),
    fixed: money(schedule.fixed),
    min: money(schedule.min),
    max: money(schedule.max),
  };
};

export const cardJson = (card: MarketplaceCard) => ({
  ...marketplaceItem(card),
  fee_schedule: feeScheduleJson(card.fee_schedule),
  fee_moment: card.fee_moment,
  provider: card.provider,
  inspection_days: card.inspection_days,
  sso_client_id: card.sso_client_id,
  keys: card.keys.map((key) => ({
    ...key,
    created_at: key.created_at.toISOString(),
    expires_at: iso(key.expires_at),
    revoked_at: iso(key.revoked_at),
  })),
  updated_at: card.updated_at.toISOString(),
});

const NO_SUCH = 'No such marketplace.';

export function adminMarketplaceRoutes(api: Api, services: Services): void {
  const { db } = services;
  const admin = {
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
  };
  const params = z.object({ id: z.string() });
  const card = { 200: { description: 'The marketplace card', schema: MarketplaceCardSchema } };

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/marketplaces',
    operationId: 'listMarketplaces',
    summary: 'Marketplaces, newest first, with search',
    description:
      '`q` matches a part of the name or the start of the id. Pass the last item’s id as `starting_after` for the next page. No keys.',
    query: z.object({
      q: z.string().min(1).max(200).optional().describe('A part of the name, or the start of the id'),
      limit: queryInt(1, 100).default(50),
      starting_after: z.uuid().optional().describe('A marketplace id: the page continues after it'),
    }),
    responses: {
      200: {
        description: 'A page of marketplaces',
        schema: z.object({ items: z.array(MarketplaceItem), has_more: z.boolean() }),
      },
    },
    handler: async (ctx, { query }) => {
      const page = await listMarketplaces(db, { q: query.q, limit: query.limit, startingAfter: query.starting_after });
      if (!page) throw notFound('starting_after is not a marketplace.');
      ctx.body = { items: page.items.map(marketplaceItem), has_more: page.has_more };
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/marketplaces/{id}',
    operationId: 'getMarketplace',
    summary: 'The administrative card of a marketplace',
    params,
    responses: card,
    handler: async (ctx, { params }) => {
      const found = await marketplaceCard(db, params.id);
      if (!found) throw notFound(NO_SUCH);
      ctx.body = cardJson(found);
    },
  });

  api.route({
    ...admin,
    method: 'patch',
    path: '/admin/marketplaces/{id}',
    operationId: 'updateMarketplace',
    summary: 'Change a marketplace’s name, mode, allowed origins, SSO redirect URI, fee, acquirer or inspection window',
    description:
      'Fields left out stay; `fee_schedule`, when given, replaces the whole schedule. Its automatic SSO client follows ' +
      'the name and the redirect URI. A new fee schedule or moment applies to deals made from now on, a new `provider` to ' +
      'payments started from now on. Each change is in the audit log with the card before and after.',
    params,
    body: MarketplaceChangesBody,
    responses: card,
    handler: async (ctx, { params, body }) => {
      const changed = await updateMarketplace(services, params.id, body);
      if (!changed) throw notFound(NO_SUCH);
      ctx.state.auditBefore = cardJson(changed.before);
      ctx.body = cardJson(changed.after);
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/marketplaces/{id}/rotate-secret-key',
    operationId: 'rotateMarketplaceSecretKey',
    summary: 'Issue a new secret mk_ key; the old one keeps working for a while',
    description:
      'The replaced key works until `previous_expires_at`, then is 401 on every instance; a key replaced by an earlier ' +
      'rotation stops at once. The new key is shown only now.',
    params,
    body: z.object({ expire_previous_after_seconds: OverlapSeconds }),
    responses: {
      200: {
        description: 'The new key',
        schema: z.object({
          secret_key: z.string().describe('The new mk_ key; shown once'),
          previous_expires_at: z.iso
            .datetime()
            .nullable()
            .describe('Until when the replaced key works; null when there was none'),
        }),
      },
    },
    handler: async (ctx, { params, body }) => {
      const rotated = await rotateSecretKey(db, params.id, body.expire_previous_after_seconds);
      if (!rotated) throw notFound(NO_SUCH);
      ctx.state.auditBefore = cardJson(rotated.before);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { secret_key: rotated.secretKey, previous_expires_at: iso(rotated.previousExpiresAt) };
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/marketplaces/{id}/rotate-public-key',
    operationId: 'rotateMarketplacePublicKey',
    summary: 'Issue a new public pk_ key; the old one stops at once',
    params,
    responses: {
      200: { description: 'The new key', schema: z.object({ public_key: z.string().describe('The new pk_ key') }) },
    },
    handler: async (ctx, { params }) => {
      const rotated = await rotatePublicKey(db, params.id);
      if (!rotated) throw notFound(NO_SUCH);
      ctx.state.auditBefore = cardJson(rotated.before);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { public_key: rotated.publicKey };
    },
  });

  for (const active of [false, true]) {
    api.route({
      ...admin,
      method: 'post',
      path: `/admin/marketplaces/{id}/${active ? 'activate' : 'deactivate'}`,
      operationId: active ? 'reactivateMarketplace' : 'deactivateMarketplace',
      summary: active ? 'Activate a deactivated marketplace again' : 'Deactivate a marketplace',
      description: active
        ? 'Its keys (those not revoked or expired meanwhile), widget tokens and SSO client work again.'
        : 'Its mk_ and pk_ keys, widget tokens and SSO client are refused at once on every instance; its deals and webhook log stay readable here.',
      params,
      responses: card,
      handler: async (ctx, { params }) => {
        const changed = await setMarketplaceActive(db, params.id, active);
        if (!changed) throw notFound(NO_SUCH);
        ctx.state.auditBefore = cardJson(changed.before);
        ctx.body = cardJson(changed.after);
      },
    });
  }
}
