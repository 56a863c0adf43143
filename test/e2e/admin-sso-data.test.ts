// SSO clients and data accounts under /admin, over real HTTP: the client list (automatic clients marked, no secrets),
// the card (its reveal audited), changes, disabling (invalid_client at once at both token endpoints, the 400 page at
// authorize, access tokens refused at userinfo), deletion, and the marketplaces' own clients; data accounts with
// this month's usage, tariff and quota changes that hold from the next request, keys issued and revoked (401 at once on
// REST and MCP of a data server); roles that may only read; bad input that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import {
  REDIRECT_URI,
  authorize,
  basic,
  codeFor,
  createUser,
  exchange,
  oidcToken,
  registerClient,
  type Client,
} from '../sso-helpers.ts';
import { bearer, dataKey } from '../doubles/data-setup.ts';
import { TARIFF_QUOTAS } from '../../src/data-api/keys.ts';

let server: TestServer;
let data: TestServer;
let admin: TestAdministrator;
let arbiter: TestAdministrator;
let support: TestAdministrator;

beforeAll(async () => {
  [server, data] = await Promise.all([startTestServer(), startTestServer({ kind: 'data' })]);
  [admin, arbiter, support] = await Promise.all([
    administrator(server, 'admin'),
    administrator(server, 'arbiter'),
    administrator(server, 'support'),
  ]);
});
afterAll(async () => {
  await Promise.all([server, data].map((s) => s?.stop()));
});

const get = (path: string, who: TestAdministrator = admin) => fetch(`${server.url}${path}`, { headers: who.headers });
const send = (method: string, path: string, body: unknown, who: TestAdministrator = admin) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...who.headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const patch = (path: string, body: unknown, who?: TestAdministrator) => send('PATCH', path, body, who);
const audit = async (query: Record<string, string>) =>
  (await json(await get(`/admin/audit?${new URLSearchParams(query)}`))).items;

async function expectProblem(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect((await json(response)).code).toBe(code);
}

/** A user's code for the client exchanged at both token endpoints: the first answer of each. */
async function exchanges(client: Client, secret = client.client_secret) {
  const user = await createUser(server);
  const simple = await exchange(server, {
    client_id: client.client_id,
    client_secret: secret,
    code: await codeFor(server, client, user.token),
    redirect_uri: REDIRECT_URI,
  });
  const code = await codeFor(server, client, user.token);
  const oidc = await oidcToken(
    server,
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
    { Authorization: basic(client.client_id, secret) },
  );
  return { simple, oidc };
}

