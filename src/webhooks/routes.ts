// Webhook registration for marketplaces (/api/mkt/webhook: register, read, unregister, rotate the secret), their
// events list (event-routes.ts), and the administrators' side: the endpoint with its secret, a test event, the webhook
// log and replays.
import { z } from 'zod';
import { WEBHOOK_URL } from '../http/web-addresses.ts';
import { QueryTimestamp, queryInt } from '../http/query-values.ts';
import type { Db } from '../db.ts';
import type { Api } from '../http/api.ts';
import { problem, notFound } from '../http/problem.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import { forbiddenFor, requireAdmin, type AdminActor } from '../admin/auth.ts';
import { recordAudit } from '../admin/audit.ts';
import { findMarketplace, requireSecretKey, type Marketplace } from '../marketplaces/marketplaces.ts';
import {
  MAX_PREVIOUS_SECRET_SECONDS,
  checkWebhookUrl,
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  rotateWebhookSecret,
  saveWebhookEndpoint,
  type WebhookEndpoint,
} from './endpoints.ts';
import { eventRoutes } from './event-routes.ts';
import { WEBHOOK_EVENTS } from './events.ts';
import {
  REPLAY_BATCH,
  TEST_EVENT,
  eventOfDeliveryOrAttempt,
  listAttempts,
  replayFailedSince,
  sendTestEvent,
  startDelivery,
} from './deliveries.ts';

// No userinfo in the shape: credentials do not belong in a URL; receivers authenticate webhooks by their signature.
const WebhookUrl = z
  .string()
  .max(2048)
  .regex(WEBHOOK_URL, 'must be an absolute http or https URL with a lower-case host and no credentials')
  .meta({ format: 'uri' })
  .describe(
    'Receiving URL at a public address (https for live marketplaces); loopback only where the service allows it',
  );

const Events = z.array(z.enum(WEBHOOK_EVENTS));

const Registered = z.object({
  ok: z.literal(true),
  url: z.string(),
  events: Events.describe('The event types sent to it'),
  secret: z
    .string()
    .describe('Signing secret, whsec_ and base64 of 32 bytes; kept until rotated, whatever else changes'),
});

const PreviousExpiresAt = z.iso
  .datetime()
  .nullable()
  .describe(
    'Until when the secret the last rotation replaced signs beside the current one (a past time: it signs no more); null before any rotation',
  );

