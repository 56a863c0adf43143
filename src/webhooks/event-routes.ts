// GET /api/mkt/events: every event of the marketplace's deals, whether a webhook carried it or not, so a marketplace
// can reconcile what it missed (a receiver that was down, a type it was not sent, a webhook it had unregistered).
// The same event ids and the same bodies as the webhooks.
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { problem } from '../http/problem.ts';
import { queryInt } from '../http/query-values.ts';
import type { Marketplace } from '../marketplaces/marketplaces.ts';
import type { Services } from '../services.ts';
import { ACTORS } from '../deals/model.ts';
import { WEBHOOK_EVENTS, listWebhookEvents } from './events.ts';

// The fields webhookBody writes, for the document; later fields may appear.
const WebhookBody = z
  .looseObject({
    event: z.enum(WEBHOOK_EVENTS),
    id: z.uuid().describe('The deal'),
    external_id: z.string(),
    title: z.string(),
    amount: z.number(),
    currency: z.string(),
    status: z.string().describe('The deal status after the change'),
    actor: z.enum(ACTORS).optional().describe('Who made the change'),
    reason: z.string().optional().describe('The reason given with the change, if any'),
    buyer_email: z.string(),
    seller_email: z.string(),
    event_id: z.uuid(),
    occurred_at: z.iso.datetime(),
  })
  .describe('The JSON object the webhook carried, field for field (its bytes are what X-Svc-Signature signs)');

const EventItem = z.object({
  event_id: z.uuid().describe('webhook-id and the body’s event_id'),
  type: z.enum(WEBHOOK_EVENTS),
  occurred_at: z.iso.datetime(),
  deal_id: z.uuid(),
  body: WebhookBody,
});

const EventList = z.object({
  items: z.array(EventItem).describe('Newest first'),
  has_more: z.boolean().describe('Whether more events lie beyond this page in the direction it was taken'),
});

const Cursor = z.uuid();

export function eventRoutes(api: Api, services: Services, marketplaceKey: Middleware): void {
  api.route({
    method: 'get',
    path: '/api/mkt/events',
    operationId: 'listEvents',
    summary: "The marketplace's deal events, newest first, for reconciliation",
    description:
      'Every event of the marketplace’s deals, sent as a webhook or not (a type the webhook does not take, no webhook ' +
      'registered), kept at least 30 days. Page older with `starting_after` = the last `event_id` of a page, newer ' +
      'with `ending_before` = the first one; `has_more` says whether that direction holds more. A cursor may be any ' +
      'event of the marketplace, filtered out or not; an unknown one, or both at once, is 400 invalid_cursor.',
    tags: ['Marketplace'],
    security: ['marketplaceKey'],
    use: [marketplaceKey],
    query: z.object({
      limit: queryInt(1, 100).default(20).describe('Events per page: 1 to 100, 20 when absent'),
      starting_after: Cursor.optional().describe('An event_id: the page of events older than it'),
      ending_before: Cursor.optional().describe('An event_id: the page of events newer than it'),
      deal_id: z.uuid().optional().describe('Only this deal’s events'),
      type: z.enum(WEBHOOK_EVENTS).optional().describe('Only events of this type'),
    }),
    responses: { 200: { description: 'A page of events', schema: EventList } },
    handler: async (ctx, { query }) => {
      if (query.starting_after && query.ending_before) {
        throw problem('invalid_cursor', 'Give starting_after (older events) or ending_before (newer ones), not both.');
      }
      const page = await listWebhookEvents(services.db, (ctx.state.marketplace as Marketplace).id, {
        limit: query.limit,
        startingAfter: query.starting_after,
        endingBefore: query.ending_before,
        dealId: query.deal_id,
        type: query.type,
      });
      if (!page) {
        const name = query.starting_after ? 'starting_after' : 'ending_before';
        throw problem(
          'invalid_cursor',
          `${name} is not an event_id of this marketplace's events; take it from a page of this list.`,
        );
      }
      ctx.body = {
        items: page.items.map((event) => ({
          event_id: event.event_id,
          type: event.type,
          occurred_at: event.occurred_at.toISOString(),
          deal_id: event.deal_id,
          body: JSON.parse(event.body.toString('utf8')),
        })),
        has_more: page.hasMore,
      };
    },
  });
}
