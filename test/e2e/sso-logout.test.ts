// Issue 25's logout and privacy through openid-client (unmodified) where it has the call: public clients (PKCE only,
// no secret), pairwise subject identifiers, RP-initiated logout at the end_session_endpoint, and back-channel logout
// tokens POSTed to a local receiver after the person signs out, retried when the receiver fails.
import * as oidc from 'openid-client';
import { SignJWT, createRemoteJWKSet, decodeJwt, generateKeyPair, jwtVerify, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedDigest } from '../../src/secrets.ts';
import { currentSigningKey } from '../../src/sso/signing-keys.ts';
import { queueBackchannelLogout, startLogoutDrainer, type LogoutDrainer } from '../../src/sso/backchannel.ts';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import { PASSWORD, createUser, exchange, hiddenFields, oidcToken, type Client } from '../sso-helpers.ts';
import { uniqueId } from '../helpers.ts';

let server: TestServer;
let drainer: LogoutDrainer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  // Retries of failed deliveries after about a second (the webhooks' setting), not half a minute.
  server = await startTestServer({ env: { WEBHOOK_RETRY_BASE_SECONDS: '1', WEBHOOK_TIMEOUT_SECONDS: '2' } });
  drainer = startLogoutDrainer(server.services);
});
afterAll(async () => {
  await drainer?.stop();
  await Promise.all(receivers.map((receiver) => receiver.stop()));
  await server?.stop();
});

type User = Awaited<ReturnType<typeof createUser>>;
type Registered = Client & {
  token_endpoint_auth_method: string;
  subject_type: string;
  post_logout_redirect_uris: string;
  backchannel_logout_uri: string | null;
};

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });

async function register(fields: Record<string, unknown>): Promise<Registered> {
  const redirect = (fields.redirect_uris as string | undefined) ?? 'https://shop.example.com/callback';
  const response = await post(
    `${server.url}/admin/sso/clients`,
    { client_id: uniqueId('client'), name: 'Logout shop', redirect_uris: redirect, ...fields },
    admin(),
  );
  expect(response.status, await response.clone().text()).toBe(201);
  return json(response);
}

const redirectOf = (client: Client) => client.redirect_uris.split(' ')[0];

async function configuration(client: Registered) {
  const auth =
    client.token_endpoint_auth_method === 'none' ? oidc.None() : oidc.ClientSecretBasic(client.client_secret);
  return oidc.discovery(new URL(server.url), client.client_id, undefined, auth, {
    execute: [oidc.allowInsecureRequests],
  });
}

/** A PKCE sign-in through openid-client, the browser leg with the user's cabinet token (which records the grant). */
async function signIn(client: Registered, user: User, scope = 'openid email offline_access') {
  const config = await configuration(client);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectOf(client),
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
  expect(response.status).toBe(302);
  const tokens = await oidc.authorizationCodeGrant(config, new URL(response.headers.get('location')!), {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  return { config, tokens, claims: tokens.claims()! };
}

/** A code for the client, through the browser leg alone (no PKCE unless asked). */
async function code(client: Client, user: User, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectOf(client),
    state: 's',
    ...extra,
  });
  const response = await fetch(`${server.url}/sso/authorize?${query}`, {
    redirect: 'manual',
    headers: { Authorization: `Bearer ${user.token}` },
  });
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location')!).searchParams.get('code')!;
}