describe('SSO clients', () => {
  it('lists clients newest first, paginated, marking the automatic ones, without secrets', async () => {
    const own = await registerClient(server, { name: 'Listed shop' });
    const shop = await json(
      await post(
        `${server.url}/admin/marketplaces`,
        { name: 'Auto shop', mode: 'sandbox', sso_redirect_uri: 'https://auto.example/sso' },
        admin.headers,
      ),
    );
    // Other test files may register clients meanwhile: find ours in the newest hundred, the newer one first.
    const { items } = await json(await get('/admin/sso/clients?limit=100'));
    const at = (id: string) => items.findIndex((item: { client_id: string }) => item.client_id === id);
    expect(at(shop.id)).toBeGreaterThanOrEqual(0);
    expect(at(shop.id)).toBeLessThan(at(own.client_id));
    expect(items[at(shop.id)]).toMatchObject({
      automatic: true,
      marketplace_id: shop.id,
      disabled: false,
      name: 'Auto shop',
    });
    expect(items[at(own.client_id)]).toMatchObject({
      automatic: false,
      marketplace_id: null,
      name: 'Listed shop',
      redirect_uris: REDIRECT_URI,
    });
    expect(JSON.stringify(items)).not.toContain('cs_');
    const first = await json(await get('/admin/sso/clients?limit=1'));
    expect(first).toMatchObject({ items: [expect.any(Object)], has_more: true });
    const second = await json(await get(`/admin/sso/clients?limit=1&starting_after=${first.items[0].client_id}`));
    expect(second.items[0].created_at <= first.items[0].created_at).toBe(true);
    expect(second.items[0].client_id).not.toBe(first.items[0].client_id);
    await expectProblem(await get('/admin/sso/clients?limit=0'), 400, 'validation_failed');
  });

  it('shows the card with its secret to the admin role only, and audits each reveal', async () => {
    const client = await registerClient(server);
    const response = await get(`/admin/sso/clients/${client.client_id}`, admin);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await json(response)).toMatchObject({
      client_id: client.client_id,
      client_secret: client.client_secret,
      disabled: false,
      automatic: false,
    });
    // The secret lets its holder act as the client: support and arbiters read the list, not the secret.
    await expectProblem(await get(`/admin/sso/clients/${client.client_id}`, support), 403, 'forbidden');
    const listed = await json(await get('/admin/sso/clients?limit=100', support));
    expect(JSON.stringify(listed)).not.toContain(client.client_secret);
    const reveals = await audit({ action: 'revealSsoClientSecret', object_id: client.client_id });
    expect(reveals.map((r: { actor: string }) => r.actor)).toEqual([admin.email]);
    expect(JSON.stringify(reveals)).not.toContain(client.client_secret);
    await expectProblem(await get('/admin/sso/clients/no-such-client'), 404, 'not_found');
  });

  it('changes the name and redirect URIs; bad input is 400 and changes nothing', async () => {
    const client = await registerClient(server);
    const changed = await patch(`/admin/sso/clients/${client.client_id}`, {
      name: 'Renamed',
      redirect_uris: `${REDIRECT_URI} https://*.client.example.com/cb`,
    });
    expect(changed.status).toBe(200);
    const after = await json(changed);
    expect(after).toMatchObject({ name: 'Renamed', redirect_uris: `${REDIRECT_URI} https://*.client.example.com/cb` });
    expect(after).not.toHaveProperty('client_secret');
    for (const body of [
      { redirect_uris: 'https://*.com/cb' },
      { redirect_uris: 'http://example.com/cb' },
      { name: '' },
      { disabled: 'yes' },
      { colour: 'red' },
    ]) {
      await expectProblem(await patch(`/admin/sso/clients/${client.client_id}`, body), 400, 'validation_failed');
    }
    expect(await json(await get(`/admin/sso/clients/${client.client_id}`))).toMatchObject({
      name: 'Renamed',
      disabled: false,
      redirect_uris: after.redirect_uris,
    });
    const [record] = await audit({ action: 'updateSsoClient', object_id: client.client_id });
    expect(record).toMatchObject({ actor: admin.email, before: { name: 'Client shop' }, after: { name: 'Renamed' } });
  });

  it('a disabled client is invalid_client at once at both token endpoints, unknown at authorize, and its tokens stop at userinfo', async () => {
    const client = await registerClient(server);
    const user = await createUser(server);
    const tokens = await json(
      await oidcToken(
        server,
        {
          grant_type: 'authorization_code',
          code: await codeFor(server, client, user.token),
          redirect_uri: REDIRECT_URI,
        },
        { Authorization: basic(client.client_id, client.client_secret) },
      ),
    );
    const userinfo = () =>
      fetch(`${server.url}/sso/userinfo`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect((await userinfo()).status).toBe(200);
    const pendingCode = await codeFor(server, client, user.token);

    expect(await json(await patch(`/admin/sso/clients/${client.client_id}`, { disabled: true }))).toMatchObject({
      disabled: true,
    });
    await expectProblem(
      await exchange(server, {
        client_id: client.client_id,
        client_secret: client.client_secret,
        code: pendingCode,
        redirect_uri: REDIRECT_URI,
      }),
      401,
      'invalid_client',
    );
    const oidc = await oidcToken(
      server,
      { grant_type: 'authorization_code', code: pendingCode, redirect_uri: REDIRECT_URI },
      { Authorization: basic(client.client_id, client.client_secret) },
    );
    expect(oidc.status).toBe(401);
    expect((await json(oidc)).error).toBe('invalid_client');
    const page = await authorize(
      server,
      { client_id: client.client_id, redirect_uri: REDIRECT_URI, state: 's' },
      { Accept: 'text/html' },
    );
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
    expect((await userinfo()).status).toBe(401);

    await patch(`/admin/sso/clients/${client.client_id}`, { disabled: false });
    expect((await userinfo()).status).toBe(200);
    const again = await exchanges(client);
    expect([again.simple.status, again.oidc.status]).toEqual([200, 200]);
  });

  it('deletes a client: 204, then 404, and what it was issued stops working', async () => {
    const client = await registerClient(server);
    const user = await createUser(server);
    const code = await codeFor(server, client, user.token);
    const deleted = await send('DELETE', `/admin/sso/clients/${client.client_id}`, undefined);
    expect(deleted.status).toBe(204);
    await expectProblem(await get(`/admin/sso/clients/${client.client_id}`), 404, 'not_found');
    await expectProblem(await send('DELETE', `/admin/sso/clients/${client.client_id}`, undefined), 404, 'not_found');
    await expectProblem(
      await exchange(server, {
        client_id: client.client_id,
        client_secret: client.client_secret,
        code,
        redirect_uri: REDIRECT_URI,
      }),
      401,
      'invalid_client',
    );
    const [record] = await audit({ action: 'deleteSsoClient', object_id: client.client_id });
    expect(record).toMatchObject({
      actor: admin.email,
      object_type: 'sso_client',
      before: { client_id: client.client_id },
    });
  });

  it('a marketplace’s automatic client can be disabled and enabled, never renamed, re-pointed or deleted', async () => {
    const shop = await json(
      await post(
        `${server.url}/admin/marketplaces`,
        { name: 'Owned shop', mode: 'sandbox', sso_redirect_uri: 'https://owned.example/sso' },
        admin.headers,
      ),
    );
    const path = `/admin/sso/clients/${shop.id}`;
    await expectProblem(await patch(path, { name: 'Other' }), 409, 'sso_client_of_marketplace');
    await expectProblem(
      await patch(path, { redirect_uris: 'https://elsewhere.example/cb', disabled: true }),
      409,
      'sso_client_of_marketplace',
    );
    await expectProblem(await send('DELETE', path, undefined), 409, 'sso_client_of_marketplace');
    expect(await json(await get(path))).toMatchObject({
      name: 'Owned shop',
      redirect_uris: 'https://owned.example/sso',
      disabled: false,
    });
    expect(await json(await patch(path, { disabled: true }))).toMatchObject({ disabled: true, automatic: true });
  });

  it('arbiter and support read but may not change (403 forbidden, nothing changed)', async () => {
    const client = await registerClient(server);
    for (const who of [arbiter, support]) {
      expect((await get('/admin/sso/clients', who)).status).toBe(200);
      await expectProblem(
        await patch(`/admin/sso/clients/${client.client_id}`, { disabled: true }, who),
        403,
        'forbidden',
      );
      await expectProblem(
        await send('DELETE', `/admin/sso/clients/${client.client_id}`, undefined, who),
        403,
        'forbidden',
      );
      await expectProblem(
        await send('POST', `/admin/sso/clients/${client.client_id}/rotate-secret`, undefined, who),
        403,
        'forbidden',
      );
    }
    expect(await json(await get(`/admin/sso/clients/${client.client_id}`))).toMatchObject({
      disabled: false,
      client_secret: client.client_secret,
    });
  });
});

