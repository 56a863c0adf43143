// The spec's SSO flow over HTTP against the real PostgreSQL: client registration and its card, authorize with the
// cabinet token, the JSON token exchange and every error the specification and our decisions name, 20 concurrent exchanges of one code,
// expiry, secret rotation, and the marketplace's SSO client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { REDIRECT_URI, authorize, codeFor, createUser, exchange, registerClient, type Client } from '../sso-helpers.ts';

let server: TestServer;
let shortLived: TestServer;
let client: Client;
let user: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  [server, shortLived] = await Promise.all([
    startTestServer(),
    startTestServer({ env: { SSO_CODE_TTL_SECONDS: '1' } }),
  ]);
  client = await registerClient(server);
  user = await createUser(server);
});
afterAll(async () => {
  await Promise.all([server?.stop(), shortLived?.stop()]);
});

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const bearer = (token = user.token) => ({ Authorization: `Bearer ${token}` });
const exchangeBody = (code: string, fields: Record<string, string> = {}) => ({
  client_id: client.client_id,
  client_secret: client.client_secret,
  code,
  redirect_uri: REDIRECT_URI,
  ...fields,
});

async function expectProblem(response: Response, status: number, code: string): Promise<any> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const problem = await json(response);
  expect(problem).toMatchObject({ status, code });
  return problem;
}

describe('client registration', () => {
  it('registers a client: 201 with a cs_ secret that is stored sealed and hashed, never in the clear', async () => {
    const clientId = uniqueId('shop');
    const response = await post(
      `${server.url}/admin/sso/clients`,
      {
        client_id: clientId,
        name: 'Shop',
        redirect_uris: 'https://shop.example.com/cb https://*.shop.example.net/sso',
      },
      admin(),
    );
    expect(response.status).toBe(201);
    const created = await json(response);
    expect(created).toMatchObject({
      client_id: clientId,
      name: 'Shop',
      redirect_uris: 'https://shop.example.com/cb https://*.shop.example.net/sso',
    });
    expect(created.client_secret).toMatch(/^cs_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(created.created_at)).not.toBeNaN();
    const stored = await server.services.db.query('SELECT * FROM sso_clients WHERE client_id = $1', [clientId]);
    expect(JSON.stringify(stored.rows)).not.toContain(created.client_secret.slice(3));
  });

  it('answers 409 when the client_id is taken, and 401 without an administrator token', async () => {
    const body = { client_id: client.client_id, name: 'Again', redirect_uris: REDIRECT_URI };
    await expectProblem(await post(`${server.url}/admin/sso/clients`, body, admin()), 409, 'client_id_taken');
    const unauthorized = await expectProblem(
      await post(`${server.url}/admin/sso/clients`, { ...body, client_id: uniqueId('x') }),
      401,
      'unauthorized',
    );
    expect(unauthorized.detail).toBeTruthy();
  });

  it.each([
    ['*', 'a bare *'],
    ['https://*.com/cb', 'a wildcard over a public suffix'],
    ['https://*.co.uk/cb', 'a wildcard over a two-label public suffix'],
    ['https://app.*.example.com/cb', 'a wildcard elsewhere'],
    ['https://app.example.com/*', 'a wildcard in the path'],
    ['http://app.example.com/cb', 'http off loopback'],
    ['https://app.example.com/cb#part', 'a fragment'],
    ['https://app.example.com/cb https://user@app.example.com/cb', 'userinfo in the second URI'],
    ['', 'nothing'],
  ])('refuses %j (%s) with 400 naming redirect_uris', async (redirectUris) => {
    const response = await post(
      `${server.url}/admin/sso/clients`,
      { client_id: uniqueId('bad'), name: 'Bad', redirect_uris: redirectUris },
      admin(),
    );
    const problem = await expectProblem(response, 400, 'validation_failed');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain('redirect_uris');
  });

  it('shows the card with the secret, rotates it (the old one stops at once), and 404s an unknown client', async () => {
    const own = await registerClient(server);
    const card = await json(await fetch(`${server.url}/admin/sso/clients/${own.client_id}`, { headers: admin() }));
    expect(card).toMatchObject({ client_id: own.client_id, client_secret: own.client_secret, secret_rotated_at: null });

    const rotated = await json(
      await post(`${server.url}/admin/sso/clients/${own.client_id}/rotate-secret`, {}, admin()),
    );
    expect(rotated.client_secret).toMatch(/^cs_/);
    expect(rotated.client_secret).not.toBe(own.client_secret);
    expect(rotated.secret_rotated_at).toBeTruthy();
    expect(
      (await json(await fetch(`${server.url}/admin/sso/clients/${own.client_id}`, { headers: admin() }))).client_secret,
    ).toBe(rotated.client_secret);

    const code = await codeFor(server, own, user.token);
    const old = { client_id: own.client_id, client_secret: own.client_secret, code, redirect_uri: REDIRECT_URI };
    await expectProblem(await exchange(server, old), 401, 'invalid_client');
    expect((await exchange(server, { ...old, client_secret: rotated.client_secret })).status).toBe(200);

    await expectProblem(await fetch(`${server.url}/admin/sso/clients/nobody`, { headers: admin() }), 404, 'not_found');
    await expectProblem(
      await post(`${server.url}/admin/sso/clients/nobody/rotate-secret`, {}, admin()),
      404,
      'not_found',
    );
    const list = await json(await fetch(`${server.url}/admin/sso/clients`, { headers: admin() }));
    expect(list.items.find((item: { client_id: string }) => item.client_id === own.client_id)).not.toHaveProperty(
      'client_secret',
    );
  });
});

