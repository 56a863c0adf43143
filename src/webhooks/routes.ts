// Webhook registration for marketplaces (/api/mkt/webhook: register, read, unregister, rotate the secret), their
// events list (event-routes.ts), and the administrators' webhook log and replay.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { WEBHOOK_URL } from '../http/web-addresses.ts';
import { queryInt } from '../http/query-values.ts';
import type { Api } from '../http/api.ts';
import { Problem, notFound } from '../http/problem.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../accounts/admin.ts';
import { findMarketplace, requireSecretKey, type Marketplace } from '../marketplaces/marketplaces.ts';
import type { webhookReplayWorkflow } from '../../workflows/webhook-replay.ts';
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
import { createDelivery, deleteDelivery, eventOfDeliveryOrAttempt, listAttempts } from './deliveries.ts';

// No userinfo in the shape: credentials do not belong in a URL; receivers authenticate webhooks by their signature.
const WebhookUrl = z
  .string()
  .max(2048)
  .regex(WEBHOOK_URL, 'must be an absolute http or https URL with a lower-case host and no credentials')
  .meta({ format: 'uri' })
  .describe('Receiving URL at a public address (https for live marketplaces); loopback only where the service allows it');

const Events = z.array(z.enum(WEBHOOK_EVENTS));

const Registered = z.object({
  ok: z.literal(true),
  url: z.string(),
  events: Events.describe('The event types sent to it'),
  secret: z.string().describe('Signing secret, whsec_ and base64 of 32 bytes; kept until rotated, whatever else changes'),
});

const PreviousExpiresAt = z.iso
  .datetime()
  .nullable()
  .describe('Until when the secret the last rotation replaced signs beside the current one (a past time: it signs no more); null before any rotation');

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

const NO_WEBHOOK = 'No webhook is registered; POST /api/mkt/webhook with {url} first.';

const AttemptItem = z.object({
  id: z.uuid().describe('The attempt; replay accepts it'),
  delivery_id: z.uuid().describe('X-Svc-Delivery of the attempt'),
  event_id: z.uuid().describe('webhook-id and the body event_id'),
  attempted_at: z.iso.datetime(),
  event: z.enum(WEBHOOK_EVENTS),
  deal_id: z.uuid(),
  attempt: z.number().int().describe('1 for the first attempt of a delivery'),
  status: z.enum(['delivered', 'retrying', 'failed']),
  http_status: z.number().int().nullable().describe('null when no answer came'),
  error: z.string().nullable().describe('Why the attempt failed'),
  duration_ms: z.number().int(),
});

const Replayed = z.object({ delivery_id: z.uuid(), event_id: z.uuid(), status: z.literal('pending') });

// Ids that cannot be ours are simply unknown (404), as CONTRACT asks, rather than a 400 about their format.
const IdParam = z.object({ id: z.string() });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
      expire_previous_after_seconds: z
        .number()
        .int()
        .min(0)
        .max(MAX_PREVIOUS_SECRET_SECONDS)
        .default(86_400)
        .describe('How long the replaced secret keeps signing; 0 stops it at once (a leaked secret)'),
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

  api.route({
    method: 'get',
    path: '/admin/marketplaces/{id}/webhook-deliveries',
    operationId: 'listWebhookAttempts',
    summary: "The marketplace's webhook log: every attempt, newest first",
    tags: ['Administration'],
    security: ['adminToken'],
    use: [admin],
    params: IdParam,
    query: z.object({ limit: queryInt(1, 500).default(100) }),
    responses: { 200: { description: 'Attempts, newest first', schema: z.array(AttemptItem) } },
    handler: async (ctx, { params, query }) => {
      if (!UUID.test(params.id) || !(await findMarketplace(db, params.id))) throw notFound('No such marketplace.');
      const items = await listAttempts(db, params.id, query.limit);
      ctx.body = items.map((item) => ({ ...item, attempted_at: item.attempted_at.toISOString() }));
    },
  });

  api.route({
    method: 'post',
    path: '/admin/webhook-deliveries/{id}/replay',
    operationId: 'replayWebhook',
    summary: 'Send an event again as a new delivery',
    description:
      '`id` is a delivery id or an attempt id from the webhook log. The replay carries the same event id, body and ' +
      'X-Svc-Signature, and a new X-Svc-Delivery; it is retried like any delivery.',
    tags: ['Administration'],
    security: ['adminToken'],
    use: [admin],
    params: IdParam,
    responses: { 202: { description: 'The replay is under way', schema: Replayed } },
    handler: async (ctx, { params }) => {
      const found = UUID.test(params.id) ? await eventOfDeliveryOrAttempt(db, params.id) : undefined;
      if (!found) throw notFound('No such webhook delivery or attempt.');
      const deliveryId = randomUUID();
      await createDelivery(db, deliveryId, found.event_id);
      try {
        await services.temporal.workflow.start<typeof webhookReplayWorkflow>('webhookReplayWorkflow', {
          args: [deliveryId],
          workflowId: `webhook-replay/${deliveryId}`,
          taskQueue: services.config.TEMPORAL_TASK_QUEUE,
        });
      } catch (error) {
        await deleteDelivery(db, deliveryId).catch(() => {}); // no orphan pending delivery
        services.logger.error({ err: error, delivery_id: deliveryId }, 'could not start a webhook replay');
        throw new Problem(503, 'temporal_unavailable', 'The replay could not be started; retry shortly.', {
          headers: { 'Retry-After': '5' },
        });
      }
      ctx.status = 202;
      ctx.body = { delivery_id: deliveryId, event_id: found.event_id, status: 'pending' };
    },
  });
}

const previousExpiresAt = (endpoint: WebhookEndpoint) => endpoint.previous_expires_at?.toISOString() ?? null;
