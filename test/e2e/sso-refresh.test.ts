// Tokens a site can keep, check and end, through openid-client (unmodified) where it has the call: refresh tokens for
// offline_access, rotated on each use, a reused one killing its whole family; revocation (RFC 7009) and introspection
// (RFC 7662), each reaching only the calling client's tokens; and the user's own ways of ending a site's access (a
// password change, signing out everywhere, revoking the site) ending its refresh tokens too.
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/secrets.ts';
import { currentStep, totpCode } from '../../src/admin/totp.ts';
import { askPasswordReset, json, post, startTestServer, uniqueLoopback, type TestServer } from '../helpers.ts';
import { PASSWORD, REDIRECT_URI, basic, createUser, oidcToken, registerClient, type Client } from '../sso-helpers.ts';

let server: TestServer;
let client: Client;
let other: Client;

beforeAll(async () => {
  server = await startTestServer({ env: { TRUST_PROXY: '1' } });
  [client, other] = await Promise.all([registerClient(server), registerClient(server, { name: 'Other shop' })]);
});
afterAll(async () => {
  await server?.stop();
});

type User = Awaited<ReturnType<typeof createUser>>;

async function configuration(of: Client = client) {
  return oidc.discovery(new URL(server.url), of.client_id, undefined, oidc.ClientSecretBasic(of.client_secret), {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  });
}