describe('authorize with the cabinet token and the JSON exchange', () => {
  it('redirects 302 with an ac_ code, the same state and iss, and the code buys the profile once', async () => {
    const response = await authorize(
      server,
      { client_id: client.client_id, redirect_uri: REDIRECT_URI, state: 'xyz 123', scope: 'profile' },
      bearer(),
    );
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe('xyz 123');
    expect(location.searchParams.get('iss')).toBe(server.url);
    const code = location.searchParams.get('code')!;
    expect(code).toMatch(/^ac_[A-Za-z0-9_-]{43}$/);

    const profile = await exchange(server, exchangeBody(code));
    expect(profile.status).toBe(200);
    expect(profile.headers.get('cache-control')).toBe('no-store');
    const body = await json(profile);
    const org = await server.services.db.query('SELECT id, name FROM organizations WHERE owner_id = $1 AND personal', [
      user.id,
    ]);
    expect(body).toEqual({ svc_id: user.id, email: user.email, name: user.name, org: org.rows[0] });

    const again = await expectProblem(await exchange(server, exchangeBody(code)), 400, 'code_already_used');
    expect(again.detail).toMatch(/already used/);
  });

  it('stores codes only as hashes', async () => {
    const code = await codeFor(server, client, user.token);
    const rows = await server.services.db.query('SELECT * FROM sso_codes WHERE client_id = $1', [client.client_id]);
    expect(JSON.stringify(rows.rows)).not.toContain(code.slice(3));
  });

  it('keeps a query of the registered URI and adds the parameters after it', async () => {
    const withQuery = await registerClient(server, { redirect_uris: 'https://client.example.com/cb?tenant=a%20b' });
    const response = await authorize(
      server,
      { client_id: withQuery.client_id, redirect_uri: 'https://client.example.com/cb?tenant=a%20b', state: 's' },
      bearer(),
    );
    expect(response.headers.get('location')).toMatch(
      /^https:\/\/client\.example\.com\/cb\?tenant=a%20b&code=ac_[^&]+&state=s&iss=/,
    );
  });

  it('answers a wildcard client on the subdomain that asked', async () => {
    const wildcard = await registerClient(server, { redirect_uris: 'https://*.stores.example.com/sso' });
    const response = await authorize(
      server,
      { client_id: wildcard.client_id, redirect_uri: 'https://kazan.stores.example.com/sso', state: 's' },
      bearer(),
    );
    expect(response.status).toBe(302);
    expect(new URL(response.headers.get('location')!).host).toBe('kazan.stores.example.com');
    const refused = await authorize(
      server,
      { client_id: wildcard.client_id, redirect_uri: 'https://stores.example.com/sso', state: 's' },
      bearer(),
    );
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();
  });

  it('answers 401 for a cabinet token that is not valid', async () => {
    const response = await authorize(
      server,
      { client_id: client.client_id, redirect_uri: REDIRECT_URI, state: 's' },
      bearer('ct_not-a-token'),
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer .*invalid_token/);
    expect(response.headers.get('location')).toBeNull();
    const params = { client_id: client.client_id, redirect_uri: REDIRECT_URI, state: 's' };
    await expectProblem(
      await authorize(server, params, { ...bearer('ct_not-a-token'), Accept: 'application/json' }),
      401,
      'unauthorized',
    );
  });
});

