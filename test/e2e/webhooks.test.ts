// Webhooks end to end: registration over HTTP, events stored once, delivery by a real worker's outbox drainer
// (src/webhooks/outbox.ts) to a local receiver, signatures checked by independent code, retries, Retry-After, 410, the
// admin log and replay. A delivery written for the worker's task queue goes out at its commit; a test waits for the
// delivery's status or the log. WEBHOOK_RETRY_BASE_SECONDS=1 keeps the retries quick; a test that acts between two
// attempts has the receiver ask for a second of Retry-After.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createAdminToken } from '../../src/admin/auth.ts';
import { parseConfig } from '../../src/config.ts';
import { listen, type RunningServer } from '../../src/http/server.ts';
import { createLogger } from '../../src/log.ts';
import { createMainApp } from '../../src/main-app.ts';
import { decryptSecret } from '../../src/secrets.ts';
import { createServices, type Services } from '../../src/services.ts';
import { startWorker, type RunningWorker } from '../../src/worker.ts';
import { insertWebhookEvent, type WebhookEventInput } from '../../src/webhooks/events.ts';
import { createWebhookActivities } from '../../activities/webhooks/delivery.ts';
import { json, post, testConfig, UUID_PATTERN } from '../helpers.ts';
import { insertApprovedDeal, insertMarketplace } from '../factories.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';

const logLines: string[] = [];
let services: Services;
let server: RunningServer;
let worker: RunningWorker;
let adminToken: string;
const receivers: Receiver[] = [];
const secretsSeen: string[] = [];

beforeAll(async () => {
  const config = testConfig({ WEBHOOK_RETRY_BASE_SECONDS: '1' });
  // Everything the server and the worker log, at debug level, to prove no secret reaches a log line.
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  services = createServices(config, createLogger('debug', sink));
  server = await listen(createMainApp(services), '127.0.0.1', 0);
  adminToken = await createAdminToken(services.db, 'webhook tests');
  worker = await startWorker(services);
});

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  await Promise.all(receivers.map((receiver) => receiver.stop()));
  await services?.close();
});

const admin = () => ({ Authorization: `Bearer ${adminToken}` });

function register(key: string, url: unknown): Promise<Response> {
  return post(`${server.url}/api/mkt/webhook`, { url }, { 'X-Svc-Key': key });
}

async function registered(key: string, url: string): Promise<string> {
  const response = await register(key, url);
  expect(response.status).toBe(200);
  const { secret } = await json(response);
  secretsSeen.push(secret);
  return secret;
}

async function receiver(script: Parameters<typeof startReceiver>[0] = []): Promise<Receiver> {
  const started = await startReceiver(script);
  receivers.push(started);
  return started;
}

type DealFields = WebhookEventInput['deal'];

/**
 * A deal row (or the given deal's) and one event of it, as the deal workflow's persistence activity makes them, for the
 * worker's task queue: its drainer sends the delivery from the commit on.
 */
async function makeEvent(
  marketplaceId: string,
  event = 'deal.approved',
  of?: DealFields,
): Promise<WebhookEventInput & { result: string | null }> {
  // A title that JSON escapes, and an amount with a fraction: the body's bytes must survive both.
  const deal =
    of ??
    (await insertApprovedDeal(services.db, marketplaceId, { title: 'Pallet of "bricks" — 500 шт', amount: 1234.5 }));
  const input = {
    eventId: randomUUID(),
    deliveryId: randomUUID(),
    taskQueue: services.config.TEMPORAL_TASK_QUEUE,
    event,
    occurredAt: new Date().toISOString(),
    status: 'approved',
    deal,
  };
  return { ...input, result: await insertWebhookEvent(services.db, input) };
}

async function log(marketplaceId: string, query = ''): Promise<any[]> {
  const response = await fetch(`${server.url}/admin/marketplaces/${marketplaceId}/webhook-deliveries${query}`, {
    headers: admin(),
  });
  expect(response.status).toBe(200);
  return (await json(response)).items;
}

async function deliveryStatus(deliveryId: string): Promise<string> {
  return (await services.db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [deliveryId])).rows[0]?.status;
}

/** Waits until the outbox has settled the delivery (delivered, failed or skipped) and answers how. */
async function settled(deliveryId: string): Promise<string> {
  let status = '';
  await expect
    .poll(async () => (status = await deliveryStatus(deliveryId)), { timeout: 20_000 })
    .toMatch(/^(delivered|failed|skipped)$/);
  return status;
}

/** What the outbox holds of the delivery: when it sends it next (null once settled), its attempts, its claim. */
async function outboxRow(deliveryId: string) {
  const found = await services.db.query(
    'SELECT status, due_at, attempts, claimed_until, task_queue, deal_id FROM webhook_deliveries WHERE id = $1',
    [deliveryId],
  );
  return found.rows[0];
}

/** Every deal.<status>, in the order the registration lists them. */
const ALL_EVENTS = [
  'deal.created',
  'deal.docs',
  'deal.approval',
  'deal.approved',
  'deal.rejected',
  'deal.escrow_hold',
  'deal.paid',
  'deal.refunded',
  'deal.disputed',
  'deal.cancelled',
  'deal.shipped',
  'deal.delivered',
  'deal.payout_sent',
  'deal.payout_failed',
  'deal.partially_refunded',
];