/** The whole sign-in through openid-client: PKCE, the browser leg with the user's cabinet token, the code grant. */
async function signIn(config: oidc.Configuration, user: User, scope = 'openid email offline_access') {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
  expect(response.status).toBe(302);
  return oidc.authorizationCodeGrant(config, new URL(response.headers.get('location')!), {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
}

/** The OAuth error an openid-client call failed with: RFC 6749's `error` and the problem's `code`. */
async function failure(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(oidc.ResponseBodyError);
  const { error: oauthError, status, cause } = error as oidc.ResponseBodyError;
  return { error: oauthError, status, code: (cause as { code?: string }).code };
}

const userinfoStatus = async (accessToken: string) =>
  (await fetch(`${server.url}/sso/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } })).status;

const active = async (config: oidc.Configuration, token: string) =>
  (await oidc.tokenIntrospection(config, token)).active;

describe('discovery', () => {
  it('names the revocation and introspection endpoints, the refresh grant and offline_access', async () => {
    const config = await configuration();
    expect(config.serverMetadata()).toMatchObject({
      revocation_endpoint: `${server.url}/sso/oidc/revoke`,
      introspection_endpoint: `${server.url}/sso/oidc/introspect`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
    expect(config.serverMetadata().grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    expect(config.serverMetadata().scopes_supported).toContain('offline_access');
  });

  it('lists the acr values ID tokens carry, and amr, acr and auth_time among the claims, in both documents', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const document = await json(await fetch(`${server.url}${path}`));
      expect(document.acr_values_supported, path).toEqual(['urn:svc:acr:mfa', 'urn:svc:acr:pwd']);
      expect(document.claims_supported, path).toEqual(expect.arrayContaining(['amr', 'acr', 'auth_time']));
    }
  });

  it('documents both endpoints in the OpenAPI document, with the OAuth error shape', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    for (const path of ['/sso/oidc/revoke', '/sso/oidc/introspect']) {
      const operation = document.paths[path].post;
      expect(operation.security).toEqual([{ clientSecretBasic: [] }]);
      expect(operation.requestBody.content['application/x-www-form-urlencoded'].schema.required).toEqual(['token']);
      expect(operation.responses['401'].content['application/problem+json'].schema.properties.error.enum).toContain(
        'invalid_client',
      );
    }
    const introspection = document.paths['/sso/oidc/introspect'].post.responses['200'].content['application/json'];
    expect(Object.keys(introspection.schema.properties)).toEqual(
      expect.arrayContaining(['active', 'scope', 'client_id', 'sub', 'exp', 'iat', 'token_type']),
    );
  });
});

/** A cabinet session signed in with the password and the authenticator app's code (amr pwd, otp, mfa). */
async function signedInWithApp(user: User): Promise<string> {
  const bearer = { Authorization: `Bearer ${user.token}` };
  const { secret } = await json(await post(`${server.url}/cabinet/mfa/totp`, {}, bearer));
  const step = currentStep();
  const confirmed = await post(`${server.url}/cabinet/mfa/totp/confirm`, { code: totpCode(secret, step) }, bearer);
  expect(confirmed.status).toBe(200);
  // An address of its own: the per-address sign-in allowance is shared by every file (TRUST_PROXY is on here).
  const signedIn = await post(
    `${server.url}/cabinet/login`,
    { email: user.email, password: PASSWORD, code: totpCode(secret, step + 1) },
    { 'X-Forwarded-For': uniqueLoopback() },
  );
  expect(signedIn.status).toBe(200);
  return (await json(signedIn)).token;
}

describe('refresh tokens', () => {
  it('give ID tokens the first sign-in’s auth_time, amr and acr (OpenID Connect Core 12.2)', async () => {
    const user = await createUser(server, 'Zoya');
    const token = await signedInWithApp(user);
    // The sign-in an hour ago: a refreshed ID token that took the time of the refresh would differ from it.
    await server.services.db.query(
      `UPDATE cabinet_sessions SET created_at = now() - interval '1 hour' WHERE user_id = $1 AND amr @> '{mfa}'`,
      [user.id],
    );
    const config = await configuration();
    const signedIn = await signIn(config, { ...user, token });
    const first = signedIn.claims()!;
    expect(first).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: 'urn:svc:acr:mfa' });
    expect(first.auth_time).toBeLessThan(Date.now() / 1000 - 3000);

    const second = await oidc.refreshTokenGrant(config, signedIn.refresh_token!);
    const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
    for (const refreshed of [second.claims()!, third.claims()!]) {
      expect(refreshed.iat).toBeGreaterThan(first.auth_time!);
      expect({ amr: refreshed.amr, acr: refreshed.acr, auth_time: refreshed.auth_time }).toEqual({
        amr: first.amr,
        acr: first.acr,
        auth_time: first.auth_time,
      });
    }
  });

  it('are issued only for offline_access, and stored as hashes', async () => {
    const user = await createUser(server, 'Vera');
    const config = await configuration();
    const without = await signIn(config, user, 'openid email');
    expect(without.refresh_token).toBeUndefined();

    const tokens = await signIn(config, user);
    expect(tokens.refresh_token).toMatch(/^rt_/);
    expect(tokens.scope).toBe('openid email offline_access');
    const stored = await server.services.db.query('SELECT token_hash FROM sso_refresh_tokens WHERE user_id = $1', [
      user.id,
    ]);
    expect(stored.rows).toEqual([{ token_hash: hashSecret(tokens.refresh_token!) }]);
  });

  it('rotate: each refresh answers a new refresh and access token and spends the old one; reuse kills the family', async () => {
    const user = await createUser(server, 'Irina');
    const config = await configuration();
    const first = await signIn(config, user);
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toMatch(/^rt_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.scope).toBe('openid email offline_access');
    // The refreshed ID token verifies (openid-client checked its signature) and names the same user, without nonce.
    expect(second.claims()).toMatchObject({ iss: server.url, sub: user.id, aud: client.client_id });
    expect(second.claims()).not.toHaveProperty('nonce');
    expect(await userinfoStatus(second.access_token)).toBe(200);
    expect(await active(config, first.refresh_token!)).toBe(false); // spent
    expect(await active(config, second.refresh_token!)).toBe(true);

    const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
    expect(await userinfoStatus(third.access_token)).toBe(200);

    // The spent first token again: refused, and every token of the sign-in stops.
    expect(await failure(oidc.refreshTokenGrant(config, first.refresh_token!))).toEqual({
      error: 'invalid_grant',
      status: 400,
      code: 'refresh_token_reused',
    });
    expect(await failure(oidc.refreshTokenGrant(config, third.refresh_token!))).toEqual({
      error: 'invalid_grant',
      status: 400,
      code: 'invalid_refresh_token',
    });
    for (const accessToken of [first.access_token, second.access_token, third.access_token]) {
      expect(await userinfoStatus(accessToken)).toBe(401);
      expect(await active(config, accessToken)).toBe(false);
    }
    expect(await active(config, third.refresh_token!)).toBe(false);

    // Another sign-in of the same user and client is another family, untouched.
    const again = await signIn(config, user);
    expect((await oidc.refreshTokenGrant(config, again.refresh_token!)).access_token).toBeTruthy();
  });

  it('of one token used twice at once: exactly one use rotates, the other counts as reuse and kills the family', async () => {
    const user = await createUser(server, 'Polina');
    const config = await configuration();
    const tokens = await signIn(config, user);
    const form = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! };
    const headers = { Authorization: basic(client.client_id, client.client_secret) };
    const answers = await Promise.all([oidcToken(server, form, headers), oidcToken(server, form, headers)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    const [won] = await Promise.all(answers.filter((answer) => answer.status === 200).map(json));
    const [lost] = await Promise.all(answers.filter((answer) => answer.status === 400).map(json));
    expect(lost).toMatchObject({ error: 'invalid_grant', code: 'refresh_token_reused' });
    // Whichever came second, the first one's new tokens are revoked with the rest.
    expect(await active(config, won.refresh_token)).toBe(false);
    expect(await userinfoStatus(won.access_token)).toBe(401);
  });

  it('of a code used twice are revoked with the rest of what the code issued', async () => {
    const user = await createUser(server, 'Elena');
    const config = await configuration();
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
    const code = new URL(response.headers.get('location')!).searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier };
    const headers = { Authorization: basic(client.client_id, client.client_secret) };
    const first = await json(await oidcToken(server, form, headers));
    const refreshed = await oidc.refreshTokenGrant(config, first.refresh_token);
    const replay = await oidcToken(server, form, headers);
    expect(await json(replay)).toMatchObject({ error: 'invalid_grant', code: 'code_already_used' });
    expect(await active(config, refreshed.refresh_token!)).toBe(false);
    expect(await userinfoStatus(refreshed.access_token)).toBe(401);
  });

  it('narrow the scope on request, never widen it, and keep the granted scope for the next refresh', async () => {
    const user = await createUser(server, 'Lidia');
    const config = await configuration();
    const tokens = await signIn(config, user);
    expect(await failure(oidc.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'openid profile' }))).toEqual({
      error: 'invalid_scope',
      status: 400,
      code: 'invalid_scope',
    });
    // A refused widening spends nothing.
    const narrowed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'openid' });
    expect(narrowed.scope).toBe('openid');
    expect((await oidc.tokenIntrospection(config, narrowed.access_token)).scope).toBe('openid');
    const next = await oidc.refreshTokenGrant(config, narrowed.refresh_token!);
    expect(next.scope).toBe('openid email offline_access');
  });

  it('work only for the client they were issued to, authenticated', async () => {
    const user = await createUser(server, 'Sofia');
    const tokens = await signIn(await configuration(), user);
    const form = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! };
    const wrongSecret = await oidcToken(server, form, { Authorization: basic(client.client_id, 'cs_wrong') });
    expect(wrongSecret.status).toBe(401);
    expect((await json(wrongSecret)).error).toBe('invalid_client');
    expect(await failure(oidc.refreshTokenGrant(await configuration(other), tokens.refresh_token!))).toEqual({
      error: 'invalid_grant',
      status: 400,
      code: 'invalid_refresh_token',
    });
    const missing = await oidcToken(
      server,
      { grant_type: 'refresh_token' },
      { Authorization: basic(client.client_id, client.client_secret) },
    );
    expect((await json(missing)).error).toBe('invalid_request');
    // None of that spent or revoked the token.
    expect((await oidc.refreshTokenGrant(await configuration(), tokens.refresh_token!)).access_token).toBeTruthy();
  });
});

describe('revocation', () => {
  it('of a refresh token ends its family: the refresh token and the access tokens issued from it', async () => {
    const user = await createUser(server, 'Alla');
    const config = await configuration();
    const first = await signIn(config, user);
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    await oidc.tokenRevocation(config, second.refresh_token!, { token_type_hint: 'refresh_token' });
    expect(await failure(oidc.refreshTokenGrant(config, second.refresh_token!))).toMatchObject({
      error: 'invalid_grant',
      code: 'invalid_refresh_token',
    });
    for (const accessToken of [first.access_token, second.access_token]) {
      expect(await userinfoStatus(accessToken)).toBe(401);
      expect(await active(config, accessToken)).toBe(false);
    }
  });

  it('of an access token ends that token only', async () => {
    const user = await createUser(server, 'Galina');
    const config = await configuration();
    const tokens = await signIn(config, user);
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
    await oidc.tokenRevocation(config, tokens.access_token);
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    expect(await active(config, tokens.access_token)).toBe(false);
    expect(await active(config, tokens.refresh_token!)).toBe(true);
    // Revoking twice, or a token never issued, is still 200.
    await oidc.tokenRevocation(config, tokens.access_token, { token_type_hint: 'access_token' });
    await oidc.tokenRevocation(config, 'rt_never-issued');
  });

  it('answers 200 to another client and revokes nothing of this one; wrong credentials are 401', async () => {
    const user = await createUser(server, 'Zoya');
    const config = await configuration();
    const tokens = await signIn(config, user);
    const stranger = await configuration(other);
    await oidc.tokenRevocation(stranger, tokens.refresh_token!);
    await oidc.tokenRevocation(stranger, tokens.access_token);
    expect(await active(config, tokens.refresh_token!)).toBe(true);
    expect(await userinfoStatus(tokens.access_token)).toBe(200);

    const response = await fetch(`${server.url}/sso/oidc/revoke`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basic(client.client_id, 'cs_wrong'),
      },
      body: new URLSearchParams({ token: tokens.refresh_token! }).toString(),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="sso"');
    expect((await json(response)).error).toBe('invalid_client');
    expect(await active(config, tokens.refresh_token!)).toBe(true);
  });
});

describe('introspection', () => {
  it('describes a live token of the client, and only active: false otherwise', async () => {
    const user = await createUser(server, 'Nadia');
    const config = await configuration();
    const tokens = await signIn(config, user);
    const access = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(access).toMatchObject({
      active: true,
      scope: 'openid email offline_access',
      client_id: client.client_id,
      sub: user.id,
      token_type: 'Bearer',
    });
    expect(access.exp! - access.iat!).toBe(3600);
    const refresh = await oidc.tokenIntrospection(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
    expect(refresh).toMatchObject({
      active: true,
      client_id: client.client_id,
      sub: user.id,
      token_type: 'refresh_token',
    });
    expect(refresh.exp! - refresh.iat!).toBe(2_592_000);

    // Another client learns nothing about it, and an unknown token is inactive: nothing but active.
    const stranger = await configuration(other);
    expect(await oidc.tokenIntrospection(stranger, tokens.access_token)).toEqual({ active: false });
    expect(await oidc.tokenIntrospection(stranger, tokens.refresh_token!)).toEqual({ active: false });
    expect(await oidc.tokenIntrospection(config, 'at_never-issued')).toEqual({ active: false });
  });

  it('is client-authenticated and needs a token', async () => {
    const call = (headers: Record<string, string>, form: Record<string, string>) =>
      fetch(`${server.url}/sso/oidc/introspect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form).toString(),
      });
    const anonymous = await call({}, { token: 'at_x' });
    expect(anonymous.status).toBe(401);
    expect((await json(anonymous)).error).toBe('invalid_client');
    const posted = await call({}, { token: 'at_x', client_id: client.client_id, client_secret: client.client_secret });
    expect(await json(posted)).toEqual({ active: false });
    const noToken = await call({ Authorization: basic(client.client_id, client.client_secret) }, {});
    expect(noToken.status).toBe(400);
    expect(await json(noToken)).toMatchObject({ error: 'invalid_request', code: 'validation_failed' });
  });
});

