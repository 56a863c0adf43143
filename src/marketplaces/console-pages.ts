// The console's marketplace pages: the list with search, activation (the keys shown once), and the card: details,
// keys, deactivation, the webhook endpoint and the webhook log. They call the service functions the JSON operations
// call and write the audit log under the same action names. Dangerous actions ask for a confirmation first.
import type { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import { consolePage, notInConsole, type ConsolePage } from '../admin/console.ts';
import { formText, pagePlace, pager, queryText } from '../admin/console-kit.ts';
import {
  ANSWERED,
  consoleAction,
  consoleActions,
  type ActionEntry,
  type Answered,
  type Confirmation,
  type ConsoleAudit,
} from '../admin/console-actions.ts';
import { formatDate } from '../web/i18n.ts';
import { send } from '../web/page.ts';
import {
  checkWebhookUrl,
  findWebhookEndpoint,
  rotateWebhookSecret,
  saveWebhookEndpoint,
} from '../webhooks/endpoints.ts';
import { WEBHOOK_URL } from '../http/web-addresses.ts';
import { Problem, problem } from '../http/problem.ts';
import { WEBHOOK_EVENTS } from '../webhooks/events.ts';
import {
  TEST_EVENT,
  eventOfDeliveryOrAttempt,
  failedEventsSince,
  listAttempts,
  replayFailedSince,
  sendTestEvent,
  startDelivery,
} from '../webhooks/deliveries.ts';
import { noWebhookYet, revealWebhookSecret } from '../webhooks/routes.ts';
import { CreateMarketplaceBody } from './routes.ts';
import { MarketplaceChangesBody, cardJson } from './admin-routes.ts';
import {
  activateMarketplace,
  listMarketplaces,
  marketplaceCard,
  rotatePublicKey,
  rotateSecretKey,
  setMarketplaceActive,
  updateMarketplace,
  type MarketplaceCard,
} from './admin.ts';
import { marketplaceTranslator } from './console-i18n.ts';
import {
  OVERLAPS,
  activateBody,
  cardBody,
  listBody,
  shownOnce,
  type CardState,
  type CardFields,
  type ListFilter,
  type MarketplaceFields,
  type MarketplaceView,
  type Overlap,
  type Replaced,
  type Sending,
} from './console-views.ts';

const LIST_PAGE = 50;
const MODES = ['sandbox', 'live'] as const;
const STATES = ['active', 'inactive'] as const;
const LOG_PAGE = 50;
const LOGGED_EVENTS = [...WEBHOOK_EVENTS, TEST_EVENT] as const;
const ATTEMPT_STATUSES = ['delivered', 'retrying', 'failed'] as const;

/** `?done=` keys and their words: nothing from the query is shown but these. */
const DONE = {
  saved: 'saved',
  deactivated: 'deactivated',
  reactivated: 'reactivated',
  test_sent: 'testSent',
  replayed: 'replayed',
  webhook_registered: 'webhookRegistered',
  webhook_changed: 'webhookChanged',
} as const;

const view = (p: ConsolePage): MarketplaceView => ({ ...p, m: marketplaceTranslator(p.lang) });

function formFields(form: URLSearchParams): MarketplaceFields {
  return {
    name: formText(form, 'name', 200),
    mode: formText(form, 'mode', 20),
    allowed_origins: formText(form, 'allowed_origins', 20_000),
    sso_redirect_uri: formText(form, 'sso_redirect_uri', 2000),
  };
}

/** The card's form as typed; the acquirer and the window, when the form has none, are the marketplace's own. */
function cardFields(form: URLSearchParams, card: MarketplaceCard): CardFields {
  return {
    ...formFields(form),
    fee_percent: formText(form, 'fee_percent', 40),
    fee_fixed: formText(form, 'fee_fixed', 40),
    fee_min: formText(form, 'fee_min', 40),
    fee_max: formText(form, 'fee_max', 40),
    fee_moment: formText(form, 'fee_moment', 20),
    provider: form.has('provider') ? formText(form, 'provider', 40) : card.provider,
    inspection_days: form.has('inspection_days') ? formText(form, 'inspection_days', 10) : String(card.inspection_days),
  };
}

/** The window's days as the JSON body's number: whole decimal days only, anything else fails the schema. */
function dayCount(value: string): number {
  return /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
}

/** A fee field as the JSON body's number: empty is null, a decimal comma is a point; anything else fails the schema. */
function feeNumber(value: string): number | null {
  if (value === '') return null;
  return /^\d+([.,]\d+)?$/.test(value) ? Number(value.replace(',', '.')) : Number.NaN;
}

/** The card's form as the JSON body of PATCH /admin/marketplaces/{id}: the whole fee schedule with the details. */
function asChanges(values: CardFields) {
  return {
    ...asBody(values),
    fee_schedule: {
      percent: feeNumber(values.fee_percent),
      fixed: feeNumber(values.fee_fixed),
      min: feeNumber(values.fee_min),
      max: feeNumber(values.fee_max),
    },
    fee_moment: values.fee_moment,
    provider: values.provider,
    inspection_days: dayCount(values.inspection_days),
  };
}

/** The form as the JSON body of the same operation: origins one a line, an empty redirect URI left out. */
function asBody(values: MarketplaceFields) {
  return {
    name: values.name,
    mode: values.mode,
    allowed_origins: values.allowed_origins.split(/\s+/).filter(Boolean),
    ...(values.sso_redirect_uri ? { sso_redirect_uri: values.sso_redirect_uri } : {}),
  };
}

const invalidWords = (p: MarketplaceView, error: z.ZodError) =>
  p.m('invalidForm', {
    fields: [...new Set(error.issues.map((issue) => labelOf(p, String(issue.path[0] ?? ''))))].join(', '),
  });

function labelOf(p: MarketplaceView, field: string): string {
  const labels: Record<string, Parameters<MarketplaceView['m']>[0]> = {
    name: 'name',
    mode: 'mode',
    allowed_origins: 'origins',
    sso_redirect_uri: 'ssoRedirectUri',
    fee_schedule: 'feeSchedule',
    fee_moment: 'feeMoment',
    provider: 'provider',
    inspection_days: 'inspectionDays',
  };
  return labels[field] ? p.m(labels[field]) : field;
}

function overlapOf(form: URLSearchParams): Overlap {
  const asked = Number(form.get('overlap'));
  return OVERLAPS.find((seconds) => seconds === asked) ?? 86_400;
}

export function marketplaceConsolePages(api: Api, services: Services): void {
  const router = api.router;
  const { db, masterKey } = services;

  router.get(
    '/admin/view/marketplaces',
    consolePage(services, async (cp) => {
      const p = view(cp);
      const filter: ListFilter = {
        q: queryText(p.ctx.query, 'q', 200),
        mode: MODES.find((mode) => mode === p.ctx.query.mode) ?? '',
        state: STATES.find((state) => state === p.ctx.query.state) ?? '',
      };
      const place = pagePlace(p.ctx.query, isUuid);
      // A cursor that is no marketplace's shows the first page rather than an error page.
      const page = (await listMarketplaces(db, {
        q: filter.q || undefined,
        mode: filter.mode || undefined,
        active: filter.state ? filter.state === 'active' : undefined,
        limit: LIST_PAGE,
        startingAfter: place.after,
      })) ?? { items: [], has_more: false };
      const pages = pager(p.lang, {
        path: '/admin/view/marketplaces',
        filters: filter,
        place,
        last: page.has_more ? page.items.at(-1)!.id : undefined,
      });
      send(p, 200, p.m('listTitle'), listBody(p, filter, page, pages), undefined, p.admin);
    }),
  );

  router.get(
    '/admin/view/marketplaces/new',
    consolePage(services, async (cp) => {
      const p = view(cp);
      send(
        p,
        200,
        p.m('activateTitle'),
        activateBody(p, { name: '', mode: 'sandbox', allowed_origins: '', sso_redirect_uri: '' }),
        undefined,
        p.admin,
      );
    }),
  );

  router.post(
    '/admin/view/marketplaces',
    consoleAction(services, {
      page: view,
      path: () => '/admin/view/marketplaces',
      action: (p, _, form) => {
        const values = formFields(form);
        const parsed = CreateMarketplaceBody.safeParse(asBody(values));
        if (!parsed.success) {
          send(
            p,
            400,
            p.m('activateTitle'),
            activateBody(p, values, invalidWords(p, parsed.error)),
            '/admin/view/marketplaces/new',
            p.admin,
          );
          return ANSWERED;
        }
        return {
          once: true,
          run: async () => {
            const { marketplace, secretKey, publicKey, ssoClient } = await activateMarketplace(services, parsed.data);
            const answer = {
              ...marketplace,
              created_at: marketplace.created_at.toISOString(),
              secret_key: secretKey,
              public_key: publicKey,
              sso_client: ssoClient,
            };
            const keys: [string, string, string][] = [
              [p.m('secretKey'), 'secret-key', secretKey],
              [p.m('publicKey'), 'public-key', publicKey],
              ...(ssoClient
                ? [[p.m('ssoSecret'), 'sso-secret', ssoClient.client_secret] as [string, string, string]]
                : []),
            ];
            return {
              audit: {
                action: 'createMarketplace',
                object_type: 'marketplace',
                object_id: marketplace.id,
                after: answer,
              },
              reveal: shownOnce(p, p.m('activatedTitle', { name: marketplace.name }), keys, marketplace.id),
            };
          },
        };
      },
    }),
  );

  /** The card page's parts that do not depend on the action: the endpoint and a page of the webhook log. */
  async function cardState(
    p: MarketplaceView,
    card: MarketplaceCard,
    extra: Partial<CardState> = {},
  ): Promise<CardState> {
    const query = p.ctx.method === 'GET' ? p.ctx.query : {};
    const filter = {
      status: ATTEMPT_STATUSES.find((status) => status === query.status),
      event: LOGGED_EVENTS.find((event) => event === query.event),
      deal_id: isUuid(queryText(query, 'deal_id', 36)) ? queryText(query, 'deal_id', 36) : undefined,
    };
    const place = pagePlace(query, isUuid);
    // The deliveries not attempted yet are read before the log: one attempted in between is then in the log.
    const sending = await sendingDeliveries(card.id);
    // A cursor that is not an attempt of this marketplace shows nothing rather than an error page.
    const log = (await listAttempts(db, card.id, {
      limit: LOG_PAGE,
      startingAfter: place.after,
      status: filter.status,
      event: filter.event,
      dealId: filter.deal_id,
    })) ?? {
      items: [],
      has_more: false,
    };
    return {
      card,
      endpoint: await findWebhookEndpoint(db, masterKey, card.id),
      log,
      replaces: await replaced([...new Set(log.items.map((item) => item.delivery_id))]),
      sending: sending.filter((row) => !log.items.some((item) => item.delivery_id === row.delivery_id)),
      place,
      filter,
      events: LOGGED_EVENTS,
      ...extra,
    };
  }

  /** The same event's delivery before a delivery: the one a replay replaced. */
  const PREVIOUS = `LEFT JOIN LATERAL (
      SELECT prev.id, prev.status, prev.created_at FROM webhook_deliveries prev
       WHERE prev.event_id = d.event_id AND (prev.created_at, prev.id) < (d.created_at, d.id)
       ORDER BY prev.created_at DESC, prev.id DESC LIMIT 1) prev ON true`;
  type ReplayRow = {
    delivery_id: string;
    event: string;
    created_at: Date;
    prev_id: string | null;
    prev_status: string;
    prev_at: Date;
  };
  const replacedOf = (row: ReplayRow): Replaced | undefined =>
    row.prev_id ? { delivery_id: row.prev_id, status: row.prev_status, created_at: row.prev_at } : undefined;

  /** Which deliveries of the log's page replay an earlier one, by delivery id. */
  async function replaced(deliveryIds: string[]): Promise<Map<string, Replaced>> {
    const { rows } = await db.query<ReplayRow>(
      `SELECT d.id AS delivery_id, '' AS event, d.created_at, prev.id AS prev_id, prev.status AS prev_status, prev.created_at AS prev_at
         FROM webhook_deliveries d ${PREVIOUS} WHERE d.id = ANY($1::uuid[]) AND prev.id IS NOT NULL`,
      [deliveryIds],
    );
    return new Map(rows.map((row) => [row.delivery_id, replacedOf(row)!]));
  }

  /** Deliveries started in the last hour and not attempted yet: a replay shows at once after its redirect. */
  async function sendingDeliveries(marketplaceId: string): Promise<Sending[]> {
    const { rows } = await db.query<ReplayRow>(
      `SELECT d.id AS delivery_id, e.event, d.created_at, prev.id AS prev_id, prev.status AS prev_status, prev.created_at AS prev_at
         FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id ${PREVIOUS}
        WHERE e.marketplace_id = $1 AND d.status = 'pending' AND d.created_at > now() - interval '1 hour'
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id)
        ORDER BY d.created_at DESC LIMIT 20`,
      [marketplaceId],
    );
    return rows.map((row) => ({
      delivery_id: row.delivery_id,
      event: row.event,
      created_at: row.created_at,
      replaces: replacedOf(row),
    }));
  }

  const cardPath = (id: string) => `/admin/view/marketplaces/${id}`;
  const showCard = async (p: MarketplaceView, card: MarketplaceCard, status: number, extra: Partial<CardState> = {}) =>
    send(p, status, card.name, cardBody(p, await cardState(p, card, extra)), cardPath(card.id), p.admin);

  router.get(
    '/admin/view/marketplaces/:id',
    consolePage(services, async (cp) => {
      const p = view(cp);
      const card = await marketplaceCard(db, String(p.ctx.params.id));
      if (!card) throw notInConsole('marketplace');
      const done = DONE[p.ctx.query.done as keyof typeof DONE];
      const count = queryText(p.ctx.query, 'n', 6);
      const notice =
        p.ctx.query.done === 'replayed_since' && /^[0-9]{1,6}$/.test(count)
          ? p.m('replayedSince', { count })
          : done && p.m(done);
      await showCard(p, card, 200, { notice });
    }),
  );

  router.post(
    '/admin/view/marketplaces/:id',
    consoleActions(services, {
      page: view,
      load: async (p) => {
        const card = await marketplaceCard(db, String(p.ctx.params.id));
        if (!card) throw notInConsole('marketplace');
        return card;
      },
      path: (card) => cardPath(card.id),
      actions: (p, card, form) => cardActions(p, card, form),
    }),
  );

  /** The card's actions by the `intent` of its forms. */
  function cardActions(p: MarketplaceView, card: MarketplaceCard, form: URLSearchParams): Record<string, ActionEntry> {
    const id = card.id;
    const audit = (action: string, before: unknown, after: unknown): ConsoleAudit => ({
      action,
      object_type: 'marketplace',
      object_id: id,
      before,
      after,
    });
    const ask = (title: string, text: string, fields: Confirmation['fields']): Confirmation => ({
      title,
      text,
      button: p.m('confirmButton'),
      fields,
    });
    const overlapWords = (seconds: Overlap) => p.m(`overlap_${seconds}`);
    const answer = async (status: number, extra: Partial<CardState>): Promise<Answered> => {
      await showCard(p, card, status, extra);
      return ANSWERED;
    };
    const activation =
      (active: boolean): ActionEntry =>
      () => ({
        confirm: () =>
          active
            ? ask(p.m('reactivateConfirmTitle', { name: card.name }), p.m('reactivateConfirmText'), {
                intent: 'activate',
              })
            : ask(p.m('deactivateConfirmTitle', { name: card.name }), p.m('deactivateConfirmText'), {
                intent: 'deactivate',
              }),
        run: async () => {
          const changed = (await setMarketplaceActive(db, id, active))!;
          return {
            audit: audit(
              active ? 'reactivateMarketplace' : 'deactivateMarketplace',
              cardJson(changed.before),
              cardJson(changed.after),
            ),
            location: `${cardPath(id)}?done=${active ? 'reactivated' : 'deactivated'}`,
          };
        },
      });

    return {
      save: async () => {
        const values = cardFields(form, card);
        const parsed = MarketplaceChangesBody.safeParse(asChanges(values));
        if (!parsed.success) return answer(400, { values, error: invalidWords(p, parsed.error) });
        return {
          run: async () => {
            const changed = (await updateMarketplace(services, id, parsed.data))!;
            return {
              audit: audit('updateMarketplace', cardJson(changed.before), cardJson(changed.after)),
              location: `${cardPath(id)}?done=saved`,
            };
          },
        };
      },
      'rotate-secret-key': () => {
        const overlap = overlapOf(form);
        return {
          confirm: () =>
            ask(
              p.m('rotateSecretConfirmTitle', { name: card.name }),
              p.m('rotateSecretConfirmText', { overlap: overlapWords(overlap) }),
              { intent: 'rotate-secret-key', overlap: String(overlap) },
            ),
          once: true,
          run: async () => {
            const rotated = (await rotateSecretKey(db, id, overlap))!;
            const previous = rotated.previousExpiresAt?.toISOString() ?? null;
            const note =
              overlap > 0 && previous
                ? p.m('rotatedSecretText', { until: formatDate(p.lang, previous) })
                : p.m('rotatedSecretNow');
            const title = p.m('rotatedSecretTitle', { name: card.name });
            return {
              audit: audit('rotateMarketplaceSecretKey', cardJson(rotated.before), {
                secret_key: rotated.secretKey,
                previous_expires_at: previous,
              }),
              reveal: shownOnce(p, title, [[p.m('secretKey'), 'secret-key', rotated.secretKey]], id, note),
            };
          },
        };
      },
      'rotate-public-key': () => ({
        confirm: () =>
          ask(p.m('rotatePublicConfirmTitle', { name: card.name }), p.m('rotatePublicConfirmText'), {
            intent: 'rotate-public-key',
          }),
        once: true,
        run: async () => {
          const rotated = (await rotatePublicKey(db, id))!;
          const title = p.m('rotatedPublicTitle', { name: card.name });
          return {
            audit: audit('rotateMarketplacePublicKey', cardJson(rotated.before), { public_key: rotated.publicKey }),
            reveal: shownOnce(p, title, [[p.m('publicKey'), 'public-key', rotated.publicKey]], id),
          };
        },
      }),
      deactivate: activation(false),
      activate: activation(true),
      'reveal-webhook-secret': async () => {
        const endpoint = await findWebhookEndpoint(db, masterKey, id);
        if (!endpoint) throw noWebhookYet();
        return {
          // Post/redirect/get as new keys are: a reload of the answer neither shows the secret again nor audits twice.
          once: true,
          run: async () => {
            // Audited by revealWebhookSecret, as the JSON operation is.
            await revealWebhookSecret(db, p.admin.actor, id, endpoint);
            const title = p.m('revealedWebhookTitle', { name: card.name });
            const items: [string, string, string][] = [[p.m('secret'), 'webhook-secret', endpoint.secret]];
            return { reveal: { ...shownOnce(p, title, items, id, p.m('revealedNote')), warning: p.m('revealedOnce') } };
          },
        };
      },
      'rotate-webhook-secret': async () => {
        const overlap = overlapOf(form);
        const before = await findWebhookEndpoint(db, masterKey, id);
        if (!before) throw noWebhookYet();
        return {
          confirm: () =>
            ask(
              p.m('rotateWebhookConfirmTitle', { name: card.name }),
              p.m('rotateWebhookConfirmText', { overlap: overlapWords(overlap) }),
              { intent: 'rotate-webhook-secret', overlap: String(overlap) },
            ),
          once: true,
          run: async () => {
            const endpoint = (await rotateWebhookSecret(db, masterKey, id, overlap))!;
            const previous = endpoint.previous_expires_at?.toISOString() ?? null;
            const title = p.m('rotatedWebhookTitle', { name: card.name });
            return {
              audit: audit(
                'rotateMarketplaceWebhookSecret',
                { url: before.url, previous_expires_at: before.previous_expires_at?.toISOString() ?? null },
                { secret: endpoint.secret, previous_expires_at: previous },
              ),
              reveal: shownOnce(p, title, [[p.m('secret'), 'webhook-secret', endpoint.secret]], id),
            };
          },
        };
      },
      'save-webhook': async () => {
        const url = formText(form, 'webhook_url', 2100);
        const chosen = form.getAll('webhook_events');
        const events = WEBHOOK_EVENTS.filter((event) => chosen.includes(event));
        const webhook = { url, events: form.get('webhook_all') === 'yes' || events.length === 0 ? [] : events };
        const refuse = (error: string) => answer(400, { webhook, error });
        if (url.length > 2048 || !WEBHOOK_URL.test(url)) return refuse(p.m('webhookUrlInvalid'));
        try {
          await checkWebhookUrl(card, url, { allowLoopback: services.config.WEBHOOK_ALLOW_LOOPBACK });
        } catch (error) {
          if (!(error instanceof Problem)) throw error;
          return refuse(
            error.code === 'webhook_url_not_allowed' ? p.m('webhookUrlNotAllowed') : p.m('webhookUrlNeedsHttps'),
          );
        }
        const before = await findWebhookEndpoint(db, masterKey, id);
        const wanted = webhook.events.length > 0 ? webhook.events : undefined;
        return {
          // Only a change of an endpoint asks first: the first one replaces nothing.
          confirm: () =>
            before &&
            ask(
              p.m('replaceWebhookConfirmTitle', { name: card.name }),
              p.m('replaceWebhookConfirmText', {
                old: before.url,
                url,
                events: wanted ? wanted.join(', ') : p.m('allEvents'),
              }),
              { intent: 'save-webhook', webhook_url: url, webhook_events: webhook.events },
            ),
          run: async () => {
            const after = await saveWebhookEndpoint(db, masterKey, id, url, wanted);
            return {
              audit: audit('registerWebhook', before ? { url: before.url, events: before.events } : null, {
                url: after.url,
                events: after.events,
              }),
              location: `${cardPath(id)}?done=${before ? 'webhook_changed' : 'webhook_registered'}#webhook`,
            };
          },
        };
      },
      'test-webhook': async () => {
        if (!(await findWebhookEndpoint(db, masterKey, id))) throw noWebhookYet();
        return {
          once: true,
          run: async () => {
            const started = await sendTestEvent(services, id);
            return { audit: audit('sendWebhookTest', null, started), location: `${cardPath(id)}?done=test_sent#log` };
          },
        };
      },
      replay: async () => {
        const attemptId = formText(form, 'attempt_id', 36);
        const found = isUuid(attemptId) ? await eventOfDeliveryOrAttempt(db, attemptId) : undefined;
        if (!found) throw problem('not_found', 'No such webhook delivery or attempt.');
        return {
          once: true,
          run: async () => {
            const started = await startDelivery(services, found.event_id);
            return {
              audit: { action: 'replayWebhook', object_type: 'webhook_delivery', object_id: attemptId, after: started },
              location: `${cardPath(id)}?done=replayed#log`,
            };
          },
        };
      },
      'replay-since': () => {
        const raw = formText(form, 'since', 40);
        const since = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(raw) ? new Date(`${raw}Z`) : undefined;
        if (!since || Number.isNaN(since.getTime()))
          throw problem('validation_failed', 'A date and time to replay from.');
        const shown = since.toISOString().slice(0, 19).replace('T', ' ');
        return {
          confirm: async () => {
            const count = (await failedEventsSince(db, id, since)).length;
            if (count === 0) return answer(200, { notice: p.m('replaySinceNothing', { since: shown }) });
            return ask(
              p.m('replaySinceConfirmTitle', { name: card.name }),
              p.m('replaySinceConfirmText', { count, since: shown }),
              { intent: 'replay-since', since: raw },
            );
          },
          run: async () => {
            const replayed = await replayFailedSince(services, id, since);
            return {
              audit: audit('replayFailedWebhooks', null, { since: since.toISOString(), status: 'failed', replayed }),
              location: `${cardPath(id)}?done=replayed_since&n=${replayed}#log`,
            };
          },
        };
      },
    };
  }
}