const newSecretNobodyHas = () => `whsec_${randomBytes(32).toString('base64')}`;

const hexSignature = (secret: string, body: Buffer) => createHmac('sha256', secret).update(body).digest('hex');

const standardHeaders = (headers: Record<string, unknown>) => ({
  'webhook-id': String(headers['webhook-id']),
  'webhook-timestamp': String(headers['webhook-timestamp']),
  'webhook-signature': String(headers['webhook-signature']),
});

describe('POST and GET /api/mkt/webhook', () => {
  it('refuses requests without a valid X-Svc-Key with 401', async () => {
    expect((await post(`${server.url}/api/mkt/webhook`, { url: 'http://127.0.0.1/x' })).status).toBe(401);
    expect((await register('mk_nope', 'http://127.0.0.1/x')).status).toBe(401);
    const read = await fetch(`${server.url}/api/mkt/webhook`);
    expect(read.status).toBe(401);
    expect((await json(read)).code).toBe('unauthorized');
  });

  it('answers 404 before registration, then registers a sandbox http receiver with a whsec_ secret', async () => {
    const shop = await insertMarketplace(services);
    const before = await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } });
    expect(before.status).toBe(404);
    expect(await json(before)).toMatchObject({ code: 'not_found' });

    const response = await register(shop.secret_key, 'http://127.0.0.1:9/hook');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toEqual({
      ok: true,
      url: 'http://127.0.0.1:9/hook',
      events: ALL_EVENTS,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(body.secret.slice(6), 'base64')).toHaveLength(32);
    secretsSeen.push(body.secret);

    const read = await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } });
    expect(read.status).toBe(200);
    const registration = await json(read);
    expect(registration).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      events: ALL_EVENTS,
      previous_expires_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(JSON.stringify(registration)).not.toContain(body.secret);

    // At rest the secret is encrypted with the master key, not stored as given.
    const stored = (
      await services.db.query('SELECT secret_encrypted FROM webhook_endpoints WHERE marketplace_id = $1', [shop.id])
    ).rows[0];
    expect(stored.secret_encrypted).not.toContain(body.secret.slice(6));
    expect(decryptSecret(services.masterKey, stored.secret_encrypted)).toBe(body.secret);
  });

  it('keeps the secret when the URL changes', async () => {
    const shop = await insertMarketplace(services);
    const first = await registered(shop.secret_key, 'http://127.0.0.1:9/one');
    const second = await json(await register(shop.secret_key, 'http://localhost:9/two'));
    expect(second).toEqual({ ok: true, url: 'http://localhost:9/two', events: ALL_EVENTS, secret: first });
    const read = await json(
      await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } }),
    );
    expect(read.url).toBe('http://localhost:9/two');
  });

  it.each([
    undefined,
    '',
    'not a url',
    '/relative/path',
    'ftp://127.0.0.1/x',
    'javascript:alert(1)',
    'http://user:pw@127.0.0.1/x',
    42,
  ])('refuses url %j with 400 validation_failed and changes nothing', async (url) => {
    const shop = await insertMarketplace(services);
    await registered(shop.secret_key, 'http://127.0.0.1:9/kept');
    const response = await register(shop.secret_key, url);
    expect(response.status).toBe(400);
    const problem = await json(response);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain('url');
    const read = await json(
      await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } }),
    );
    expect(read.url).toBe('http://127.0.0.1:9/kept');
  });

  it('requires https for live marketplaces', async () => {
    const shop = await insertMarketplace(services, { mode: 'live' });
    const response = await register(shop.secret_key, 'http://8.8.8.8/hook');
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ code: 'validation_failed', errors: [{ path: 'url' }] });
    expect((await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } })).status).toBe(
      404,
    );
  });

  it.each([
    'https://10.0.0.1/x',
    'https://192.168.1.10/x',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/x',
    'https://0.0.0.0/x',
    'https://224.0.0.1/x',
    'https://[::]/x',
    'https://[fd00::1]/x',
    'https://[fe80::1]/x',
    'https://[::ffff:10.0.0.1]/x',
    'https://[64:ff9b::808:808]/x', // NAT64, well-known prefix
    'https://[64:ff9b:1::808:808]/x', // NAT64, local-use prefix
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x', // Teredo
  ])(
    'refuses %s for sandbox and live marketplaces as webhook_url_not_allowed (SSRF) and changes nothing',
    async (url) => {
      // The tests allow the loopback (WEBHOOK_ALLOW_LOOPBACK=true): every other special-use address stays refused.
      for (const mode of ['sandbox', 'live'] as const) {
        const shop = await insertMarketplace(services, { mode: mode });
        await registered(shop.secret_key, 'https://8.8.8.8/kept'); // a public address: accepted
        const response = await register(shop.secret_key, url);
        expect(response.status, mode).toBe(400);
        expect(await json(response)).toMatchObject({
          code: 'webhook_url_not_allowed',
          detail: expect.stringContaining('must reach a public or loopback address:'),
        });
        const read = await json(
          await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } }),
        );
        expect(read.url).toBe('https://8.8.8.8/kept');
      }
    },
  );
});