describe('what the user does ends refresh tokens too', () => {
  const journeys: [string, (user: User) => Promise<Response>][] = [
    [
      'a password change',
      (user) =>
        post(
          `${server.url}/cabinet/password`,
          { current_password: PASSWORD, new_password: 'another strong password' },
          { Authorization: `Bearer ${user.token}` },
        ),
    ],
    [
      'a password reset',
      async (user) => {
        expect((await askPasswordReset(server.url, user.email)).status).toBe(202);
        const outbox = await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(user.email)}`, {
          headers: { Authorization: `Bearer ${server.adminToken}` },
        });
        const token = ((await json(outbox)).items as { text: string }[])
          .map((mail) => /\/cabinet\/reset-password\?token=(\S+)/.exec(mail.text)?.[1])
          .find(Boolean);
        expect(token).toMatch(/^rst_/);
        return post(`${server.url}/cabinet/password/reset`, { token, password: 'another strong password' });
      },
    ],
    [
      'signing out everywhere',
      (user) => post(`${server.url}/cabinet/logout-everywhere`, {}, { Authorization: `Bearer ${user.token}` }),
    ],
    [
      'revoking the site',
      (user) =>
        post(
          `${server.url}/cabinet/connected-sites/${client.client_id}/revoke`,
          {},
          {
            Authorization: `Bearer ${user.token}`,
          },
        ),
    ],
  ];

  it.each(journeys)('%s', async (_, end) => {
    const user = await createUser(server, 'Marina');
    const config = await configuration();
    const first = await signIn(config, user);
    const refreshed = await oidc.refreshTokenGrant(config, first.refresh_token!);
    const response = await end(user);
    expect(response.status, await response.clone().text()).toBeLessThan(300);
    expect(await failure(oidc.refreshTokenGrant(config, refreshed.refresh_token!))).toMatchObject({
      error: 'invalid_grant',
      code: 'invalid_refresh_token',
    });
    expect(await active(config, refreshed.refresh_token!)).toBe(false);
    expect(await userinfoStatus(refreshed.access_token)).toBe(401);
  });
});
