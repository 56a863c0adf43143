// Console forms that create something, sent twice (the back button and "send again", a double click), over real
// HTTP: the second post of the same form (its `_once` key) creates nothing and is redirected to the first one's page;
// new keys are shown once on that page to the administrator who made them, and a reload shows them no more.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { issueDataKey } from '../../src/data-api/keys.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';

let server: TestServer;
let admin: TestAdministrator;
let colleague: TestAdministrator;

beforeAll(async () => {
  server = await startTestServer();
  admin = await administrator(server, 'admin');
  colleague = await administrator(server, 'admin');
});
afterAll(async () => {
  await server?.stop();
});

async function submit(who: TestAdministrator, path: string, fields: Record<string, string>) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { Cookie: who.cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'en' },
    body: new URLSearchParams({ _csrf: who.csrf, ...fields }).toString(),
  });
}
const open = (who: TestAdministrator, path: string) =>
  fetch(`${server.url}${path}`, { headers: { Cookie: who.cookie, 'Accept-Language': 'en' }, redirect: 'manual' });
const count = async (sql: string, values: unknown[]) =>
  Number((await server.services.db.query<{ n: string }>(sql, values)).rows[0].n);

describe('console forms sent twice', () => {
  it('a marketplace: the second post is redirected to the first one’s page, one marketplace, keys shown once', async () => {
    const name = `Twice ${uniqueId()}`;
    const form = { _once: randomUUID(), name, mode: 'sandbox', allowed_origins: '', sso_redirect_uri: '' };
    const first = await submit(admin, '/admin/view/marketplaces', form);
    expect(first.status).toBe(303);
    const location = first.headers.get('location')!;
    expect(location).toMatch(/^\/admin\/view\/shown\/[0-9a-f-]{36}$/);
    const again = await submit(admin, '/admin/view/marketplaces', form);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(location);
    expect(await count('SELECT count(*) AS n FROM marketplaces WHERE name = $1', [name])).toBe(1);
    expect(
      await count("SELECT count(*) AS n FROM audit_log WHERE action = 'createMarketplace' AND after->>'name' = $1", [
        name,
      ]),
    ).toBe(1);

    // Another administrator cannot read the page; the maker reads it once; then it says the keys are gone.
    expect((await open(colleague, location)).status).toBe(404);
    const shown = await open(admin, location);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    const page = await shown.text();
    const secretKey = /id="secret-key" class="secret-value">(mk_[^<]+)</.exec(page)?.[1];
    expect(secretKey).toMatch(/^mk_/);
    expect((await fetch(`${server.url}/api/mkt/ping`, { headers: { 'X-Svc-Key': secretKey! } })).status).toBe(200);
    const reloaded = await (await open(admin, location)).text();
    expect(reloaded).toContain('These keys are not shown again');
    expect(reloaded).not.toContain(secretKey);
    // Nothing readable stays behind in the database.
    expect(
      await count('SELECT count(*) AS n FROM console_once WHERE location = $1 AND reveal_sealed IS NOT NULL', [
        location,
      ]),
    ).toBe(0);
  });

  it('a form that fails frees its key: the corrected form with the same key creates once', async () => {
    const key = randomUUID();
    const name = `Fixed ${uniqueId()}`;
    const bad = await submit(admin, '/admin/view/marketplaces', { _once: key, name, mode: 'neither' });
    expect(bad.status).toBe(400);
    const good = await submit(admin, '/admin/view/marketplaces', { _once: key, name, mode: 'sandbox' });
    expect(good.status).toBe(303);
    expect(await count('SELECT count(*) AS n FROM marketplaces WHERE name = $1', [name])).toBe(1);
  });

  it('an SSO client, a data key, an administrator and a key rotation are each made once', async () => {
    const clientId = `twice-${uniqueId()}`.toLowerCase();
    const client = {
      _once: randomUUID(),
      client_id: clientId,
      name: 'Twice',
      redirect_uris: 'https://twice.example/cb',
    };
    const sso = await submit(admin, '/admin/view/sso-clients', client);
    expect(sso.status).toBe(303);
    const ssoAgain = await submit(admin, '/admin/view/sso-clients', client);
    expect(ssoAgain.headers.get('location')).toBe(sso.headers.get('location'));
    expect(await (await open(admin, sso.headers.get('location')!)).text()).toContain('id="client-secret"');

    const { account_id } = await issueDataKey(server.services.db, { email: uniqueEmail('data'), tariff: 'free' });
    const issue = { _once: randomUUID(), intent: 'issue-key', name: 'twice' };
    const path = `/admin/view/data-accounts/${account_id}`;
    expect((await submit(admin, path, issue)).status).toBe(303);
    expect((await submit(admin, path, issue)).status).toBe(303);
    expect(
      await count("SELECT count(*) AS n FROM data_keys WHERE account_id = $1 AND name = 'twice'", [account_id]),
    ).toBe(1);

    const email = uniqueEmail('colleague');
    const invite = { _once: randomUUID(), email, role: 'support' };
    expect((await submit(admin, '/admin/view/administrators', invite)).headers.get('location')).toBe(
      '/admin/view/administrators?done=added',
    );
    expect((await submit(admin, '/admin/view/administrators', invite)).headers.get('location')).toBe(
      '/admin/view/administrators?done=added',
    );
    expect(
      await count("SELECT count(*) AS n FROM audit_log WHERE action = 'createAdministrator' AND after->>'email' = $1", [
        email,
      ]),
    ).toBe(1);

    const made = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Rotate twice' }, admin.headers));
    const rotate = { _once: randomUUID(), intent: 'rotate-public-key', confirmed: 'yes' };
    const card = `/admin/view/marketplaces/${made.id}`;
    expect((await submit(admin, card, rotate)).status).toBe(303);
    expect((await submit(admin, card, rotate)).status).toBe(303);
    expect(
      await count(
        "SELECT count(*) AS n FROM audit_log WHERE action = 'rotateMarketplacePublicKey' AND object_id = $1",
        [made.id],
      ),
    ).toBe(1);
  });

  it('revealing the webhook secret, sent twice and reloaded, shows it once and audits it once', async () => {
    const made = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Reveal twice' }, admin.headers));
    const { secret } = await json(
      await post(
        `${server.url}/api/mkt/webhook`,
        { url: 'http://127.0.0.1:9/hooks' },
        { 'X-Svc-Key': made.secret_key },
      ),
    );
    const card = `/admin/view/marketplaces/${made.id}`;
    // The card itself never holds the secret; its form carries the one-time key.
    const cardPage = await (await open(admin, card)).text();
    expect(cardPage).not.toContain(secret);
    expect(cardPage).toMatch(/id="reveal-webhook-secret">.*name="_once"/s);
    const reveal = { _once: randomUUID(), intent: 'reveal-webhook-secret' };
    const first = await submit(admin, card, reveal);
    expect(first.status).toBe(303);
    const location = first.headers.get('location')!;
    expect(location).toMatch(/^\/admin\/view\/shown\/[0-9a-f-]{36}$/);
    expect(await first.text()).not.toContain(secret);
    expect((await submit(admin, card, reveal)).headers.get('location')).toBe(location);
    const shown = await (await open(admin, location)).text();
    expect(shown).toContain(`id="webhook-secret" class="secret-value">${secret}<`);
    expect(shown).toContain('Webhook signing secret of Reveal twice');
    const reloaded = await (await open(admin, location)).text();
    expect(reloaded).not.toContain(secret);
    expect(reloaded).toContain('Nothing was created, changed or revealed again');
    const audited = "SELECT count(*) AS n FROM audit_log WHERE action = 'revealWebhookSecret' AND object_id = $1";
    expect(await count(audited, [made.id])).toBe(1);
    // A new press of the button (a fresh key) reveals it again, and that is audited too.
    const again = await submit(admin, card, { _once: randomUUID(), intent: 'reveal-webhook-secret' });
    expect(again.headers.get('location')).not.toBe(location);
    expect(await (await open(admin, again.headers.get('location')!)).text()).toContain(secret);
    expect(await count(audited, [made.id])).toBe(2);
  });

  it('revealing an SSO client’s secret, sent twice and reloaded, shows it once and audits it once', async () => {
    const name = `Reveal client ${uniqueId()}`;
    const made = await submit(admin, '/admin/view/sso-clients', {
      _once: randomUUID(),
      client_id: `reveal-${uniqueId()}`.toLowerCase(),
      name,
      redirect_uris: 'https://rp.example/cb',
    });
    expect(made.status).toBe(303);
    const registered = await (await open(admin, made.headers.get('location')!)).text();
    const clientId = /id="client-id" class="secret-value">([^<]+)</.exec(registered)![1];
    const secret = /id="client-secret" class="secret-value">([^<]+)</.exec(registered)![1];
    const reveal = `/admin/view/sso-clients/${encodeURIComponent(clientId)}/secret`;
    const form = { _once: randomUUID() };
    const first = await submit(admin, reveal, form);
    expect(first.status).toBe(303);
    const location = first.headers.get('location')!;
    expect(location).toMatch(/^\/admin\/view\/shown\/[0-9a-f-]{36}$/);
    expect((await submit(admin, reveal, form)).headers.get('location')).toBe(location);
    expect(await (await open(admin, location)).text()).toContain(secret);
    expect(await (await open(admin, location)).text()).not.toContain(secret);
    const audited = "SELECT count(*) AS n FROM audit_log WHERE action = 'revealSsoClientSecret' AND object_id = $1";
    expect(await count(audited, [clientId])).toBe(1);
  });

  it('a webhook test and a replay sent twice each start one delivery', async () => {
    const made = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Replay twice' }, admin.headers));
    const registered = await post(
      `${server.url}/api/mkt/webhook`,
      { url: 'http://127.0.0.1:9/hooks' },
      { 'X-Svc-Key': made.secret_key },
    );
    expect(registered.status).toBe(200);
    const card = `/admin/view/marketplaces/${made.id}`;
    const test = { _once: randomUUID(), intent: 'test-webhook' };
    expect((await submit(admin, card, test)).headers.get('location')).toBe(`${card}?done=test_sent#log`);
    expect((await submit(admin, card, test)).headers.get('location')).toBe(`${card}?done=test_sent#log`);
    const events = await server.services.db.query<{ id: string }>(
      "SELECT id FROM webhook_events WHERE marketplace_id = $1 AND event = 'webhook.test'",
      [made.id],
    );
    expect(events.rows).toHaveLength(1);
    const deliveries = 'SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = $1';
    const [first] = (
      await server.services.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = $1', [
        events.rows[0].id,
      ])
    ).rows;
    const replay = { _once: randomUUID(), intent: 'replay', attempt_id: first.id };
    expect((await submit(admin, card, replay)).status).toBe(303);
    expect((await submit(admin, card, replay)).status).toBe(303);
    expect(await count(deliveries, [events.rows[0].id])).toBe(2);
  });
});
