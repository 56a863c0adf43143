// Single sign-on that signs in once, driven as a browser without JavaScript over real HTTP (cookies kept, redirects
// not followed): the SSO form starts the browser's cabinet session and a second client needs no password;
// prompt=login and max_age force the form, prompt=none never shows a page; consent once per client (none for a
// marketplace's own client), Cancel → access_denied; the connected sites (JSON and page) and revoking one, after which
// consent is asked again and the client's access token is refused; and openid-client completing prompt=none.
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/secrets.ts';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import {
  Browser,
  PASSWORD,
  REDIRECT_URI,
  authorizeUrl,
  basic,
  createUser,
  exchange,
  hiddenFields,
  oidcToken,
  registerClient,
  type Client,
  type Reply,
} from '../sso-helpers.ts';

let server: TestServer;
let shop: Client;
let forum: Client;
let marketplaceClientId: string;

beforeAll(async () => {
  server = await startTestServer();
  shop = await registerClient(server, { name: 'Bike Shop' });
  forum = await registerClient(server, { name: 'Cycling Forum' });
  const admin = { Authorization: `Bearer ${server.adminToken}` };
  const marketplace = await json(
    await post(
      `${server.url}/admin/marketplaces`,
      { name: 'Auto Market', mode: 'sandbox', sso_redirect_uri: REDIRECT_URI },
      admin,
    ),
  );
  marketplaceClientId = marketplace.sso_client.client_id;
});
afterAll(async () => {
  await server?.stop();
});

type User = Awaited<ReturnType<typeof createUser>>;
const params = (client: { client_id: string }, extra: Record<string, string> = {}) => ({
  client_id: client.client_id,
  redirect_uri: REDIRECT_URI,
  state: 'st-1',
  ...extra,
});
const at = (reply: Reply) => new URL(reply.location!, server.url);
const toClient = (reply: Reply) => {
  expect([302, 303]).toContain(reply.status);
  const location = at(reply);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  return location.searchParams;
};

/** Opens the authorize URL without a session and signs in on the form: the 303 that follows. */
async function signInOnForm(
  browser: Browser,
  user: User,
  client: { client_id: string },
  extra: Record<string, string> = {},
) {
  const form = await browser.get(authorizeUrl(server, params(client, extra)));
  expect(form.status).toBe(200);
  expect(form.text).toContain('name="password"');
  return browser.post('/sso/authorize', { ...hiddenFields(form.text), email: user.email, password: PASSWORD });
}

/** On the consent page a redirect led to, presses a button: the 303 that follows. */
async function decide(browser: Browser, consentRedirect: Reply, decision: 'allow' | 'cancel') {
  expect(at(consentRedirect).pathname).toBe('/sso/consent');
  const page = await browser.get(consentRedirect.location!);
  expect(page.status).toBe(200);
  return browser.post('/sso/consent', { ...hiddenFields(page.text), decision });
}

/** A browser signed in through the form with the shop allowed. */
async function signedInBrowser(user: User) {
  const browser = new Browser(server);
  const code = toClient(await decide(browser, await signInOnForm(browser, user, shop), 'allow')).get('code');
  expect(code).toMatch(/^ac_/);
  return browser;
}

async function sessionStart(browser: Browser): Promise<Date> {
  const result = await server.services.db.query('SELECT created_at FROM cabinet_sessions WHERE token_hash = $1', [
    hashSecret(browser.cookies.get('svc_session')!),
  ]);
  return result.rows[0].created_at;
}

async function oidcTokens(client: Client, code: string) {
  const response = await oidcToken(
    server,
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
    { Authorization: basic(client.client_id, client.client_secret) },
  );
  expect(response.status).toBe(200);
  return json(response);
}