describe('authorize errors before the redirect is checked are 400 pages, never redirects', () => {
  const cases: [string, () => Record<string, string | undefined>, string][] = [
    [
      'an unknown client_id',
      () => ({ client_id: 'no-such-client', redirect_uri: REDIRECT_URI, state: 's' }),
      'unknown_client',
    ],
    ['no client_id', () => ({ redirect_uri: REDIRECT_URI, state: 's' }), 'unknown_client'],
    [
      'a redirect_uri the client did not register',
      () => ({ client_id: client.client_id, redirect_uri: 'https://evil.example.org/callback', state: 's' }),
      'redirect_uri_not_allowed',
    ],
    [
      'a look-alike redirect_uri',
      () => ({
        client_id: client.client_id,
        redirect_uri: 'https://client.example.com@evil.example.org/callback',
        state: 's',
      }),
      'redirect_uri_not_allowed',
    ],
    [
      'a traversing redirect_uri',
      () => ({ client_id: client.client_id, redirect_uri: 'https://client.example.com/callback/..;/x', state: 's' }),
      'redirect_uri_not_allowed',
    ],
    ['no redirect_uri', () => ({ client_id: client.client_id, state: 's' }), 'redirect_uri_not_allowed'],
    ['no state', () => ({ client_id: client.client_id, redirect_uri: REDIRECT_URI }), 'state_required'],
    [
      'an empty state',
      () => ({ client_id: client.client_id, redirect_uri: REDIRECT_URI, state: '' }),
      'state_required',
    ],
  ];

  it.each(cases)('%s: a 400 page for browsers', async (_name, params, code) => {
    const response = await authorize(server, params(), { ...bearer(), Accept: 'text/html' });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await response.text()).toContain(`data-code="${code}"`);
  });

  it.each(cases)('%s: problem+json for a caller that asks for JSON', async (_name, params, code) => {
    await expectProblem(await authorize(server, params(), { ...bearer(), Accept: 'application/json' }), 400, code);
  });

  it('refuses a repeated state or redirect_uri', async () => {
    const url = `${server.url}/sso/authorize?client_id=${client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=a&state=b`;
    expect((await fetch(url, { redirect: 'manual', headers: bearer() })).status).toBe(400);
    const twice = `${server.url}/sso/authorize?client_id=${client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&redirect_uri=https%3A%2F%2Fevil.example.org%2F&state=a`;
    const response = await fetch(twice, { redirect: 'manual', headers: bearer() });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  it('sends later errors to the checked redirect URI with state and iss (RFC 6749 §4.1.2.1)', async () => {
    const response = await authorize(
      server,
      { client_id: client.client_id, redirect_uri: REDIRECT_URI, state: 's1', response_type: 'token' },
      bearer(),
    );
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      error: 'unsupported_response_type',
      state: 's1',
      iss: server.url,
    });
    expect(location.searchParams.has('code')).toBe(false);

    const noLogin = await authorize(server, {
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      state: 's2',
      prompt: 'none',
    });
    expect(new URL(noLogin.headers.get('location')!).searchParams.get('error')).toBe('login_required');
  });
});