const cookie = (user: User) => ({ Cookie: `svc_session=${user.token}` });
const userinfoStatus = async (accessToken: string) =>
  (await fetch(`${server.url}/sso/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } })).status;

describe('discovery', () => {
  it('names the end_session_endpoint, back-channel logout, pairwise subjects and public clients; RFC 8414 has the same document', async () => {
    const metadata = await json(await fetch(`${server.url}/.well-known/openid-configuration`));
    expect(metadata).toMatchObject({
      end_session_endpoint: `${server.url}/sso/oidc/logout`,
      backchannel_logout_supported: true,
      subject_types_supported: ['public', 'pairwise'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    });
    const rfc8414 = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    expect(rfc8414.status).toBe(200);
    expect(await json(rfc8414)).toEqual(metadata);
  });
});

describe('client registration', () => {
  it('keeps the new fields, with defaults, and changes them with PATCH', async () => {
    const plain = await register({});
    expect(plain).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      subject_type: 'public',
      post_logout_redirect_uris: '',
      backchannel_logout_uri: null,
    });
    const changed = await fetch(`${server.url}/admin/sso/clients/${plain.client_id}`, {
      method: 'PATCH',
      headers: { ...admin(), 'Content-Type': 'application/json' },
      body: JSON.stringify({
        subject_type: 'pairwise',
        post_logout_redirect_uris: 'https://shop.example.com/bye http://127.0.0.1:9/bye',
        backchannel_logout_uri: 'https://shop.example.com/backchannel',
      }),
    });
    expect(changed.status).toBe(200);
    expect(await json(changed)).toMatchObject({
      subject_type: 'pairwise',
      post_logout_redirect_uris: 'https://shop.example.com/bye http://127.0.0.1:9/bye',
      backchannel_logout_uri: 'https://shop.example.com/backchannel',
    });
    const cleared = await fetch(`${server.url}/admin/sso/clients/${plain.client_id}`, {
      method: 'PATCH',
      headers: { ...admin(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ backchannel_logout_uri: null }),
    });
    expect(await json(cleared)).toMatchObject({ backchannel_logout_uri: null, subject_type: 'pairwise' });
  });

  it.each([
    ['a wildcard post-logout URI', { post_logout_redirect_uris: 'https://*.shop.example.com/bye' }],
    ['plain http off the loopback', { post_logout_redirect_uris: 'http://shop.example.com/bye' }],
    ['a fragment', { backchannel_logout_uri: 'https://shop.example.com/bc#x' }],
    ['an unknown auth method', { token_endpoint_auth_method: 'private_key_jwt' }],
    ['an unknown subject type', { subject_type: 'secret' }],
  ])('refuses %s with 400 naming the field', async (_, fields) => {
    const response = await post(
      `${server.url}/admin/sso/clients`,
      { client_id: uniqueId('client'), name: 'Bad', redirect_uris: 'https://shop.example.com/cb', ...fields },
      admin(),
    );
    expect(response.status).toBe(400);
    expect(JSON.stringify(await json(response))).toContain(Object.keys(fields)[0]);
  });
});

describe('public clients', () => {
  it('complete a PKCE sign-in through openid-client without a secret, and refresh without one', async () => {
    const app = await register({ token_endpoint_auth_method: 'none' });
    const user = await createUser(server);
    const { config, tokens, claims } = await signIn(app, user);
    expect(claims.sub).toBe(user.id);
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(await userinfoStatus(refreshed.access_token)).toBe(200);
  });

  it('are refused without PKCE: at authorize without a challenge, at the exchange without a verifier', async () => {
    const app = await register({ token_endpoint_auth_method: 'none' });
    const user = await createUser(server);
    const noChallenge = await fetch(
      `${server.url}/sso/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: redirectOf(app), state: 's' })}`,
      { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } },
    );
    expect(noChallenge.status).toBe(302);
    const refused = new URL(noChallenge.headers.get('location')!).searchParams;
    expect(refused.get('error')).toBe('invalid_request');
    expect(refused.get('code')).toBeNull();

    const challenge = { code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()) };
    const pkceCode = () => code(app, user, { ...challenge, code_challenge_method: 'S256' });
    const form = (code: string) => ({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectOf(app),
      client_id: app.client_id,
    });
    const withoutVerifier = await oidcToken(server, form(await pkceCode()));
    expect(withoutVerifier.status).toBe(400);
    expect(await json(withoutVerifier)).toMatchObject({ error: 'invalid_grant', code: 'invalid_code_verifier' });

    const withSecret = await oidcToken(server, { ...form(await pkceCode()), client_secret: app.client_secret });
    expect(withSecret.status).toBe(401);
    expect(await json(withSecret)).toMatchObject({ error: 'invalid_client' });
  });

  it('do not let a confidential client leave out its secret', async () => {
    const shop = await register({});
    const user = await createUser(server);
    const verifier = oidc.randomPKCECodeVerifier();
    const response = await oidcToken(server, {
      grant_type: 'authorization_code',
      code: await code(shop, user, {
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
      redirect_uri: redirectOf(shop),
      client_id: shop.client_id,
      code_verifier: verifier,
    });
    expect(response.status).toBe(401);
    expect(await json(response)).toMatchObject({ error: 'invalid_client' });
  });
});

describe('pairwise subjects', () => {
  it('differ across sites, stay the same across sign-ins, reach userinfo and introspection; /sso/token keeps svc_id', async () => {
    const [a, b] = await Promise.all([
      register({ subject_type: 'pairwise', redirect_uris: 'https://a-shop.example.com/cb' }),
      register({ subject_type: 'pairwise', redirect_uris: 'https://b-shop.example.com/cb' }),
    ]);
    const user = await createUser(server);
    const first = await signIn(a, user);
    const again = await signIn(a, user);
    const other = await signIn(b, user);
    expect(first.claims.sub).toBe(again.claims.sub);
    expect(first.claims.sub).not.toBe(other.claims.sub);
    for (const sub of [first.claims.sub, other.claims.sub]) {
      expect(sub).not.toBe(user.id);
      expect(sub).not.toContain(user.id);
    }

    const info = await oidc.fetchUserInfo(first.config, first.tokens.access_token, first.claims.sub);
    expect(info.sub).toBe(first.claims.sub);
    expect(info).not.toHaveProperty('svc_id');
    expect(JSON.stringify(info)).not.toContain(user.id);
    const introspected = await oidc.tokenIntrospection(first.config, first.tokens.access_token);
    expect(introspected).toMatchObject({ active: true, sub: first.claims.sub });

    const profile = await exchange(server, {
      client_id: a.client_id,
      client_secret: a.client_secret,
      code: await code(a, user),
      redirect_uri: redirectOf(a),
    });
    expect(profile.status).toBe(200);
    expect((await json(profile)).svc_id).toBe(user.id);
  });
});

describe('RP-initiated logout', () => {
  const bye = 'https://shop.example.com/bye';

  it('ends the browser session and the client’s tokens, and returns to the registered URI with state', async () => {
    const shop = await register({ post_logout_redirect_uris: bye });
    const user = await createUser(server);
    const { config, tokens } = await signIn(shop, user);
    const config2 = await configuration(shop);
    const logoutUrl = oidc.buildEndSessionUrl(config2, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: bye,
      state: 'after-logout',
    });
    expect(logoutUrl.href.startsWith(`${server.url}/sso/oidc/logout?`)).toBe(true);

    const response = await fetch(logoutUrl, { redirect: 'manual', headers: cookie(user) });
    expect(response.status).toBe(303);
    const back = new URL(response.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(bye);
    expect(back.searchParams.get('state')).toBe('after-logout');
    expect(response.headers.get('set-cookie')).toMatch(/svc_session=;/);

    // The session is gone: the next authorize in this browser asks to sign in.
    const next = await fetch(
      `${server.url}/sso/authorize?${new URLSearchParams({ client_id: shop.client_id, redirect_uri: redirectOf(shop), state: 's', prompt: 'none' })}`,
      { redirect: 'manual', headers: cookie(user) },
    );
    expect(next.status).toBe(302);
    expect(new URL(next.headers.get('location')!).searchParams.get('error')).toBe('login_required');
    const form = await fetch(
      `${server.url}/sso/authorize?${new URLSearchParams({ client_id: shop.client_id, redirect_uri: redirectOf(shop), state: 's' })}`,
      { redirect: 'manual', headers: { ...cookie(user), Accept: 'text/html' } },
    );
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('type="password"');
    // The client's tokens for the person are ended too.
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    expect((await oidc.tokenIntrospection(config, tokens.refresh_token!)).active).toBe(false);
  });

  it('refuses a post_logout_redirect_uri the client did not register, with a page and no redirect, changing nothing', async () => {
    const shop = await register({ post_logout_redirect_uris: bye });
    const user = await createUser(server);
    const { tokens } = await signIn(shop, user);
    for (const target of [
      'https://evil.example.net/bye',
      `${bye}/more`,
      `${bye}?x=1`,
      'https://shop.example.com/callback',
    ]) {
      const response = await fetch(
        `${server.url}/sso/oidc/logout?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: target, state: 's' })}`,
        { redirect: 'manual', headers: { ...cookie(user), Accept: 'text/html' } },
      );
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.text()).toContain('logout_redirect_not_allowed');
    }
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
    expect(await code(shop, user)).toMatch(/^ac_/); // the session still works
  });

  it('without id_token_hint asks a signed-in browser first, and signs out on the confirmed form only', async () => {
    const shop = await register({ post_logout_redirect_uris: bye });
    const user = await createUser(server);
    const { tokens } = await signIn(shop, user);
    const params = { client_id: shop.client_id, post_logout_redirect_uri: bye, state: 'q' };
    const asked = await fetch(`${server.url}/sso/oidc/logout?${new URLSearchParams(params)}`, {
      redirect: 'manual',
      headers: { ...cookie(user), Accept: 'text/html' },
    });
    expect(asked.status).toBe(200);
    const page = await asked.text();
    expect(page).toContain('action="/sso/oidc/logout"');
    expect(page).toContain(shop.name);
    const fields = hiddenFields(page);
    expect(fields).toMatchObject(params);
    expect(await userinfoStatus(tokens.access_token)).toBe(200); // nothing ended yet

    const send = (form: Record<string, string>) =>
      fetch(`${server.url}/sso/oidc/logout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { ...cookie(user), 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
        body: new URLSearchParams(form).toString(),
      });
    // A site's own form (no token of ours) gets the question again.
    const forged = await send({ ...params, _csrf: 'not-the-token' });
    expect(forged.status).toBe(200);
    expect(await code(shop, user)).toMatch(/^ac_/);

    const confirmed = await send(fields);
    expect(confirmed.status).toBe(303);
    expect(new URL(confirmed.headers.get('location')!).searchParams.get('state')).toBe('q');
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    const after = await fetch(
      `${server.url}/sso/authorize?${new URLSearchParams({ client_id: shop.client_id, redirect_uri: redirectOf(shop), state: 's', prompt: 'none' })}`,
      { redirect: 'manual', headers: cookie(user) },
    );
    expect(new URL(after.headers.get('location')!).searchParams.get('error')).toBe('login_required');
  });

  it('with a hint naming another person ends that person’s tokens for the client, not this browser’s session', async () => {
    const shop = await register({ post_logout_redirect_uris: bye });
    const [owner, other] = await Promise.all([createUser(server), createUser(server)]);
    const { tokens } = await signIn(shop, owner);
    const theirs = await signIn(shop, other);
    const response = await fetch(
      `${server.url}/sso/oidc/logout?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: bye })}`,
      { redirect: 'manual', headers: cookie(other) },
    );
    expect(response.status).toBe(303);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    expect(await userinfoStatus(theirs.tokens.access_token)).toBe(200);
    const still = await fetch(
      `${server.url}/sso/authorize?${new URLSearchParams({ client_id: shop.client_id, redirect_uri: redirectOf(shop), state: 's', prompt: 'none', scope: 'openid email' })}`,
      { redirect: 'manual', headers: cookie(other) },
    );
    expect(new URL(still.headers.get('location')!).searchParams.get('code')).toMatch(/^ac_/);
  });

  it('accepts an expired id_token_hint we signed, and refuses one we did not', async () => {
    const shop = await register({ post_logout_redirect_uris: bye });
    const user = await createUser(server);
    const { tokens } = await signIn(shop, user);
    const key = await currentSigningKey(server.services.db, server.services.masterKey);
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(server.url)
      .setAudience(shop.client_id)
      .setSubject(user.id)
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .sign(key.privateKey);
    const forgedKey = await generateKeyPair('RS256');
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(server.url)
      .setAudience(shop.client_id)
      .setSubject(user.id)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(forgedKey.privateKey);

    const refused = await fetch(
      `${server.url}/sso/oidc/logout?${new URLSearchParams({ id_token_hint: forged, post_logout_redirect_uri: bye })}`,
      { redirect: 'manual' },
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('logout_hint_invalid');
    // An access token is signed with the same key, for the same client and person, but it is no ID token.
    const notAnIdToken = await fetch(
      `${server.url}/sso/oidc/logout?${new URLSearchParams({ id_token_hint: tokens.access_token, post_logout_redirect_uri: bye })}`,
      { redirect: 'manual' },
    );
    expect(notAnIdToken.status).toBe(400);
    expect(await notAnIdToken.text()).toContain('logout_hint_invalid');
    expect(await userinfoStatus(tokens.access_token)).toBe(200);

    // POST, as a site's form sends it; no browser session: the hint alone names the person.
    const accepted = await fetch(`${server.url}/sso/oidc/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ id_token_hint: expired, post_logout_redirect_uri: bye, state: 'z' }).toString(),
    });
    expect(accepted.status).toBe(303);
    expect(new URL(accepted.headers.get('location')!).searchParams.get('state')).toBe('z');
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
  });
});

describe('back-channel logout', () => {
  const jwks = () => createRemoteJWKSet(new URL(`${server.url}/sso/jwks`));

  async function withReceiver(fields: Record<string, unknown>, script: { status: number }[] = []) {
    const receiver = await startReceiver(script);
    receivers.push(receiver);
    const client = await register({ backchannel_logout_uri: receiver.url, ...fields });
    return { receiver, client };
  }

  async function logoutToken(receiver: Receiver, index: number) {
    const request = receiver.received[index];
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const token = new URLSearchParams(request.body.toString()).get('logout_token')!;
    const { payload, protectedHeader } = await jwtVerify(token, jwks(), { issuer: server.url });
    return { token, payload, protectedHeader };
  }

  function expectLogoutClaims(payload: JWTPayload, client: Client, sub: string) {
    expect(payload).toMatchObject({
      iss: server.url,
      aud: client.client_id,
      sub,
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    });
    expect(typeof payload.jti).toBe('string');
    expect(typeof payload.iat).toBe('number');
    expect(payload).not.toHaveProperty('nonce');
  }

  it('POSTs a logout_token verifiable with the JWKS to each site the person signed in to, after the cabinet sign-out', async () => {
    const public1 = await withReceiver({});
    const pairwise = await withReceiver({ subject_type: 'pairwise', redirect_uris: 'https://pw-shop.example.com/cb' });
    const user = await createUser(server);
    await signIn(public1.client, user);
    const pairwiseSub = (await signIn(pairwise.client, user)).claims.sub;

    const csrf = keyedDigest(server.services.masterKey, 'cabinet-csrf', user.token);
    const signOut = await fetch(`${server.url}/cabinet/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...cookie(user), 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(signOut.status).toBe(303);

    await expect.poll(() => public1.receiver.received.length, { timeout: 20_000 }).toBe(1);
    await expect.poll(() => pairwise.receiver.received.length, { timeout: 20_000 }).toBe(1);
    const first = await logoutToken(public1.receiver, 0);
    expectLogoutClaims(first.payload, public1.client, user.id);
    expect(first.protectedHeader).toMatchObject({ alg: 'RS256', typ: 'logout+jwt' });
    const second = await logoutToken(pairwise.receiver, 0);
    expectLogoutClaims(second.payload, pairwise.client, pairwiseSub);
    expect(second.payload.jti).not.toBe(first.payload.jti);
  });

  it('retries a receiver that fails, until it takes the token', async () => {
    const failing = await withReceiver({}, [{ status: 500 }]);
    const user = await createUser(server);
    await signIn(failing.client, user);
    const csrf = keyedDigest(server.services.masterKey, 'cabinet-csrf', user.token);
    await fetch(`${server.url}/cabinet/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...cookie(user), 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    await expect.poll(() => failing.receiver.received.length, { timeout: 30_000 }).toBe(2);
    const retried = await logoutToken(failing.receiver, 1);
    expectLogoutClaims(retried.payload, failing.client, user.id);
    await expect
      .poll(
        async () =>
          (
            await server.services.db.query('SELECT 1 FROM sso_logout_deliveries WHERE client_id = $1', [
              failing.client.client_id,
            ])
          ).rowCount,
        { timeout: 10_000 },
      )
      .toBe(0);
  });

  it('reaches the sites after "sign out everywhere" and after RP-initiated logout at another site', async () => {
    const told = await withReceiver({});
    const initiator = await withReceiver({ post_logout_redirect_uris: 'https://shop.example.com/bye' });
    const user = await createUser(server);
    const { tokens } = await signIn(initiator.client, user);
    await signIn(told.client, user);

    const logout = await fetch(
      `${server.url}/sso/oidc/logout?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://shop.example.com/bye' })}`,
      { redirect: 'manual', headers: cookie(user) },
    );
    expect(logout.status).toBe(303);
    await expect.poll(() => told.receiver.received.length, { timeout: 20_000 }).toBe(1);
    expectLogoutClaims((await logoutToken(told.receiver, 0)).payload, told.client, user.id);

    // Signing out everywhere tells the sites the person signed in to.
    const again = await createUser(server);
    await signIn(told.client, again);
    const everywhere = await post(
      `${server.url}/cabinet/logout-everywhere`,
      {},
      { Authorization: `Bearer ${again.token}` },
    );
    expect(everywhere.status).toBe(200);
    await expect.poll(() => told.receiver.received.length, { timeout: 20_000 }).toBe(2);
    const token = new URLSearchParams(told.receiver.received[1].body.toString()).get('logout_token')!;
    // Any of the test servers sharing this database may have signed it; the key set is the same.
    const { payload } = await jwtVerify(token, jwks());
    expect(payload).toMatchObject({ aud: told.client.client_id, sub: again.id });
    expect(decodeJwt(token)).not.toHaveProperty('nonce');
    // The initiating site was not told.
    expect(initiator.receiver.received).toHaveLength(0);
  });

  it('reaches the sites after a password change', async () => {
    const { receiver, client } = await withReceiver({});
    const user = await createUser(server);
    await signIn(client, user);
    const changed = await post(
      `${server.url}/cabinet/password`,
      { current_password: PASSWORD, new_password: 'another strong password' },
      { Authorization: `Bearer ${user.token}` },
    );
    expect(changed.status).toBe(200);
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(1);
    const token = new URLSearchParams(receiver.received[0].body.toString()).get('logout_token')!;
    const { payload } = await jwtVerify(token, jwks());
    expect(payload).toMatchObject({
      aud: client.client_id,
      sub: user.id,
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    });
  });

  it('refuses a receiver on the loopback when WEBHOOK_ALLOW_LOOPBACK is off (the SSRF rules), and keeps the delivery', async () => {
    const { receiver, client } = await withReceiver({});
    const user = await createUser(server);
    await signIn(client, user);
    // A deployment of its own (another issuer) with the production default; only its drainer takes its rows.
    const issuer = `https://${uniqueId('strict')}.example.com`;
    const strict = startLogoutDrainer({
      ...server.services,
      config: { ...server.services.config, BASE_URL: issuer, WEBHOOK_ALLOW_LOOPBACK: false },
    });
    try {
      expect(await queueBackchannelLogout(server.services.db, user.id, { issuer })).toBe(1);
      const row = () =>
        server.services.db
          .query<{ last_error: string | null; attempts: number }>(
            'SELECT last_error, attempts FROM sso_logout_deliveries WHERE client_id = $1',
            [client.client_id],
          )
          .then((result) => result.rows[0]);
      await expect.poll(async () => (await row())?.last_error ?? null, { timeout: 20_000 }).toMatch(/not a public/);
      expect(receiver.received).toHaveLength(0);
      expect((await row()).attempts).toBeGreaterThanOrEqual(1);
    } finally {
      await strict.stop();
    }
  });
});
