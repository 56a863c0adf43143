// Marketplaces in the administration's JSON: list and search, the card, changes with their audit record, key rotation
// (the old secret key works through the overlap, then 401), deactivation seen by a second server instance, the
// webhook endpoint with its secret, test events, the webhook log with bodies and filters, replays, and the roles.
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { createMarketplaceViaApi } from '../factories.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';

let server: TestServer;
let second: TestServer;
let admin: TestAdministrator;
let arbiter: TestAdministrator;
let support: TestAdministrator;
const receivers: Receiver[] = [];

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  second = await startTestServer();
  [admin, arbiter, support] = [
    await administrator(server, 'admin'),
    await administrator(server, 'arbiter'),
    await administrator(server, 'support'),
  ];
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.stop()));
  await second?.stop();
  await server?.stop();
});

const url = (path: string, on = server) => `${on.url}${path}`;
const get = (path: string, who = admin, on = server) => fetch(url(path, on), { headers: who.headers });
const send = (method: string, path: string, body: unknown, who = admin) =>
  fetch(url(path), {
    method,
    headers: { ...who.headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
const ping = (key: string, on = server) => fetch(url('/api/mkt/ping', on), { headers: { 'X-Svc-Key': key } });
/** The widget's lookup takes the pk_ key: 204 (no such order yet) while the key works, 401 when it does not. */
const lookup = (publicKey: string, on = server) =>
  post(url('/api/mkt/widget/deals/lookup', on), {
    public_key: publicKey,
    external_id: uniqueId('order'),
    buyer_email: uniqueEmail('buyer'),
  });

async function receiver(script: Parameters<typeof startReceiver>[0] = []) {
  const started = await startReceiver(script);
  receivers.push(started);
  return started;
}

async function auditOf(objectId: string, action: string) {
  return (await json(await get(`/admin/audit?${new URLSearchParams({ object_id: objectId, action })}`))).items;
}

describe('the marketplace list and card', () => {
  it('searches by name or id, pages, and shows no secrets', async () => {
    const token = uniqueId('findme');
    const made = [
      await createMarketplaceViaApi(server, { name: `${token} one` }, admin.headers),
      await createMarketplaceViaApi(server, { name: `${token} two` }, admin.headers),
      await createMarketplaceViaApi(server, { name: `${token} three` }, admin.headers),
    ];
    const first = await json(await get(`/admin/marketplaces?q=${token.toUpperCase()}&limit=2`));
    expect(first.items.map((m: { id: string }) => m.id)).toEqual([made[2].id, made[1].id]);
    expect(first.has_more).toBe(true);
    expect(first.items[0]).toMatchObject({
      name: `${token} three`,
      mode: 'sandbox',
      active: true,
      allowed_origins: [],
      sso_redirect_uri: null,
    });
    expect(JSON.stringify(first)).not.toMatch(/mk_|pk_|secret/);
    const rest = await json(await get(`/admin/marketplaces?q=${token}&limit=2&starting_after=${first.items[1].id}`));
    expect(rest).toEqual({ items: [expect.objectContaining({ id: made[0].id })], has_more: false });
    const byId = await json(await get(`/admin/marketplaces?q=${made[1].id.slice(0, 13)}`));
    expect(byId.items.map((m: { id: string }) => m.id)).toContain(made[1].id);
    expect((await get('/admin/marketplaces?q=%25')).status).toBe(200); // a wildcard is a character, not a pattern
    expect((await json(await get(`/admin/marketplaces?q=${token}_%25`))).items).toEqual([]);
    expect((await get('/admin/marketplaces?limit=0')).status).toBe(400);
  });

  it('shows the card with the keys’ prefixes and the automatic SSO client', async () => {
    const made = await createMarketplaceViaApi(
      server,
      {
        name: uniqueId('card'),
        sso_redirect_uri: 'https://card.example/sso',
        allowed_origins: ['https://card.example'],
      },
      admin.headers,
    );
    const card = await json(await get(`/admin/marketplaces/${made.id}`));
    expect(card).toMatchObject({
      id: made.id,
      mode: 'sandbox',
      active: true,
      allowed_origins: ['https://card.example'],
      sso_redirect_uri: 'https://card.example/sso',
      sso_client_id: made.id,
    });
    expect(
      card.keys.map((k: { kind: string; prefix: string; status: string }) => [k.kind, k.prefix, k.status]).sort(),
    ).toEqual([
      ['public', made.public_key.slice(0, 11), 'active'],
      ['secret', made.secret_key.slice(0, 11), 'active'],
    ]);
    expect(JSON.stringify(card)).not.toContain(made.secret_key);
    expect((await get(`/admin/marketplaces/${randomUUID()}`)).status).toBe(404);
    expect((await get('/admin/marketplaces/not-an-id')).status).toBe(404);
  });
});

describe('changes', () => {
  it('patches the fields, the SSO client follows, and the audit has before and after', async () => {
    const made = await createMarketplaceViaApi(server, { name: 'Before name' }, admin.headers);
    const response = await send('PATCH', `/admin/marketplaces/${made.id}`, {
      name: 'After name',
      mode: 'live',
      allowed_origins: ['https://after.example', 'https://after.example'],
      sso_redirect_uri: 'https://after.example/sso',
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      name: 'After name',
      mode: 'live',
      allowed_origins: ['https://after.example'],
      sso_client_id: made.id,
    });
    const client = await server.services.db.query('SELECT name, redirect_uris FROM sso_clients WHERE client_id = $1', [
      made.id,
    ]);
    expect(client.rows[0]).toEqual({ name: 'After name', redirect_uris: ['https://after.example/sso'] });
    const [record] = await auditOf(made.id, 'updateMarketplace');
    expect(record).toMatchObject({
      actor: admin.email,
      object_type: 'marketplace',
      before: { name: 'Before name', mode: 'sandbox' },
      after: { name: 'After name', mode: 'live' },
    });
  });

  it('refuses bad input with 400 and changes nothing', async () => {
    const made = await createMarketplaceViaApi(server, { name: 'Unchanged' }, admin.headers);
    for (const body of [
      { mode: 'bogus' },
      { name: '   ' },
      { allowed_origins: ['not an origin'] },
      { sso_redirect_uri: 'ftp://x.example' },
      { colour: 'red' },
    ]) {
      const refused = await send('PATCH', `/admin/marketplaces/${made.id}`, body);
      expect(refused.status).toBe(400);
      expect((await json(refused)).code).toBe('validation_failed');
    }
    for (const seconds of [-1, 604_801, 1.5]) {
      expect(
        (
          await send('POST', `/admin/marketplaces/${made.id}/rotate-secret-key`, {
            expire_previous_after_seconds: seconds,
          })
        ).status,
      ).toBe(400);
    }
    expect(await json(await get(`/admin/marketplaces/${made.id}`))).toMatchObject({
      name: 'Unchanged',
      mode: 'sandbox',
      allowed_origins: [],
    });
    expect((await ping(made.secret_key)).status).toBe(200);
    expect(await auditOf(made.id, 'updateMarketplace')).toEqual([]);
  });

  it('rotates the secret key: the old one works through the overlap, then 401 on every instance', async () => {
    const made = await createMarketplaceViaApi(server, {}, admin.headers);
    const rotated = await send('POST', `/admin/marketplaces/${made.id}/rotate-secret-key`, {
      expire_previous_after_seconds: 2,
    });
    expect(rotated.status).toBe(200);
    const { secret_key: second_key, previous_expires_at } = await json(rotated);
    expect(second_key).toMatch(/^mk_/);
    expect(Date.parse(previous_expires_at) - Date.now()).toBeLessThanOrEqual(2000);
    expect((await ping(made.secret_key)).status).toBe(200);
    expect((await ping(made.secret_key, second)).status).toBe(200);
    expect((await ping(second_key, second)).status).toBe(200);
    await expect
      .poll(async () => (await ping(made.secret_key, second)).status, { timeout: 5000, interval: 250 })
      .toBe(401);
    expect((await ping(made.secret_key)).status).toBe(401);
    expect((await ping(second_key)).status).toBe(200);

    // A leaked key: no overlap. A key still in an earlier overlap stops as well.
    const third = await json(
      await send('POST', `/admin/marketplaces/${made.id}/rotate-secret-key`, { expire_previous_after_seconds: 3600 }),
    );
    expect((await ping(second_key)).status).toBe(200);
    const fourth = await json(
      await send('POST', `/admin/marketplaces/${made.id}/rotate-secret-key`, { expire_previous_after_seconds: 0 }),
    );
    expect((await ping(second_key, second)).status).toBe(401);
    expect((await ping(third.secret_key, second)).status).toBe(401);
    expect((await ping(fourth.secret_key, second)).status).toBe(200);
    const [record] = await auditOf(made.id, 'rotateMarketplaceSecretKey');
    expect(record.after).toMatchObject({ secret_key: '[redacted]' });
    expect(JSON.stringify(record)).not.toContain(fourth.secret_key);
    const card = await json(await get(`/admin/marketplaces/${made.id}`));
    expect(
      card.keys.filter((k: { kind: string; status: string }) => k.kind === 'secret' && k.status === 'active'),
    ).toHaveLength(1);
  });

  it('rotates the public key: the old one is refused at once', async () => {
    const made = await createMarketplaceViaApi(server, {}, admin.headers);
    expect((await lookup(made.public_key)).status).toBe(204);
    const rotated = await send('POST', `/admin/marketplaces/${made.id}/rotate-public-key`, {});
    expect(rotated.status).toBe(200);
    const { public_key } = await json(rotated);
    expect((await lookup(made.public_key, second)).status).toBe(401);
    expect((await lookup(public_key, second)).status).toBe(204);
  });

  it('deactivates: mk_ and pk_ 401 on another instance, the deal still readable; activates again', async () => {
    const made = await createMarketplaceViaApi(server, {}, admin.headers);
    const deal = await json(
      await post(
        url('/api/mkt/deals'),
        { external_id: uniqueId('order'), buyer_email: uniqueEmail('buyer'), title: 'Lamp', amount: 100 },
        { 'X-Svc-Key': made.secret_key },
      ),
    );
    expect(deal.id).toBeDefined();
    const off = await send('POST', `/admin/marketplaces/${made.id}/deactivate`, {});
    expect(off.status).toBe(200);
    expect((await json(off)).active).toBe(false);
    expect((await ping(made.secret_key, second)).status).toBe(401);
    expect((await lookup(made.public_key, second)).status).toBe(401);
    const read = await get(`/admin/deals/${deal.id}`, support, second);
    expect(read.status).toBe(200);
    expect((await json(read)).id).toBe(deal.id);
    const [record] = await auditOf(made.id, 'deactivateMarketplace');
    expect(record).toMatchObject({ before: { active: true }, after: { active: false } });

    expect((await send('POST', `/admin/marketplaces/${made.id}/activate`, {})).status).toBe(200);
    expect((await ping(made.secret_key, second)).status).toBe(200);
    expect((await lookup(made.public_key, second)).status).toBe(204);
  });
});

describe('the webhook', () => {
  it('reveals the secret to admins (audited, redacted) and sends a signed test event', async () => {
    const made = await createMarketplaceViaApi(server, {}, admin.headers);
    const hook = await receiver();
    const { secret } = await json(
      await post(url('/api/mkt/webhook'), { url: hook.url }, { 'X-Svc-Key': made.secret_key }),
    );
    const card = await json(await get(`/admin/marketplaces/${made.id}/webhook`));
    expect(card).toMatchObject({ url: hook.url, secret, events: expect.arrayContaining(['deal.created']) });
    const [record] = await auditOf(made.id, 'revealWebhookSecret');
    expect(record).toMatchObject({ actor: admin.email, after: { url: hook.url, secret: '[redacted]' } });
    expect(JSON.stringify(record)).not.toContain(secret);

    const test = await send('POST', `/admin/marketplaces/${made.id}/webhook/test`, {});
    expect(test.status).toBe(202);
    const started = await json(test);
    await expect.poll(() => hook.received.length, { timeout: 20_000 }).toBe(1);
    const [got] = hook.received;
    expect(JSON.parse(got.body.toString())).toMatchObject({
      event: 'webhook.test',
      marketplace_id: made.id,
      event_id: started.event_id,
    });
    expect(got.headers['x-svc-signature']).toBe(createHmac('sha256', secret).update(got.body).digest('hex'));
    expect(got.headers['x-svc-delivery']).toBe(started.delivery_id);
    // A check of the endpoint, not a deal's history: the marketplace's events list leaves it out.
    const events = await json(await fetch(url('/api/mkt/events'), { headers: { 'X-Svc-Key': made.secret_key } }));
    expect(events.items.map((event: { event_id: string }) => event.event_id)).not.toContain(started.event_id);

    const noHook = await createMarketplaceViaApi(server, {}, admin.headers);
    const noHookTest = await send('POST', `/admin/marketplaces/${noHook.id}/webhook/test`, {});
    expect([noHookTest.status, (await json(noHookTest)).code]).toEqual([409, 'webhook_not_registered']);
    // No webhook registered yet: the card says so with nulls (404 is for an unknown marketplace).
    expect(await json(await get(`/admin/marketplaces/${noHook.id}/webhook`))).toEqual({
      url: null,
      events: null,
      secret: null,
      previous_expires_at: null,
      created_at: null,
    });
    expect((await get('/admin/marketplaces/00000000-0000-4000-8000-000000000000/webhook')).status).toBe(404);
  });

  it('logs attempts with the request body and the answer, filters them, and replays failed ones since a moment', async () => {
    const made = await createMarketplaceViaApi(server, {}, admin.headers);
    // 410 ends a delivery at once (failed), then the receiver answers 200.
    const hook = await receiver([{ status: 410 }]);
    await post(url('/api/mkt/webhook'), { url: hook.url }, { 'X-Svc-Key': made.secret_key });
    const since = new Date(Date.now() - 1000).toISOString();
    const failed = await json(await send('POST', `/admin/marketplaces/${made.id}/webhook/test`, {}));
    await expect
      .poll(
        async () =>
          (await server.services.db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [failed.delivery_id]))
            .rows[0]?.status,
        { timeout: 20_000 },
      )
      .toBe('failed');
    const log = await json(await get(`/admin/marketplaces/${made.id}/webhook-deliveries?status=failed`));
    expect(log.has_more).toBe(false);
    expect(log.items).toHaveLength(1);
    expect(log.items[0]).toMatchObject({
      delivery_id: failed.delivery_id,
      event: 'webhook.test',
      deal_id: null,
      attempt: 1,
      http_status: 410,
      error: 'HTTP 410',
      response_excerpt: 'no',
    });
    expect(JSON.parse(log.items[0].request_body)).toMatchObject({ event: 'webhook.test', event_id: failed.event_id });
    expect((await json(await get(`/admin/marketplaces/${made.id}/webhook-deliveries?status=delivered`))).items).toEqual(
      [],
    );
    expect(
      (await json(await get(`/admin/marketplaces/${made.id}/webhook-deliveries?event=deal.created`))).items,
    ).toEqual([]);
    expect(
      (await json(await get(`/admin/marketplaces/${made.id}/webhook-deliveries?deal_id=${randomUUID()}`))).items,
    ).toEqual([]);
    expect((await get(`/admin/marketplaces/${made.id}/webhook-deliveries?status=lost`)).status).toBe(400);

    expect(
      (
        await send('POST', `/admin/marketplaces/${made.id}/webhook-deliveries/replay`, {
          since: 'yesterday',
          status: 'failed',
        })
      ).status,
    ).toBe(400);
    expect(
      (await send('POST', `/admin/marketplaces/${made.id}/webhook-deliveries/replay`, { since, status: 'delivered' }))
        .status,
    ).toBe(400);
    const replay = await send('POST', `/admin/marketplaces/${made.id}/webhook-deliveries/replay`, {
      since,
      status: 'failed',
    });
    expect(replay.status).toBe(202);
    expect(await json(replay)).toEqual({ replayed: 1 });
    await expect.poll(() => hook.received.length, { timeout: 20_000 }).toBe(2);
    expect(hook.received[1].headers['webhook-id']).toBe(hook.received[0].headers['webhook-id']);
    // Delivered now: a repeat sends nothing twice.
    await expect
      .poll(
        async () =>
          (await json(await get(`/admin/marketplaces/${made.id}/webhook-deliveries?status=delivered`))).items.length,
        { timeout: 10_000 },
      )
      .toBe(1);
    expect(
      await json(
        await send('POST', `/admin/marketplaces/${made.id}/webhook-deliveries/replay`, { since, status: 'failed' }),
      ),
    ).toEqual({ replayed: 0 });
    const all = await json(await get(`/admin/marketplaces/${made.id}/webhook-deliveries?limit=1`));
    expect(all).toMatchObject({ has_more: true, items: [{ status: 'delivered', response_excerpt: 'ok' }] });
    const older = await json(
      await get(`/admin/marketplaces/${made.id}/webhook-deliveries?limit=1&starting_after=${all.items[0].id}`),
    );
    expect(older).toMatchObject({ has_more: false, items: [{ status: 'failed' }] });
    // The one-delivery replay stays.
    expect((await send('POST', `/admin/webhook-deliveries/${failed.delivery_id}/replay`, {})).status).toBe(202);
  });
});

describe('roles', () => {
  it('lets arbiter and support read but not change', async () => {
    const made = await createMarketplaceViaApi(server, {}, admin.headers);
    const hook = await receiver();
    await post(url('/api/mkt/webhook'), { url: hook.url }, { 'X-Svc-Key': made.secret_key });
    for (const who of [arbiter, support]) {
      for (const path of [
        '/admin/marketplaces',
        `/admin/marketplaces/${made.id}`,
        `/admin/marketplaces/${made.id}/webhook-deliveries`,
      ]) {
        expect((await get(path, who)).status).toBe(200);
      }
      // The signing secret is the admin role's to see.
      expect((await get(`/admin/marketplaces/${made.id}/webhook`, who)).status).toBe(403);
      const changes: [string, string, unknown][] = [
        ['PATCH', `/admin/marketplaces/${made.id}`, { name: 'Taken over' }],
        ['POST', `/admin/marketplaces/${made.id}/rotate-secret-key`, {}],
        ['POST', `/admin/marketplaces/${made.id}/rotate-public-key`, {}],
        ['POST', `/admin/marketplaces/${made.id}/deactivate`, {}],
        ['POST', `/admin/marketplaces/${made.id}/activate`, {}],
        ['POST', `/admin/marketplaces/${made.id}/webhook/test`, {}],
        ['POST', `/admin/marketplaces/${made.id}/webhook/rotate-secret`, {}],
        [
          'POST',
          `/admin/marketplaces/${made.id}/webhook-deliveries/replay`,
          { since: new Date().toISOString(), status: 'failed' },
        ],
      ];
      for (const [method, path, body] of changes) {
        const refused = await send(method, path, body, who);
        expect(refused.status, `${who.role} ${method} ${path}`).toBe(403);
        expect((await json(refused)).code).toBe('forbidden');
      }
    }
    expect(await json(await get(`/admin/marketplaces/${made.id}`))).toMatchObject({ name: made.name, active: true });
    expect((await ping(made.secret_key)).status).toBe(200);
    expect(hook.received).toEqual([]);
  });
});