const userinfo = (accessToken: string) =>
  fetch(`${server.url}/sso/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } });
const sites = async (user: User) =>
  (
    await json(
      await fetch(`${server.url}/cabinet/connected-sites`, { headers: { Authorization: `Bearer ${user.token}` } }),
    )
  ).items;
const revoke = (user: User, clientId: string) =>
  post(
    `${server.url}/cabinet/connected-sites/${encodeURIComponent(clientId)}/revoke`,
    {},
    { Authorization: `Bearer ${user.token}` },
  );

describe('one sign-in for every client', () => {
  it('starts the browser session on the form; a second client needs no password, and the first none again', async () => {
    const user = await createUser(server, 'Irina Petrova');
    const browser = new Browser(server);
    const signedIn = await signInOnForm(browser, user, shop);
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.getSetCookie().find((line) => line.startsWith('svc_session='));
    expect(cookie).toMatch(/^svc_session=ct_[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax/);

    let answer = toClient(await decide(browser, signedIn, 'allow'));
    expect(answer.get('state')).toBe('st-1');
    expect(answer.get('iss')).toBe(server.url);
    const profile = await exchange(server, {
      client_id: shop.client_id,
      client_secret: shop.client_secret,
      code: answer.get('code'),
      redirect_uri: REDIRECT_URI,
    });
    expect(await json(profile)).toMatchObject({ svc_id: user.id, email: user.email, name: 'Irina Petrova' });

    // The forum: no form, only its consent; then the code.
    const forumStart = await browser.get(authorizeUrl(server, params(forum, { state: 'st-2' })));
    expect(forumStart.status).toBe(302);
    answer = toClient(await decide(browser, forumStart, 'allow'));
    expect(answer.get('state')).toBe('st-2');
    const tokens = await oidcTokens(forum, answer.get('code')!);
    expect(decodeJwt(tokens.id_token)).toMatchObject({
      sub: user.id,
      name: 'Irina Petrova',
      auth_time: Math.floor((await sessionStart(browser)).getTime() / 1000),
    });

    // Back at the shop: straight to it with a code.
    answer = toClient(await browser.get(authorizeUrl(server, params(shop, { state: 'st-3' }))));
    expect(answer.get('state')).toBe('st-3');
    expect(answer.get('code')).toMatch(/^ac_/);
  });

  it('asks for the password again with prompt=login or a max_age the session is older than, and then continues', async () => {
    const user = await createUser(server);
    const browser = await signedInBrowser(user);
    const oldToken = browser.cookies.get('svc_session')!;
    const before = await sessionStart(browser);

    const login = await browser.get(authorizeUrl(server, params(shop, { prompt: 'login' })));
    expect(login.status).toBe(200);
    expect(login.text).toContain('name="password"');
    expect((await browser.get(authorizeUrl(server, params(shop, { max_age: '0' })))).status).toBe(200);
    expect(toClient(await browser.get(authorizeUrl(server, params(shop, { max_age: '3600' })))).get('code')).toMatch(
      /^ac_/,
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await browser.get(authorizeUrl(server, params(shop, { max_age: '1' })))).status).toBe(200);
    expect(
      toClient(await browser.get(authorizeUrl(server, params(shop, { state: 'x', max_age: 'soon' })))).get('error'),
    ).toBe('invalid_request');

    // Signing in on that form replaces the browser's session; the shop was allowed, so the code follows at once.
    const again = await browser.post('/sso/authorize', {
      ...hiddenFields(login.text),
      email: user.email,
      password: PASSWORD,
    });
    const answer = toClient(again);
    expect(browser.cookies.get('svc_session')).not.toBe(oldToken);
    const after = await sessionStart(browser);
    expect(after.getTime()).toBeGreaterThan(before.getTime());
    const tokens = await oidcTokens(shop, answer.get('code')!);
    expect(decodeJwt(tokens.id_token).auth_time).toBe(Math.floor(after.getTime() / 1000));
    const stale = await fetch(authorizeUrl(server, params(shop)), {
      redirect: 'manual',
      headers: { Cookie: `svc_session=${oldToken}`, Accept: 'text/html' },
    });
    expect(stale.status).toBe(200); // the old session is gone: the form
  });

  it('never shows a page with prompt=none: login_required without a session, consent_required before consent, else a code', async () => {
    const user = await createUser(server);
    let answer = toClient(await new Browser(server).get(authorizeUrl(server, params(shop, { prompt: 'none' }))));
    expect(answer.get('error')).toBe('login_required');
    expect(answer.get('state')).toBe('st-1');
    expect(answer.get('iss')).toBe(server.url);

    const browser = await signedInBrowser(user);
    answer = toClient(await browser.get(authorizeUrl(server, params(shop, { prompt: 'none' }))));
    expect(answer.get('error')).toBeNull();
    expect(answer.get('code')).toMatch(/^ac_/);
    expect(toClient(await browser.get(authorizeUrl(server, params(forum, { prompt: 'none' })))).get('error')).toBe(
      'consent_required',
    );
    expect(
      toClient(await browser.get(authorizeUrl(server, params(shop, { prompt: 'none', max_age: '0' })))).get('error'),
    ).toBe('login_required');
    expect(toClient(await browser.get(authorizeUrl(server, params(shop, { prompt: 'none login' })))).get('error')).toBe(
      'invalid_request',
    );
  });
});

describe('consent', () => {
  it('names the service, the client, where it returns and what it receives; in Russian too', async () => {
    const user = await createUser(server, 'Pavel <Admin>');
    const browser = new Browser(server);
    const redirect = await signInOnForm(browser, user, shop);
    const page = await browser.get(redirect.location!);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toMatch(
      /form-action 'self' https:\/\/client\.example\.com(;|$)/,
    );
    expect(page.text).toContain('Let Bike Shop sign you in with svc ID?');
    expect(page.text).toContain('Bike Shop (client.example.com) will receive:');
    expect(page.text).toContain(`You are signed in to svc ID as ${user.email}.`);
    for (const item of [
      'your svc ID',
      `your e-mail address: ${user.email}`,
      'your name: Pavel &#60;Admin&#62;',
      'the name you take part in deals under as a private person',
    ])
      expect(page.text).toContain(item);
    expect(page.text).toMatch(/<button type="submit" name="decision" value="allow">Allow<\/button>/);
    expect(page.text).toMatch(/<button type="submit" name="decision" value="cancel"[^>]*>Cancel<\/button>/);

    const ru = await browser.get(`${redirect.location!}&lang=ru`);
    // The site's name in quotes, so the question reads as one sentence whatever the name.
    expect(ru.text).toContain('Разрешить сайту «Bike Shop» вход через svc ID?');
    expect(ru.text).not.toContain('аккаунт');
    expect(ru.text).toContain('Разрешить</button>');
    expect(ru.text).toContain('Отмена</button>');
  });

  it('is asked once per client; Cancel sends access_denied and allows nothing', async () => {
    const user = await createUser(server);
    const browser = new Browser(server);
    const first = await signInOnForm(browser, user, shop);
    const cancelled = toClient(await decide(browser, first, 'cancel'));
    expect(cancelled.get('error')).toBe('access_denied');
    expect(cancelled.get('state')).toBe('st-1');
    expect(cancelled.get('code')).toBeNull();
    expect(await sites(user)).toEqual([]);

    const second = await browser.get(authorizeUrl(server, params(shop)));
    expect(at(second).pathname).toBe('/sso/consent'); // still not allowed: asked again, no password
    expect(toClient(await decide(browser, second, 'allow')).get('code')).toMatch(/^ac_/);
    expect(toClient(await browser.get(authorizeUrl(server, params(shop)))).get('code')).toMatch(/^ac_/);
  });

  it('refuses a decision without the session form token', async () => {
    const user = await createUser(server);
    const browser = new Browser(server);
    const redirect = await signInOnForm(browser, user, shop);
    const page = await browser.get(redirect.location!);
    const { _csrf: _dropped, ...fields } = hiddenFields(page.text);
    const refused = await browser.post('/sso/consent', { ...fields, decision: 'allow' });
    expect(refused.status).toBe(403);
    expect(refused.location).toBeNull();
    expect(await sites(user)).toEqual([]);
  });

  it("is skipped for a marketplace's own client, which is still listed as connected", async () => {
    const user = await createUser(server);
    const browser = new Browser(server);
    const answer = toClient(await signInOnForm(browser, user, { client_id: marketplaceClientId }));
    expect(answer.get('code')).toMatch(/^ac_/);
    expect((await sites(user)).map((site: { client_id: string }) => site.client_id)).toEqual([marketplaceClientId]);
  });

  it('is not asked with a cabinet token in Authorization (the spec flow)', async () => {
    const user = await createUser(server);
    const response = await fetch(authorizeUrl(server, params(forum)), {
      redirect: 'manual',
      headers: { Authorization: `Bearer ${user.token}` },
    });
    expect(response.status).toBe(302);
    expect(new URL(response.headers.get('location')!).searchParams.get('code')).toMatch(/^ac_/);
  });
});

describe('connected sites', () => {
  it('lists the sites with first and last sign-in; revoking asks consent again and refuses the access token', async () => {
    const user = await createUser(server);
    const browser = await signedInBrowser(user);
    const forumCode = toClient(
      await decide(browser, await browser.get(authorizeUrl(server, params(forum))), 'allow'),
    ).get('code')!;
    const forumAccess = (await oidcTokens(forum, forumCode)).access_token;
    let listed = await sites(user);
    expect(listed.map((site: { name: string }) => site.name)).toEqual(['Cycling Forum', 'Bike Shop']);
    const firstShop = listed[1];
    expect(Object.keys(firstShop).sort()).toEqual(['client_id', 'first_at', 'last_at', 'name']);

    const shopCode = toClient(await browser.get(authorizeUrl(server, params(shop)))).get('code')!;
    const shopAccess = (await oidcTokens(shop, shopCode)).access_token;
    listed = await sites(user);
    expect(listed[0]).toMatchObject({ client_id: shop.client_id, first_at: firstShop.first_at });
    expect(Date.parse(listed[0].last_at)).toBeGreaterThan(Date.parse(firstShop.last_at));
    // The browser session answers the list too.
    const viaCookie = await fetch(`${server.url}/cabinet/connected-sites`, {
      headers: { Cookie: `svc_session=${browser.cookies.get('svc_session')}` },
    });
    expect((await json(viaCookie)).items).toHaveLength(2);

    expect((await userinfo(forumAccess)).status).toBe(200);
    const revoked = await revoke(user, forum.client_id);
    expect(revoked.status).toBe(200);
    expect(await json(revoked)).toMatchObject({
      client_id: forum.client_id,
      name: 'Cycling Forum',
      revoked_at: expect.any(String),
    });
    expect((await userinfo(forumAccess)).status).toBe(401);
    expect((await userinfo(shopAccess)).status).toBe(200);
    expect((await sites(user)).map((site: { client_id: string }) => site.client_id)).toEqual([shop.client_id]);
    expect(at(await browser.get(authorizeUrl(server, params(forum)))).pathname).toBe('/sso/consent');

    expect((await revoke(user, forum.client_id)).status).toBe(404);
    expect((await revoke(user, 'no-such-client')).status).toBe(404);
    expect((await post(`${server.url}/cabinet/connected-sites/${shop.client_id}/revoke`, {})).status).toBe(401);
  });

  it("expires the client's unused codes on revoking", async () => {
    const user = await createUser(server);
    const browser = await signedInBrowser(user);
    const code = toClient(await browser.get(authorizeUrl(server, params(shop)))).get('code')!;
    expect((await revoke(user, shop.client_id)).status).toBe(200);
    const late = await exchange(server, {
      client_id: shop.client_id,
      client_secret: shop.client_secret,
      code,
      redirect_uri: REDIRECT_URI,
    });
    expect(late.status).toBe(400);
    expect((await json(late)).code).toBe('code_expired');
  });

  it('has a page that lists them and disconnects one after a confirmation, in words', async () => {
    const user = await createUser(server);
    const browser = await signedInBrowser(user);
    const list = await browser.get('/cabinet/view/connected-sites');
    expect(list.status).toBe(200);
    expect(list.text).toContain('<h3>Bike Shop</h3>');
    const disconnect = `/cabinet/view/connected-sites/${shop.client_id}/revoke`;
    expect(list.text).toContain(`href="${disconnect}"`);

    const confirm = await browser.get(disconnect);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Disconnect Bike Shop?');
    const fields = hiddenFields(confirm.text);
    expect(fields.confirmed).toBe('yes');
    expect((await browser.post(disconnect, { ...fields, _csrf: 'forged' })).status).toBe(403);
    // A form without the confirmation gets the confirmation page; nothing is disconnected yet.
    expect((await browser.post(disconnect, { _csrf: fields._csrf })).text).toContain('Disconnect Bike Shop?');
    expect(await sites(user)).toHaveLength(1);

    const done = await browser.post(disconnect, fields);
    expect(done.status).toBe(303);
    const after = await browser.get(done.location!);
    expect(after.text).toContain('Bike Shop is disconnected.');
    expect(after.text).not.toContain('<h3>Bike Shop</h3>');
    expect(after.text).toContain('You have not signed in to any site with svc ID yet.');
    expect(await sites(user)).toEqual([]);

    const again = await browser.post(disconnect, fields);
    expect(again.status).toBe(404);
    expect(again.text).toContain('This site is not connected to your account');
    expect((await browser.get('/cabinet/view/connected-sites?lang=ru')).text).toContain(
      'Вы ещё не входили ни на один сайт через svc ID.',
    );
    const anonymous = await new Browser(server).get('/cabinet/view/connected-sites');
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toContain('/cabinet/sign-in?next=');
  });
});

describe('openid-client, unmodified', () => {
  it('completes a flow with prompt=none after a signed-in session, and reads login_required without one', async () => {
    const user = await createUser(server, 'Olga Smirnova');
    const browser = await signedInBrowser(user);
    const config = await oidc.discovery(
      new URL(server.url),
      shop.client_id,
      undefined,
      oidc.ClientSecretBasic(shop.client_secret),
      {
        execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
      },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid email profile org',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      prompt: 'none',
    });
    const callback = at(await browser.get(url.href));
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()).toMatchObject({
      sub: user.id,
      email: user.email,
      name: 'Olga Smirnova',
      auth_time: Math.floor((await sessionStart(browser)).getTime() / 1000),
    });
    expect(await oidc.fetchUserInfo(config, tokens.access_token, user.id)).toMatchObject({
      name: 'Olga Smirnova',
      org: { name: 'Olga Smirnova' },
    });

    const anonymous = at(await new Browser(server).get(url.href));
    const failure = await oidc
      .authorizationCodeGrant(config, anonymous, { pkceCodeVerifier: verifier, expectedState: state })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(oidc.AuthorizationResponseError);
    expect((failure as oidc.AuthorizationResponseError).error).toBe('login_required');
  });
});