const Registration = z.object({
  url: z.string(),
  events: Events.describe('The event types sent to it'),
  previous_expires_at: PreviousExpiresAt,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

const Rotated = z.object({
  secret: z.string().describe('The new signing secret; X-Svc-Signature and the first webhook-signature use it'),
  previous_expires_at: PreviousExpiresAt,
});

const ExpirePreviousSeconds = z
  .number()
  .int()
  .min(0)
  .max(MAX_PREVIOUS_SECRET_SECONDS)
  .default(86_400)
  .describe('How long the replaced secret keeps signing; 0 stops it at once (a leaked secret)');

const NO_WEBHOOK = 'No webhook is registered; POST /api/mkt/webhook with {url} first.';
export const noWebhookYet = () =>
  problem(
    'webhook_not_registered',
    'The marketplace has registered no webhook yet (POST /api/mkt/webhook with its secret key).',
  );

const AttemptStatus = z.enum(['delivered', 'retrying', 'failed']);
const LoggedEvent = z.enum([...WEBHOOK_EVENTS, TEST_EVENT]);

const AttemptItem = z.object({
  id: z.uuid().describe('The attempt; replay accepts it'),
  delivery_id: z.uuid().describe('X-Svc-Delivery of the attempt'),
  event_id: z.uuid().describe('webhook-id and the body event_id'),
  attempted_at: z.iso.datetime(),
  event: LoggedEvent,
  deal_id: z.uuid().nullable().describe(`null for a ${TEST_EVENT} event`),
  attempt: z.number().int().describe('1 for the first attempt of a delivery'),
  status: AttemptStatus,
  http_status: z.number().int().nullable().describe('null when no answer came'),
  error: z.string().nullable().describe('Why the attempt failed'),
  duration_ms: z.number().int(),
  request_body: z.string().describe('The JSON body sent (the same for every attempt of the event)'),
  response_excerpt: z.string().nullable().describe('The first KiB of the answer’s body; null when no answer came'),
});

const Replayed = z.object({ delivery_id: z.uuid(), event_id: z.uuid(), status: z.literal('pending') });

// Ids that cannot be ours are simply unknown (404), rather than a 400 about their format
// (docs/decisions/0016-errors-are-problem-details-from-one-catalog.md).
const IdParam = z.object({ id: z.string() });

export function webhookRoutes(api: Api, services: Services): void {
  const { db, masterKey } = services;
  const marketplaceKey = requireSecretKey(db);
  const admin = requireAdmin(db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN);

  api.route({
    method: 'post',
    path: '/api/mkt/webhook',
    operationId: 'registerWebhook',
    summary: 'Register or change the webhook URL and the events sent to it',
    description:
      'Events are POSTed as JSON signed with X-Svc-Signature (hex HMAC-SHA256 of the raw body keyed with the secret) ' +
      'and Standard Webhooks headers. The secret is made on the first registration and kept when the URL or the ' +
      'events change. `events` replaces the types sent; without it every type is sent, those added later included. ' +
      'A change applies to events that happen after it; every event is listed at GET /api/mkt/events either way.',
    tags: ['Marketplace'],
    security: ['marketplaceKey'],
    use: [marketplaceKey],
    body: z.object({
      url: WebhookUrl,
      events: Events.min(1).optional().describe('The event types to send (repeats count once); absent: all of them'),
    }),
    responses: { 200: { description: 'Registered', schema: Registered } },
    handler: async (ctx, { body }) => {
      const marketplace = ctx.state.marketplace as Marketplace;
      await checkWebhookUrl(marketplace, body.url, { allowLoopback: services.config.WEBHOOK_ALLOW_LOOPBACK });
      const endpoint = await saveWebhookEndpoint(db, masterKey, marketplace.id, body.url, body.events);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { ok: true, url: endpoint.url, events: endpoint.events, secret: endpoint.secret };
    },
  });

  api.route({
    method: 'get',
    path: '/api/mkt/webhook',
    operationId: 'getWebhook',
    summary: 'Read the webhook registration',
    tags: ['Marketplace'],
    security: ['marketplaceKey'],
    use: [marketplaceKey],
    responses: { 200: { description: 'The registration', schema: Registration } },
    handler: async (ctx) => {
      const marketplace = ctx.state.marketplace as Marketplace;
      const endpoint = await findWebhookEndpoint(db, masterKey, marketplace.id);
      if (!endpoint) throw notFound(NO_WEBHOOK);
      ctx.body = {
        url: endpoint.url,
        events: endpoint.events,
        previous_expires_at: previousExpiresAt(endpoint),
        created_at: endpoint.created_at.toISOString(),
        updated_at: endpoint.updated_at.toISOString(),
      };
    },
  });

  api.route({
    method: 'delete',
    path: '/api/mkt/webhook',
    operationId: 'deleteWebhook',
    summary: 'Unregister the webhook',
    description:
      'No delivery is made for later events; deliveries not yet delivered stop (an attempt already under way ' +
      'finishes) and show as skipped. Events are still recorded and listed at GET /api/mkt/events. A later ' +
      'registration makes a new secret. Answers 204 when no webhook is registered too, so a repeat is safe.',
    tags: ['Marketplace'],
    security: ['marketplaceKey'],
    use: [marketplaceKey],
    responses: { 204: { description: 'No webhook is registered now' } },
    handler: async (ctx) => {
      await deleteWebhookEndpoint(db, (ctx.state.marketplace as Marketplace).id);
      ctx.status = 204;
    },
  });

  api.route({
    method: 'post',
    path: '/api/mkt/webhook/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Make a new signing secret, the old one signing beside it for a while',
    description:
      'Until `previous_expires_at` every attempt carries both signatures: `webhook-signature` lists `v1,<new> v1,<old>` ' +
      '(Standard Webhooks libraries accept either), X-Svc-Signature is made with the new secret and ' +
      'X-Svc-Signature-Previous with the old one; then only the new one. Retries of earlier events are signed the ' +
      'same way. A secret replaced by an earlier rotation stops signing at once. 404 when no webhook is registered.',
    tags: ['Marketplace'],
    security: ['marketplaceKey'],
    use: [marketplaceKey],
    body: z.object({
      expire_previous_after_seconds: ExpirePreviousSeconds,
    }),
    responses: { 200: { description: 'The new secret', schema: Rotated } },
    handler: async (ctx, { body }) => {
      const marketplace = ctx.state.marketplace as Marketplace;
      const endpoint = await rotateWebhookSecret(db, masterKey, marketplace.id, body.expire_previous_after_seconds);
      if (!endpoint) throw notFound(NO_WEBHOOK);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { secret: endpoint.secret, previous_expires_at: previousExpiresAt(endpoint) };
    },
  });

  eventRoutes(api, services, marketplaceKey);

  const adminOnly = { tags: ['Administration'], security: ['adminToken'], use: [admin] };
  const marketplaceOr404 = async (id: string) => {
    const marketplace = isUuid(id) ? await findMarketplace(db, id) : undefined;
    if (!marketplace) throw notFound('No such marketplace.');
    return marketplace;
  };
  // The marketplace exists but has no webhook yet: a state to change first (409), not a missing resource.
  const endpointOrConflict = async (id: string) => {
    const endpoint = await findWebhookEndpoint(db, masterKey, (await marketplaceOr404(id)).id);
    if (!endpoint) throw noWebhookYet();
    return endpoint;
  };

  api.route({
    ...adminOnly,
    method: 'get',
    path: '/admin/marketplaces/{id}/webhook',
    operationId: 'getMarketplaceWebhook',
    summary: "The marketplace's webhook endpoint, its signing secret revealed",
    description:
      'Only the admin role may see the secret (403 forbidden for others); each reveal is written to the audit log as revealWebhookSecret. ' +
      'A marketplace that has registered no webhook yet answers with `url` and the rest null (404 is for an unknown marketplace).',
    params: IdParam,
    responses: {
      200: {
        description: 'The endpoint',
        schema: z.object({
          url: z.string().nullable().describe('Null while the marketplace has registered no webhook'),
          events: Events.nullable(),
          secret: z.string().nullable().describe('The current signing secret'),
          previous_expires_at: PreviousExpiresAt,
          created_at: z.iso.datetime().nullable(),
        }),
      },
    },
    handler: async (ctx, { params }) => {
      const actor = ctx.state.admin as AdminActor;
      if (actor.role !== 'admin') throw forbiddenFor(actor.role);
      const marketplace = await marketplaceOr404(params.id);
      const endpoint = await findWebhookEndpoint(db, masterKey, marketplace.id);
      ctx.set('Cache-Control', 'no-store');
      if (!endpoint) {
        ctx.body = { url: null, events: null, secret: null, previous_expires_at: null, created_at: null };
        return;
      }
      await revealWebhookSecret(db, actor.actor, params.id, endpoint);
      ctx.body = {
        url: endpoint.url,
        events: endpoint.events,
        secret: endpoint.secret,
        previous_expires_at: previousExpiresAt(endpoint),
        created_at: endpoint.created_at.toISOString(),
      };
    },
  });

  api.route({
    ...adminOnly,
    method: 'post',
    path: '/admin/marketplaces/{id}/webhook/rotate-secret',
    operationId: 'rotateMarketplaceWebhookSecret',
    summary: "Rotate the marketplace's webhook signing secret (as POST /api/mkt/webhook/rotate-secret does)",
    params: IdParam,
    body: z.object({ expire_previous_after_seconds: ExpirePreviousSeconds }),
    responses: { 200: { description: 'The new secret', schema: Rotated } },
    handler: async (ctx, { params, body }) => {
      const before = await endpointOrConflict(params.id);
      const endpoint = await rotateWebhookSecret(db, masterKey, params.id, body.expire_previous_after_seconds);
      if (!endpoint) throw noWebhookYet();
      ctx.state.auditBefore = { url: before.url, previous_expires_at: previousExpiresAt(before) };
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { secret: endpoint.secret, previous_expires_at: previousExpiresAt(endpoint) };
    },
  });

  api.route({
    ...adminOnly,
    method: 'post',
    path: '/admin/marketplaces/{id}/webhook/test',
    operationId: 'sendWebhookTest',
    summary: `Send a ${TEST_EVENT} event to the marketplace's webhook`,
    description: `Signed and retried like every event; its attempts show in the webhook log. The body is {event: "${TEST_EVENT}", marketplace_id, event_id, occurred_at}.`,
    params: IdParam,
    responses: { 202: { description: 'The delivery is under way', schema: Replayed } },
    handler: async (ctx, { params }) => {
      await endpointOrConflict(params.id);
      ctx.status = 202;
      ctx.body = await sendTestEvent(services, params.id);
    },
  });

  api.route({
    ...adminOnly,
    method: 'get',
    path: '/admin/marketplaces/{id}/webhook-deliveries',
    operationId: 'listWebhookAttempts',
    summary: "The marketplace's webhook log: every attempt, newest first",
    description:
      'Filter by the attempt’s `status`, the `event` and the `deal_id`; pass the last item’s id as `starting_after` for the next page.',
    params: IdParam,
    query: z.object({
      limit: queryInt(1, 500).default(100),
      starting_after: z.uuid().optional().describe('An attempt id: the page continues with older attempts'),
      status: AttemptStatus.optional(),
      event: LoggedEvent.optional(),
      deal_id: z.uuid().optional(),
    }),
    responses: {
      200: {
        description: 'Attempts, newest first',
        schema: z.object({ items: z.array(AttemptItem), has_more: z.boolean() }),
      },
    },
    handler: async (ctx, { params, query }) => {
      await marketplaceOr404(params.id);
      const page = await listAttempts(db, params.id, {
        limit: query.limit,
        startingAfter: query.starting_after,
        status: query.status,
        event: query.event,
        dealId: query.deal_id,
      });
      if (!page) throw notFound('starting_after is not an attempt of this marketplace.');
      ctx.body = {
        items: page.items.map((item) => ({ ...item, attempted_at: item.attempted_at.toISOString() })),
        has_more: page.has_more,
      };
    },
  });

  api.route({
    ...adminOnly,
    method: 'post',
    path: '/admin/marketplaces/{id}/webhook-deliveries/replay',
    operationId: 'replayFailedWebhooks',
    summary: 'Send again every event whose delivery failed since a moment',
    description:
      'Events delivered since, or still being sent, are left alone, so a repeat sends nothing twice; at most ' +
      `${REPLAY_BATCH} events at a time (repeat for the next ones).`,
    params: IdParam,
    body: z.object({
      since: QueryTimestamp.describe('Deliveries that failed at or after this moment'),
      status: z.literal('failed').default('failed').describe('Which deliveries: failed ones (given up on)'),
    }),
    responses: {
      202: {
        description: 'The replays are under way',
        schema: z.object({ replayed: z.number().int().describe('How many events are sent again') }),
      },
    },
    handler: async (ctx, { params, body }) => {
      await marketplaceOr404(params.id);
      ctx.status = 202;
      ctx.body = { replayed: await replayFailedSince(services, params.id, new Date(body.since)) };
    },
  });

  api.route({
    ...adminOnly,
    method: 'post',
    path: '/admin/webhook-deliveries/{id}/replay',
    operationId: 'replayWebhook',
    summary: 'Send an event again as a new delivery',
    description:
      '`id` is a delivery id or an attempt id from the webhook log. The replay carries the same event id, body and ' +
      'X-Svc-Signature, and a new X-Svc-Delivery; it is retried like any delivery.',
    params: IdParam,
    responses: { 202: { description: 'The replay is under way', schema: Replayed } },
    handler: async (ctx, { params }) => {
      const found = isUuid(params.id) ? await eventOfDeliveryOrAttempt(db, params.id) : undefined;
      if (!found) throw notFound('No such webhook delivery or attempt.');
      ctx.status = 202;
      ctx.body = await startDelivery(services, found.event_id);
    },
  });
}

/** Writes that an administrator saw the signing secret (the log keeps the fact, never the secret). */
export async function revealWebhookSecret(
  db: Db,
  actor: string,
  marketplaceId: string,
  endpoint: WebhookEndpoint,
): Promise<void> {
  await recordAudit(db, {
    actor,
    action: 'revealWebhookSecret',
    object_type: 'marketplace',
    object_id: marketplaceId,
    after: { url: endpoint.url, secret: endpoint.secret },
  });
}

const previousExpiresAt = (endpoint: WebhookEndpoint) => endpoint.previous_expires_at?.toISOString() ?? null;