describe('webhook URLs with the default WEBHOOK_ALLOW_LOOPBACK (false)', () => {
  let strictServices: Services;
  let strictServer: RunningServer;
  beforeAll(async () => {
    expect(parseConfig({}).WEBHOOK_ALLOW_LOOPBACK).toBe(false);
    // '' is unset, so the service's own default applies rather than the tests' 'true'.
    strictServices = createServices(testConfig({ WEBHOOK_ALLOW_LOOPBACK: '' }), createLogger('silent'));
    strictServer = await listen(createMainApp(strictServices), '127.0.0.1', 0);
  });
  afterAll(async () => {
    await strictServer?.stop();
    await strictServices?.close();
  });

  it.each([
    'http://127.0.0.1:9/hook',
    'http://127.1.2.3/hook',
    'http://[::1]:9/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://localhost:9/hook',
    'http://api.localhost/hook',
  ])('refuses the loopback %s for every marketplace, sandbox included', async (url) => {
    for (const mode of ['sandbox', 'live'] as const) {
      const created = await insertMarketplace(strictServices, { mode });
      const target = mode === 'live' ? url.replace('http:', 'https:') : url;
      const response = await post(
        `${strictServer.url}/api/mkt/webhook`,
        { url: target },
        { 'X-Svc-Key': created.secret_key },
      );
      expect(response.status, mode).toBe(400);
      expect(await json(response)).toMatchObject({
        code: 'webhook_url_not_allowed',
        detail: expect.stringContaining('must reach a public address:'),
      });
      expect(
        (await fetch(`${strictServer.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': created.secret_key } })).status,
      ).toBe(404);
    }
  });

  it.each(['http://2130706433/hook', 'http://0x7f.1/hook', 'http://LOCALHOST/hook'])(
    'refuses %s, a host not written as the document says (lower-case name or dotted IPv4), before any lookup',
    async (url) => {
      const created = await insertMarketplace(strictServices);
      const response = await post(`${strictServer.url}/api/mkt/webhook`, { url }, { 'X-Svc-Key': created.secret_key });
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({ code: 'validation_failed', errors: [{ path: 'url' }] });
    },
  );
});

describe('insertWebhookEvent', () => {
  it('stores the body once and makes a delivery only when an endpoint exists; repeats change nothing', async () => {
    const quiet = await insertMarketplace(services);
    const lonely = await makeEvent(quiet.id);
    expect(lonely.result).toBeNull();
    const kept = await services.db.query('SELECT event FROM webhook_events WHERE id = $1', [lonely.eventId]);
    expect(kept.rows).toEqual([{ event: 'deal.approved' }]);
    expect(
      (await services.db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [lonely.eventId])).rowCount,
    ).toBe(0);

    const shop = await insertMarketplace(services);
    await registered(shop.secret_key, 'http://127.0.0.1:9/hook');
    const made = await makeEvent(shop.id, 'deal.paid');
    expect(made.result).toBe(made.deliveryId);
    // For the outbox: the drainers of the writer's task queue send it, after the deal's earlier events.
    expect(await outboxRow(made.deliveryId)).toMatchObject({
      task_queue: services.config.TEMPORAL_TASK_QUEUE,
      deal_id: made.deal.id,
    });
    const again = await insertWebhookEvent(services.db, { ...made, title: 'changed' } as WebhookEventInput);
    expect(again).toBe(made.deliveryId);
    const rows = await services.db.query(
      'SELECT e.body FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.id = $1',
      [made.eventId],
    );
    expect(rows.rowCount).toBe(1);
    expect(Object.keys(JSON.parse(rows.rows[0].body.toString('utf8')))).toEqual([
      'event',
      'id',
      'external_id',
      'title',
      'amount',
      'currency',
      'status',
      'buyer_email',
      'seller_email',
      'event_id',
      'occurred_at',
    ]);
  });
});

describe('delivery', () => {
  it('signs the exact bytes so that Standard Webhooks and a plain HMAC both verify them', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver();
    const secret = await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id);
    expect(await settled(made.deliveryId)).toBe('delivered');

    expect(hook.received).toHaveLength(1);
    const [request] = hook.received;
    expect(request.path).toBe('/hooks/svc');
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': expect.stringMatching(/\S/),
      'x-svc-event': 'deal.approved',
      'x-svc-delivery': made.deliveryId,
      'webhook-id': made.eventId,
      'x-svc-signature': hexSignature(secret, request.body),
    });
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const payload = new Webhook(secret).verify(request.body.toString('utf8'), standardHeaders(request.headers));
    expect(payload).toEqual({
      event: 'deal.approved',
      id: made.deal.id,
      external_id: made.deal.external_id,
      title: made.deal.title,
      amount: 1234.5,
      currency: 'RUB',
      status: 'approved',
      buyer_email: made.deal.buyer_email,
      seller_email: made.deal.seller_email,
      event_id: made.eventId,
      occurred_at: made.occurredAt,
    });
    // The check is real: one changed byte fails both schemes.
    const tampered = Buffer.from(request.body.toString('utf8').replace('1234.5', '1234.6'));
    expect(() => new Webhook(secret).verify(tampered.toString('utf8'), standardHeaders(request.headers))).toThrow();
    expect(hexSignature(secret, tampered)).not.toBe(request.headers['x-svc-signature']);

    expect(await deliveryStatus(made.deliveryId)).toBe('delivered');
    const [attempt] = await log(shop.id);
    expect(attempt).toMatchObject({
      delivery_id: made.deliveryId,
      event: 'deal.approved',
      deal_id: made.deal.id,
      attempt: 1,
      status: 'delivered',
      http_status: 200,
      error: null,
    });
  });

  it('retries failures (3xx included) with the same body, signature and delivery id, and logs each attempt', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver([{ status: 500 }, { status: 302, headers: { Location: 'http://127.0.0.1:9/' } }]);
    await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id, 'deal.escrow_hold');
    expect(await settled(made.deliveryId)).toBe('delivered');

    expect(hook.received).toHaveLength(3);
    for (const request of hook.received) {
      expect(request.body.equals(hook.received[0].body)).toBe(true);
      expect(request.headers['x-svc-signature']).toBe(hook.received[0].headers['x-svc-signature']);
      expect(request.headers['x-svc-delivery']).toBe(made.deliveryId);
      expect(request.headers['webhook-id']).toBe(made.eventId);
    }
    // Exponential from WEBHOOK_RETRY_BASE_SECONDS=1 with ±20% jitter: about 1 s, then about 2 s.
    const gaps = [hook.received[1].at - hook.received[0].at, hook.received[2].at - hook.received[1].at];
    expect(gaps[0]).toBeGreaterThanOrEqual(750);
    expect(gaps[1]).toBeGreaterThanOrEqual(1550);

    const attempts = (await log(shop.id)).reverse();
    expect(attempts.map((a) => [a.attempt, a.status, a.http_status])).toEqual([
      [1, 'retrying', 500],
      [2, 'retrying', 302],
      [3, 'delivered', 200],
    ]);
    expect(attempts[0].error).toBe('HTTP 500');
    expect(attempts.every((a) => Number.isInteger(a.duration_ms) && a.duration_ms >= 0)).toBe(true);
    expect(await deliveryStatus(made.deliveryId)).toBe('delivered');
  });

  it('waits as long as a 503 Retry-After asks', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver([{ status: 503, headers: { 'Retry-After': '2' } }]);
    await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id);
    expect(await settled(made.deliveryId)).toBe('delivered');
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1].at - hook.received[0].at).toBeGreaterThanOrEqual(1900);
    expect((await log(shop.id)).map((a) => a.status)).toEqual(['delivered', 'retrying']);
  });

  it("stops at once on 410 Gone and marks the delivery failed; the deal's next event goes out after it", async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver([{ status: 410 }]);
    await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id, 'deal.refunded');
    expect(await settled(made.deliveryId)).toBe('failed');
    expect(await outboxRow(made.deliveryId)).toMatchObject({ due_at: null, attempts: 1, claimed_until: null });
    // A delivery still to send holds its deal's later events back, and a retry of it would go before them: the next
    // event arriving alone shows the 410 one is done with.
    const next = await makeEvent(shop.id, 'deal.cancelled', made.deal);
    expect(await settled(next.deliveryId)).toBe('delivered');
    expect(hook.received.map((request) => request.headers['x-svc-delivery'])).toEqual([
      made.deliveryId,
      next.deliveryId,
    ]);
    expect(await deliveryStatus(made.deliveryId)).toBe('failed');
    expect((await log(shop.id)).filter((attempt) => attempt.delivery_id === made.deliveryId)).toMatchObject([
      { attempt: 1, status: 'failed', http_status: 410, error: 'HTTP 410' },
    ]);
  });

  it('sends retries to the URL registered now, signed with the same secret', async () => {
    const shop = await insertMarketplace(services);
    const old = await receiver([{ status: 500 }]);
    const moved = await receiver();
    const secret = await registered(shop.secret_key, old.url);
    const made = await makeEvent(shop.id);
    await expect.poll(() => old.received.length, { timeout: 10_000 }).toBe(1);
    await registered(shop.secret_key, moved.url);
    expect(await settled(made.deliveryId)).toBe('delivered');
    expect(moved.received).toHaveLength(1);
    expect(old.received).toHaveLength(1);
    expect(moved.received[0].headers['x-svc-signature']).toBe(hexSignature(secret, moved.received[0].body));
  });

  it('marks the delivery and its last attempt failed when a run from before the outbox gives up, and sends it no more', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver([{ status: 503, headers: { 'Retry-After': '3600' } }]);
    await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id);
    await expect.poll(async () => (await log(shop.id)).length, { timeout: 10_000 }).toBe(1);
    // The receiver's hour is kept: the next attempt is due then.
    const waiting = await outboxRow(made.deliveryId);
    expect(waiting).toMatchObject({ status: 'retrying', attempts: 1, claimed_until: null });
    expect(waiting.due_at.getTime() - Date.now()).toBeGreaterThan(3500_000);
    // Such a run's 4-day schedule ended (workflows/webhooks/webhook-options.ts): it marks the delivery failed.
    await createWebhookActivities(services).markWebhookDeliveryFailed(made.deliveryId);
    expect(await outboxRow(made.deliveryId)).toMatchObject({ status: 'failed', due_at: null });
    expect(await log(shop.id)).toMatchObject([{ attempt: 1, status: 'failed', http_status: 503 }]);
    // Due now, it would be sent at once; as it is failed, the deal's next event goes out and nothing else.
    await services.db.query('UPDATE webhook_deliveries SET due_at = now() WHERE id = $1', [made.deliveryId]);
    const next = await makeEvent(shop.id, 'deal.cancelled', made.deal);
    expect(await settled(next.deliveryId)).toBe('delivered');
    expect(hook.received.map((request) => request.headers['x-svc-delivery'])).toEqual([
      made.deliveryId,
      next.deliveryId,
    ]);
  });

  it('checks the address again at delivery, for sandbox marketplaces too, and never connects to a private one', async () => {
    const shop = await insertMarketplace(services);
    await registered(shop.secret_key, 'https://8.8.8.8/hook');
    // As if the name now resolved to the cloud metadata service (DNS rebinding): the stored URL points at it.
    await services.db.query('UPDATE webhook_endpoints SET url = $2 WHERE marketplace_id = $1', [
      shop.id,
      'http://169.254.169.254/latest/meta-data/',
    ]);
    const made = await makeEvent(shop.id);
    await expect.poll(async () => (await log(shop.id)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(await deliveryStatus(made.deliveryId)).toBe('retrying');
    const [attempt] = (await log(shop.id)).reverse();
    expect(attempt).toMatchObject({
      attempt: 1,
      status: 'retrying',
      http_status: null,
      error: 'address not allowed: 169.254.169.254 is not a public or loopback address',
    });
  });
});

describe('the events a webhook is sent', () => {
  const read = async (key: string) =>
    json(await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': key } }));

  it('stores the chosen types (repeats once, in the list order), shows them, and takes all again without events', async () => {
    const shop = await insertMarketplace(services);
    const chosen = await post(
      `${server.url}/api/mkt/webhook`,
      { url: 'http://127.0.0.1:9/hook', events: ['deal.paid', 'deal.escrow_hold', 'deal.paid'] },
      { 'X-Svc-Key': shop.secret_key },
    );
    expect(chosen.status).toBe(200);
    const body = await json(chosen);
    secretsSeen.push(body.secret);
    expect(body.events).toEqual(['deal.escrow_hold', 'deal.paid']);
    expect((await read(shop.secret_key)).events).toEqual(['deal.escrow_hold', 'deal.paid']);

    const again = await json(await register(shop.secret_key, 'http://127.0.0.1:9/hook'));
    expect(again).toMatchObject({ events: ALL_EVENTS, secret: body.secret });
    expect((await read(shop.secret_key)).events).toEqual(ALL_EVENTS);
  });

  it.each([[[]], [['deal.unknown']], [['webhook.test']], ['deal.paid'], [[null]]])(
    'refuses events %j with 400 validation_failed and changes nothing',
    async (events) => {
      const shop = await insertMarketplace(services);
      await registered(shop.secret_key, 'http://127.0.0.1:9/kept');
      const response = await post(
        `${server.url}/api/mkt/webhook`,
        { url: 'http://127.0.0.1:9/other', events },
        { 'X-Svc-Key': shop.secret_key },
      );
      expect(response.status).toBe(400);
      const problem = await json(response);
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors.every((error: { path: string }) => error.path.startsWith('events'))).toBe(true);
      expect(await read(shop.secret_key)).toMatchObject({ url: 'http://127.0.0.1:9/kept', events: ALL_EVENTS });
    },
  );

  it('stores every event but makes deliveries only of the chosen types', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver();
    const chosen = await post(
      `${server.url}/api/mkt/webhook`,
      { url: hook.url, events: ['deal.paid'] },
      { 'X-Svc-Key': shop.secret_key },
    );
    secretsSeen.push((await json(chosen)).secret);

    const skipped = await makeEvent(shop.id, 'deal.approved');
    expect(skipped.result).toBeNull();
    expect(
      (await services.db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [skipped.eventId])).rowCount,
    ).toBe(0);
    expect((await services.db.query('SELECT event FROM webhook_events WHERE id = $1', [skipped.eventId])).rows).toEqual(
      [{ event: 'deal.approved' }],
    );
    // A repeat of the unsent event stays unsent.
    expect(await insertWebhookEvent(services.db, skipped)).toBeNull();

    const sent = await makeEvent(shop.id, 'deal.paid');
    expect(sent.result).toBe(sent.deliveryId);
    expect(await settled(sent.deliveryId)).toBe('delivered');
    expect(hook.received.map((request) => request.headers['x-svc-event'])).toEqual(['deal.paid']);

    // Choosing again applies to events from then on.
    await registered(shop.secret_key, hook.url);
    expect((await makeEvent(shop.id, 'deal.approved')).result).not.toBeNull();
  });
});

describe('DELETE /api/mkt/webhook', () => {
  const unregister = (key: string) =>
    fetch(`${server.url}/api/mkt/webhook`, { method: 'DELETE', headers: { 'X-Svc-Key': key } });

  it('refuses requests without a valid X-Svc-Key with 401 and keeps the webhook', async () => {
    const shop = await insertMarketplace(services);
    await registered(shop.secret_key, 'http://127.0.0.1:9/kept');
    expect((await fetch(`${server.url}/api/mkt/webhook`, { method: 'DELETE' })).status).toBe(401);
    expect((await unregister('mk_nope')).status).toBe(401);
    expect((await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } })).status).toBe(
      200,
    );
  });

  it('unregisters (204, also when repeated): no delivery for later events, which are still stored; a new registration makes a new secret', async () => {
    const shop = await insertMarketplace(services);
    const other = await insertMarketplace(services);
    const first = await registered(shop.secret_key, 'http://127.0.0.1:9/hook');
    await registered(other.secret_key, 'http://127.0.0.1:9/hook');

    const response = await unregister(shop.secret_key);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect((await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } })).status).toBe(
      404,
    );
    expect((await unregister(shop.secret_key)).status).toBe(204);
    // Another marketplace's webhook is not touched.
    expect((await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': other.secret_key } })).status).toBe(
      200,
    );

    const later = await makeEvent(shop.id, 'deal.paid');
    expect(later.result).toBeNull();
    expect((await services.db.query('SELECT 1 FROM webhook_events WHERE id = $1', [later.eventId])).rowCount).toBe(1);

    const again = await registered(shop.secret_key, 'http://127.0.0.1:9/hook');
    expect(again).not.toBe(first);
  });

  it('stops a delivery that is still being retried: no further attempt, the delivery is skipped', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver([{ status: 503, headers: { 'Retry-After': '1' } }]);
    await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id, 'deal.escrow_hold');
    await expect.poll(() => hook.received.length, { timeout: 10_000 }).toBe(1);
    expect((await unregister(shop.secret_key)).status).toBe(204);
    expect(await deliveryStatus(made.deliveryId)).toBe('skipped');
    // Registered again before the retry is due: the old delivery still goes nowhere. (Its attempt may be recorded
    // after the removal: it stays skipped, with nothing due.)
    await registered(shop.secret_key, hook.url);
    await expect.poll(async () => (await log(shop.id)).length, { timeout: 10_000 }).toBe(1);
    expect(await outboxRow(made.deliveryId)).toMatchObject({ status: 'skipped', due_at: null, claimed_until: null });
    // The deal's next event goes out, and alone: a retry of the skipped one would have gone first, and while it was
    // still to send it would have held this one back.
    const next = await makeEvent(shop.id, 'deal.paid', made.deal);
    expect(await settled(next.deliveryId)).toBe('delivered');
    expect(hook.received.map((request) => request.headers['x-svc-delivery'])).toEqual([
      made.deliveryId,
      next.deliveryId,
    ]);
    expect(await deliveryStatus(made.deliveryId)).toBe('skipped');
    expect((await log(shop.id)).reverse()).toMatchObject([
      { delivery_id: made.deliveryId, attempt: 1, status: 'retrying', http_status: 503 },
      { delivery_id: next.deliveryId, attempt: 1, status: 'delivered', http_status: 200 },
    ]);
  });
});

describe('POST /api/mkt/webhook/rotate-secret', () => {
  const rotate = (key: string, body: unknown = {}) =>
    post(`${server.url}/api/mkt/webhook/rotate-secret`, body, { 'X-Svc-Key': key });

  async function rotated(key: string, body: unknown = {}): Promise<{ secret: string; previous_expires_at: string }> {
    const response = await rotate(key, body);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const answer = await json(response);
    secretsSeen.push(answer.secret);
    return answer;
  }

  /** Delivers one new event of the marketplace and answers the request the receiver got. */
  async function deliverOne(shopId: string, hook: Receiver) {
    const made = await makeEvent(shopId);
    expect(await settled(made.deliveryId)).toBe('delivered');
    const [request] = hook.received.filter((received) => received.headers['x-svc-delivery'] === made.deliveryId);
    return request;
  }

  const verifies = (secret: string, request: { body: Buffer; headers: Record<string, unknown> }) => {
    try {
      new Webhook(secret).verify(request.body.toString('utf8'), standardHeaders(request.headers));
      return true;
    } catch {
      return false;
    }
  };

  it('answers 401 without a valid key and 404 before a webhook is registered', async () => {
    expect((await post(`${server.url}/api/mkt/webhook/rotate-secret`, {})).status).toBe(401);
    const shop = await insertMarketplace(services);
    const response = await rotate(shop.secret_key);
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe('not_found');
  });

  it.each([-1, 604_801, 1.5, '60', null])(
    'refuses expire_previous_after_seconds %j with 400 validation_failed and keeps the secret',
    async (value) => {
      const shop = await insertMarketplace(services);
      const secret = await registered(shop.secret_key, 'http://127.0.0.1:9/hook');
      const response = await rotate(shop.secret_key, { expire_previous_after_seconds: value });
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'expire_previous_after_seconds' }],
      });
      expect((await json(await register(shop.secret_key, 'http://127.0.0.1:9/hook'))).secret).toBe(secret);
    },
  );

  it('signs with both secrets during the overlap and with the new one only after it', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver();
    const old = await registered(shop.secret_key, hook.url);

    const before = Date.now();
    const answer = await rotated(shop.secret_key, { expire_previous_after_seconds: 600 });
    expect(answer.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(answer.secret).not.toBe(old);
    expect(Date.parse(answer.previous_expires_at) - before).toBeGreaterThan(590_000);
    expect(Date.parse(answer.previous_expires_at) - before).toBeLessThan(610_000);
    // The registration keeps the new secret and tells the overlap.
    expect((await json(await register(shop.secret_key, hook.url))).secret).toBe(answer.secret);
    const reading = await json(
      await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': shop.secret_key } }),
    );
    expect(reading.previous_expires_at).toBe(answer.previous_expires_at);

    // At rest both are encrypted with the master key.
    const stored = (
      await services.db.query(
        'SELECT secret_encrypted, previous_secret_encrypted FROM webhook_endpoints WHERE marketplace_id = $1',
        [shop.id],
      )
    ).rows[0];
    expect(stored.previous_secret_encrypted).not.toContain(old.slice(6));
    expect(decryptSecret(services.masterKey, stored.previous_secret_encrypted)).toBe(old);
    expect(decryptSecret(services.masterKey, stored.secret_encrypted)).toBe(answer.secret);

    const during = await deliverOne(shop.id, hook);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(String(during.headers['webhook-signature'])).toMatch(/^v1,\S+ v1,\S+$/);
    expect(during.headers['x-svc-signature']).toBe(hexSignature(answer.secret, during.body));
    expect(during.headers['x-svc-signature-previous']).toBe(hexSignature(old, during.body));
    expect(verifies(answer.secret, during)).toBe(true);
    expect(verifies(old, during)).toBe(true);
    expect(verifies(newSecretNobodyHas(), during)).toBe(false);

    // The overlap ends (set to the past here rather than waited for).
    await services.db.query(
      `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE marketplace_id = $1`,
      [shop.id],
    );
    const after = await deliverOne(shop.id, hook);
    expect(String(after.headers['webhook-signature'])).toMatch(/^v1,\S+$/);
    expect(after.headers['x-svc-signature']).toBe(hexSignature(answer.secret, after.body));
    expect(after.headers['x-svc-signature-previous']).toBeUndefined();
    expect(verifies(answer.secret, after)).toBe(true);
    expect(verifies(old, after)).toBe(false);
  });

  it('stops the old secret at once with 0, and a second rotation drops the secret before the last', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver();
    const first = await registered(shop.secret_key, hook.url);
    const second = await rotated(shop.secret_key, { expire_previous_after_seconds: 0 });
    expect(Date.parse(second.previous_expires_at)).toBeLessThanOrEqual(Date.now() + 1000);
    const right = await deliverOne(shop.id, hook);
    expect(right.headers['x-svc-signature-previous']).toBeUndefined();
    expect(verifies(first, right)).toBe(false);
    expect(verifies(second.secret, right)).toBe(true);

    const third = await rotated(shop.secret_key); // the default overlap: a day
    expect(Date.parse(third.previous_expires_at) - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    const fourth = await rotated(shop.secret_key, { expire_previous_after_seconds: 60 });
    const signed = await deliverOne(shop.id, hook);
    expect(signed.headers['x-svc-signature']).toBe(hexSignature(fourth.secret, signed.body));
    expect(signed.headers['x-svc-signature-previous']).toBe(hexSignature(third.secret, signed.body));
    expect([first, second.secret].some((secret) => verifies(secret, signed))).toBe(false);
    expect(verifies(third.secret, signed) && verifies(fourth.secret, signed)).toBe(true);
  });

  it('signs retries of an earlier event with the secrets of the moment, over the same bytes', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver([{ status: 503, headers: { 'Retry-After': '1' } }]);
    const old = await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id);
    await expect.poll(() => hook.received.length, { timeout: 10_000 }).toBe(1);
    const answer = await rotated(shop.secret_key, { expire_previous_after_seconds: 600 });
    expect(await settled(made.deliveryId)).toBe('delivered');
    const [failed, retried] = hook.received;
    expect(retried.body.equals(failed.body)).toBe(true);
    expect(failed.headers['x-svc-signature']).toBe(hexSignature(old, failed.body));
    expect(failed.headers['x-svc-signature-previous']).toBeUndefined();
    expect(retried.headers['x-svc-signature']).toBe(hexSignature(answer.secret, retried.body));
    expect(retried.headers['x-svc-signature-previous']).toBe(hexSignature(old, retried.body));
  });
});

describe('administrators: webhook log and replay', () => {
  it('refuses requests without an administrator token', async () => {
    const shop = await insertMarketplace(services);
    expect((await fetch(`${server.url}/admin/marketplaces/${shop.id}/webhook-deliveries`)).status).toBe(401);
    expect((await post(`${server.url}/admin/webhook-deliveries/${randomUUID()}/replay`, {})).status).toBe(401);
  });

  it('answers 404 for an unknown marketplace or delivery', async () => {
    for (const id of [randomUUID(), 'nope']) {
      const list = await fetch(`${server.url}/admin/marketplaces/${id}/webhook-deliveries`, { headers: admin() });
      expect(list.status).toBe(404);
      expect((await json(list)).code).toBe('not_found');
      const replay = await post(`${server.url}/admin/webhook-deliveries/${id}/replay`, {}, admin());
      expect(replay.status).toBe(404);
      expect((await json(replay)).code).toBe('not_found');
    }
  });

  it('replays by attempt id or delivery id: same event id and bytes, a new X-Svc-Delivery', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver();
    const secret = await registered(shop.secret_key, hook.url);
    const made = await makeEvent(shop.id, 'deal.disputed');
    expect(await settled(made.deliveryId)).toBe('delivered');
    const [first] = await log(shop.id);

    const byAttempt = await post(`${server.url}/admin/webhook-deliveries/${first.id}/replay`, {}, admin());
    expect(byAttempt.status).toBe(202);
    const replay = await json(byAttempt);
    expect(replay).toEqual({
      delivery_id: expect.stringMatching(UUID_PATTERN),
      event_id: made.eventId,
      status: 'pending',
    });
    expect(replay.delivery_id).not.toBe(made.deliveryId);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(2);

    const byDelivery = await json(
      await post(`${server.url}/admin/webhook-deliveries/${made.deliveryId}/replay`, {}, admin()),
    );
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(3);

    const [original, again, third] = hook.received;
    expect([again.headers['x-svc-delivery'], third.headers['x-svc-delivery']]).toEqual([
      replay.delivery_id,
      byDelivery.delivery_id,
    ]);
    for (const request of [again, third]) {
      expect(request.headers['webhook-id']).toBe(made.eventId);
      expect(request.body.equals(original.body)).toBe(true);
      expect(request.headers['x-svc-signature']).toBe(original.headers['x-svc-signature']);
      expect(new Webhook(secret).verify(request.body.toString('utf8'), standardHeaders(request.headers))).toMatchObject(
        { event_id: made.eventId },
      );
    }

    await expect.poll(async () => (await log(shop.id)).length, { timeout: 10_000 }).toBe(3);
    const entries = await log(shop.id);
    expect(entries.map((entry) => entry.delivery_id)).toEqual([
      byDelivery.delivery_id,
      replay.delivery_id,
      made.deliveryId,
    ]);
    expect(entries.every((entry) => entry.status === 'delivered' && entry.event === 'deal.disputed')).toBe(true);
    expect(await log(shop.id, '?limit=1')).toHaveLength(1);
    const tooMany = await fetch(`${server.url}/admin/marketplaces/${shop.id}/webhook-deliveries?limit=501`, {
      headers: admin(),
    });
    expect(tooMany.status).toBe(400);
  });

  it('replays every delivery that failed since a moment, once: a repeat while they are sent sends nothing twice', async () => {
    const shop = await insertMarketplace(services);
    const hook = await receiver([{ status: 410 }, { status: 410 }]);
    await registered(shop.secret_key, hook.url);
    const since = new Date(Date.now() - 60_000).toISOString();
    const paid = await makeEvent(shop.id, 'deal.paid');
    expect(await settled(paid.deliveryId)).toBe('failed');
    const refunded = await makeEvent(shop.id, 'deal.refunded');
    expect(await settled(refunded.deliveryId)).toBe('failed');
    const delivered = await makeEvent(shop.id, 'deal.approved');
    expect(await settled(delivered.deliveryId)).toBe('delivered');

    const replay = () =>
      post(`${server.url}/admin/marketplaces/${shop.id}/webhook-deliveries/replay`, { since }, admin());
    const first = await replay();
    expect(first.status).toBe(202);
    expect(await json(first)).toEqual({ replayed: 2 });
    expect(await json(await replay())).toEqual({ replayed: 0 }); // the replays are still to send, or sent
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBe(5);
    const replayed = hook.received.slice(3);
    expect(replayed.map((request) => request.headers['webhook-id']).sort()).toEqual(
      [paid.eventId, refunded.eventId].sort(),
    );
    for (const request of replayed) {
      const original = hook.received.find((sent) => sent.headers['webhook-id'] === request.headers['webhook-id'])!;
      expect(request.body.equals(original.body)).toBe(true);
      expect(request.headers['x-svc-delivery']).not.toBe(original.headers['x-svc-delivery']);
    }
    await expect.poll(async () => (await log(shop.id, '?status=delivered')).length, { timeout: 10_000 }).toBe(3);
    expect(await json(await replay())).toEqual({ replayed: 0 });
    expect(hook.received).toHaveLength(5);
  });

  it('documents the webhook routes in the OpenAPI document', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    expect(document.paths['/api/mkt/webhook'].post.security).toEqual([{ marketplaceKey: [] }]);
    expect(document.paths['/api/mkt/webhook'].get.responses['200']).toBeDefined();
    expect(document.paths['/admin/marketplaces/{id}/webhook-deliveries'].get.parameters).toContainEqual(
      expect.objectContaining({ name: 'limit', in: 'query', required: false }),
    );
    expect(document.paths['/admin/webhook-deliveries/{id}/replay'].post.responses['202']).toBeDefined();
    expect(document.paths['/api/mkt/webhook'].delete).toMatchObject({
      security: [{ marketplaceKey: [] }],
      responses: { 204: expect.anything() },
    });
    const rotation = document.paths['/api/mkt/webhook/rotate-secret'].post;
    expect(rotation.security).toEqual([{ marketplaceKey: [] }]);
    expect(rotation.requestBody.required).toBe(false);
    expect(
      rotation.requestBody.content['application/json'].schema.properties.expire_previous_after_seconds,
    ).toMatchObject({
      type: 'integer',
      minimum: 0,
      maximum: 604_800,
      default: 86_400,
    });
    const registration = document.paths['/api/mkt/webhook'].post.requestBody.content['application/json'].schema;
    expect(registration.required).toEqual(['url']);
    expect(registration.properties.events).toMatchObject({ type: 'array', minItems: 1, items: { enum: ALL_EVENTS } });
  });
});

describe('secrets', () => {
  it('never appear in a log line', () => {
    expect(secretsSeen.length).toBeGreaterThan(5);
    const everything = logLines.join('');
    expect(everything.includes('webhook attempt')).toBe(true); // the log did capture the deliveries
    for (const secret of secretsSeen) expect(everything).not.toContain(secret.slice(6));
  });
});