describe('data accounts', () => {
  const me = (key: string) => fetch(`${data.url}/v1/me`, { headers: bearer(key) });
  const mcpCall = (key: string) =>
    post(
      `${data.url}/mcp/`,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_corpora', arguments: {} } },
      { ...bearer(key), Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
    );

  it('lists and finds accounts by e-mail with this month’s usage and their keys', async () => {
    const email = uniqueEmail('usage');
    const { key, account_id } = await dataKey(server.services.db, 'free', email);
    for (let i = 0; i < 3; i++) expect((await me(key)).status).toBe(200);
    const found = await json(
      await get(`/admin/data-accounts?q=${encodeURIComponent(email.slice(0, -4).toUpperCase())}`),
    );
    expect(found.items).toHaveLength(1);
    expect(found.items[0]).toMatchObject({
      id: account_id,
      email,
      tariff: 'free',
      monthly_quota: TARIFF_QUOTAS.free,
      custom_quota: false,
      used: 3,
    });
    expect(found.items[0].keys).toEqual([
      { id: expect.any(String), name: '', prefix: key.slice(0, 12), created_at: expect.any(String), revoked_at: null },
    ]);
    expect(await json(await get(`/admin/data-accounts/${account_id}`))).toEqual(found.items[0]);
    expect(
      (await json(await get(`/admin/data-accounts?q=${encodeURIComponent('%')}`))).items.every((a: { email: string }) =>
        a.email.includes('%'),
      ),
    ).toBe(true);
    // Two accounts of one unique marker, so that accounts other test files make meanwhile do not count.
    const marker = uniqueId('page');
    const older = await dataKey(server.services.db, 'pro', `${marker}-a@example.com`);
    const newer = await dataKey(server.services.db, 'pro', `${marker}-b@example.com`);
    const page = await json(await get(`/admin/data-accounts?q=${marker}&limit=1`));
    expect(page).toMatchObject({ items: [{ id: newer.account_id }], has_more: true });
    const next = await json(await get(`/admin/data-accounts?q=${marker}&limit=1&starting_after=${newer.account_id}`));
    expect(next).toMatchObject({ items: [{ id: older.account_id }], has_more: false });
    await expectProblem(await get('/admin/data-accounts/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  });

  it('a quota set or cleared holds from the next request; the tariff changes', async () => {
    const { key, account_id } = await dataKey(server.services.db, 'free');
    expect((await me(key)).status).toBe(200);
    const path = `/admin/data-accounts/${account_id}`;
    expect(await json(await patch(path, { monthly_quota: 2 }))).toMatchObject({
      monthly_quota: 2,
      custom_quota: true,
      used: 1,
    });
    expect((await me(key)).status).toBe(200);
    await expectProblem(await me(key), 429, 'quota_exceeded');
    expect(await json(await patch(path, { monthly_quota: null }))).toMatchObject({
      monthly_quota: TARIFF_QUOTAS.free,
      custom_quota: false,
    });
    expect((await me(key)).status).toBe(200);
    expect(await json(await patch(path, { tariff: 'enterprise' }))).toMatchObject({
      tariff: 'enterprise',
      monthly_quota: null,
    });
    expect(await json(await me(key))).toMatchObject({ tariff: 'enterprise', monthly_quota: null });
    const [record] = await audit({ action: 'updateDataAccount', object_id: account_id });
    expect(record).toMatchObject({
      actor: admin.email,
      object_type: 'data_account',
      before: { tariff: 'free' },
      after: { tariff: 'enterprise' },
    });
  });

  it('refuses bad input with 400 and changes nothing', async () => {
    const { account_id } = await dataKey(server.services.db, 'pro');
    const path = `/admin/data-accounts/${account_id}`;
    const before = await json(await get(path));
    for (const body of [
      { tariff: 'gold' },
      { monthly_quota: -1 },
      { monthly_quota: 1.5 },
      { monthly_quota: '10' },
      { colour: 'red' },
    ]) {
      await expectProblem(await patch(path, body), 400, 'validation_failed');
    }
    await expectProblem(await send('POST', `${path}/keys`, { name: 'x'.repeat(101) }), 400, 'validation_failed');
    await expectProblem(await get('/admin/data-accounts/not-a-uuid'), 400, 'validation_failed');
    expect(await json(await get(path))).toEqual(before);
  });

  it('issues a key shown once and revokes it: 401 at once on REST and MCP', async () => {
    const { account_id } = await dataKey(server.services.db, 'pro');
    const issued = await send('POST', `/admin/data-accounts/${account_id}/keys`, { name: 'Reports' });
    expect(issued.status).toBe(201);
    const { id, key } = await json(issued);
    expect(key).toMatch(/^svc_mcp_/);
    expect((await me(key)).status).toBe(200);
    expect((await mcpCall(key)).status).toBe(200);
    const account = await json(await get(`/admin/data-accounts/${account_id}`));
    expect(account.keys[0]).toMatchObject({ id, name: 'Reports', prefix: key.slice(0, 12), revoked_at: null });
    expect(JSON.stringify(account)).not.toContain(key);

    const revoked = await send('POST', `/admin/data-keys/${id}/revoke`, undefined);
    expect(revoked.status).toBe(200);
    expect(await json(revoked)).toMatchObject({ id, account_id, revoked_at: expect.any(String) });
    expect((await me(key)).status).toBe(401);
    expect((await mcpCall(key)).status).toBe(401);
    await expectProblem(
      await send('POST', '/admin/data-keys/00000000-0000-4000-8000-000000000000/revoke', undefined),
      404,
      'not_found',
    );
    const records = await audit({ object_id: id });
    expect(records[0]).toMatchObject({ action: 'revokeDataKey', actor: admin.email, before: { revoked_at: null } });
    expect(JSON.stringify(await audit({ action: 'issueDataAccountKey', object_id: account_id }))).not.toContain(key);
  });

  it('arbiter and support read but may not change (403 forbidden, nothing changed)', async () => {
    const { key, account_id } = await dataKey(server.services.db, 'free');
    const keyId = (await json(await get(`/admin/data-accounts/${account_id}`))).keys[0].id;
    for (const who of [arbiter, support]) {
      expect((await get('/admin/data-accounts', who)).status).toBe(200);
      expect((await get(`/admin/data-accounts/${account_id}`, who)).status).toBe(200);
      await expectProblem(await patch(`/admin/data-accounts/${account_id}`, { tariff: 'pro' }, who), 403, 'forbidden');
      await expectProblem(await send('POST', `/admin/data-accounts/${account_id}/keys`, {}, who), 403, 'forbidden');
      await expectProblem(await send('POST', `/admin/data-keys/${keyId}/revoke`, undefined, who), 403, 'forbidden');
    }
    expect(await json(await get(`/admin/data-accounts/${account_id}`))).toMatchObject({
      tariff: 'free',
      keys: [{ revoked_at: null }],
    });
    expect((await me(key)).status).toBe(200);
  });
});

describe('the console pages by role', () => {
  const page = (who: TestAdministrator, path: string, form?: Record<string, string>) =>
    fetch(`${server.url}${path}`, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        Cookie: who.cookie,
        Accept: 'text/html',
        ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams({ _csrf: who.csrf, ...form }).toString() : undefined,
    });

  it('the card says how a client signs in, whose sub it gets, where logout goes; the list marks a self-registered one', async () => {
    const client = await registerClient(server);
    const changed = await patch(`/admin/sso/clients/${client.client_id}`, {
      subject_type: 'pairwise',
      post_logout_redirect_uris: 'https://client.example.com/bye',
      backchannel_logout_uri: 'https://client.example.com/logout',
    });
    expect(changed.status).toBe(200);
    const card = await (await page(admin, `/admin/view/sso-clients/${client.client_id}?lang=en`)).text();
    expect(card).toContain('with the client secret (client_secret_basic)');
    expect(card).toContain('pairwise: different for each site');
    expect(card).toContain('<code>https://client.example.com/bye</code>');
    expect(card).toContain('<code>https://client.example.com/logout</code>');
    const russian = await (await page(admin, `/admin/view/sso-clients/${client.client_id}?lang=ru`)).text();
    expect(russian).toContain('попарный: свой для каждого сайта');

    // A client that registered itself (its registration has tests of its own: mcp-oauth), written as it leaves it.
    const { client_id: agentId } = await registerClient(server, { name: 'Console agent' });
    await server.services.db.query(
      `UPDATE sso_clients SET registered_dynamically = true, token_endpoint_auth_method = 'none' WHERE client_id = $1`,
      [agentId],
    );
    const agent = await (await page(admin, `/admin/view/sso-clients/${agentId}?lang=en`)).text();
    expect(agent).toContain('registered itself (an application, RFC 7591)');
    expect(agent).toContain('none: a public client, PKCE required');
    expect(agent).toContain('the svc ID');
  });

  it('support reads the pages but neither reveals a secret nor changes anything: 403 pages that change nothing', async () => {
    const client = await registerClient(server);
    const card = await page(support, `/admin/view/sso-clients/${client.client_id}`);
    expect(card.status).toBe(200);
    const text = await card.text();
    expect(text).toContain('changes need the admin role');
    expect(text).not.toContain(client.client_secret);
    expect(text).not.toContain('/secret"');
    const revealed = await page(support, `/admin/view/sso-clients/${client.client_id}/secret`, {});
    expect(revealed.status).toBe(403);
    expect(await revealed.text()).not.toContain(client.client_secret);
    expect(await audit({ action: 'revealSsoClientSecret', object_id: client.client_id })).toEqual([]);
    const refused = await page(support, `/admin/view/sso-clients/${client.client_id}`, {
      intent: 'disable',
      confirmed: 'yes',
    });
    expect(refused.status).toBe(403);
    expect(await json(await get(`/admin/sso/clients/${client.client_id}`))).toMatchObject({ disabled: false });
    expect((await page(support, '/admin/view/data-accounts')).status).toBe(200);
  });

  it('an admin disables a client only after the confirmation, and a bad redirect URI is told in words', async () => {
    const client = await registerClient(server);
    const path = `/admin/view/sso-clients/${client.client_id}`;
    const asked = await page(admin, path, { intent: 'disable' });
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain('name="confirmed" value="yes"');
    expect(await json(await get(`/admin/sso/clients/${client.client_id}`))).toMatchObject({ disabled: false });
    const done = await page(admin, path, { intent: 'disable', confirmed: 'yes' });
    expect([done.status, done.headers.get('location')]).toEqual([303, `${path}?done=disabled`]);
    expect(await json(await get(`/admin/sso/clients/${client.client_id}`))).toMatchObject({ disabled: true });
    const bad = await page(admin, path, { intent: 'save', name: 'Same', redirect_uris: 'https://*.com/cb' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('The redirect URIs are not allowed');
    expect(await json(await get(`/admin/sso/clients/${client.client_id}`))).toMatchObject({
      name: 'Client shop',
      redirect_uris: REDIRECT_URI,
    });
  });
});