describe('token exchange errors', () => {
  it('400 code_expired after SSO_CODE_TTL_SECONDS', async () => {
    const own = await registerClient(shortLived);
    const code = await codeFor(shortLived, own, user.token);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const body = { client_id: own.client_id, client_secret: own.client_secret, code, redirect_uri: REDIRECT_URI };
    await expectProblem(await exchange(shortLived, body), 400, 'code_expired');
  });

  it('400 redirect_uri_mismatch when redirect_uri differs from the authorize step, and the code still works after', async () => {
    const both = await registerClient(server, { redirect_uris: `${REDIRECT_URI} https://client.example.com/other` });
    const code = await codeFor(server, both, user.token);
    const body = { client_id: both.client_id, client_secret: both.client_secret, code };
    await expectProblem(
      await exchange(server, { ...body, redirect_uri: 'https://client.example.com/other' }),
      400,
      'redirect_uri_mismatch',
    );
    await expectProblem(
      await exchange(server, { ...body, redirect_uri: `${REDIRECT_URI}/` }),
      400,
      'redirect_uri_mismatch',
    );
    expect((await exchange(server, { ...body, redirect_uri: REDIRECT_URI })).status).toBe(200);
  });

  it("400 invalid_code for an unknown code or another client's code", async () => {
    await expectProblem(await exchange(server, exchangeBody('ac_unknown')), 400, 'invalid_code');
    const other = await registerClient(server);
    const code = await codeFor(server, other, user.token);
    await expectProblem(await exchange(server, exchangeBody(code)), 400, 'invalid_code');
  });

  it('401 invalid_client for a wrong secret or an unknown client, without spending the code', async () => {
    const code = await codeFor(server, client, user.token);
    await expectProblem(
      await exchange(server, exchangeBody(code, { client_secret: `${client.client_secret}x` })),
      401,
      'invalid_client',
    );
    await expectProblem(
      await exchange(server, exchangeBody(code, { client_id: 'no-such-client' })),
      401,
      'invalid_client',
    );
    expect((await exchange(server, exchangeBody(code))).status).toBe(200);
  });

  it('400 validation_failed for a body without the fields', async () => {
    const problem = await expectProblem(
      await exchange(server, { client_id: client.client_id }),
      400,
      'validation_failed',
    );
    expect(problem.errors.map((error: { path: string }) => error.path)).toEqual(
      expect.arrayContaining(['client_secret', 'code', 'redirect_uri']),
    );
  });

  it('of 20 concurrent exchanges of one code exactly one succeeds; the others are told it is already used', async () => {
    const code = await codeFor(server, client, user.token);
    const responses = await Promise.all(Array.from({ length: 20 }, () => exchange(server, exchangeBody(code))));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    const losers = await Promise.all(responses.filter((response) => response.status !== 200).map(json));
    expect(losers).toHaveLength(19);
    for (const problem of losers) expect(problem).toMatchObject({ status: 400, code: 'code_already_used' });
  });
});

describe('the marketplace SSO client', () => {
  it('is made when a marketplace is activated with sso_redirect_uri, answered as sso_client, and stops with the marketplace', async () => {
    const response = await post(
      `${server.url}/admin/marketplaces`,
      { name: 'SSO shop', sso_redirect_uri: 'https://sso-shop.example.com/auth' },
      admin(),
    );
    expect(response.status).toBe(201);
    const marketplace = await json(response);
    expect(marketplace.sso_client).toMatchObject({
      client_id: marketplace.id,
      name: 'SSO shop',
      redirect_uris: 'https://sso-shop.example.com/auth',
      marketplace_id: marketplace.id,
    });
    expect(marketplace.sso_client.client_secret).toMatch(/^cs_/);

    const params = { client_id: marketplace.id, redirect_uri: 'https://sso-shop.example.com/auth', state: 's' };
    const redirected = await authorize(server, params, bearer());
    expect(redirected.status).toBe(302);
    const code = new URL(redirected.headers.get('location')!).searchParams.get('code')!;
    const body = {
      client_id: marketplace.id,
      client_secret: marketplace.sso_client.client_secret,
      code,
      redirect_uri: params.redirect_uri,
    };
    expect((await json(await exchange(server, body))).svc_id).toBe(user.id);

    await server.services.db.query('UPDATE marketplaces SET active = false WHERE id = $1', [marketplace.id]);
    expect((await authorize(server, params, { ...bearer(), Accept: 'application/json' })).status).toBe(400);
  });

  it('answers sso_client null without sso_redirect_uri, and refuses a wildcard or http one with nothing made', async () => {
    expect(
      (await json(await post(`${server.url}/admin/marketplaces`, { name: 'Plain shop' }, admin()))).sso_client,
    ).toBeNull();
    for (const uri of ['https://*.wild.example.com/auth', 'http://shop.example.com/auth']) {
      // A name of its own: other files make marketplaces in the same database at the same time.
      const name = uniqueId('Bad shop');
      await expectProblem(
        await post(`${server.url}/admin/marketplaces`, { name, sso_redirect_uri: uri }, admin()),
        400,
        'validation_failed',
      );
      expect(
        (await server.services.db.query('SELECT count(*)::int AS n FROM marketplaces WHERE name = $1', [name])).rows[0]
          .n,
      ).toBe(0);
    }
  });
});
