// The OpenID Foundation's conformance profiles (Basic, Config, PKCE, refresh, RP-initiated logout, dynamic
// registration), the checks the other SSO test files do not make yet, walked with openid-client as a relying party
// would: the suite itself needs its own server and browser automation, which this repository does not run. Each check
// names the suite's test module it stands for. Negative checks expect the error openid-client surfaces.
import * as oidc from 'openid-client';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { createUser } from '../sso-helpers.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

type User = Awaited<ReturnType<typeof createUser>>;
interface Registered {
  client_id: string;
  client_secret: string;
  redirect_uris: string;
  token_endpoint_auth_method: string;
}

const REDIRECT = 'https://rp.example.com/callback';

async function register(fields: Record<string, unknown> = {}): Promise<Registered> {
  const response = await post(
    `${server.url}/admin/sso/clients`,
    { client_id: uniqueId('rp'), name: 'Conformance RP', redirect_uris: REDIRECT, ...fields },
    { Authorization: `Bearer ${server.adminToken}` },
  );
  expect(response.status).toBe(201);
  return json(response);
}

async function configuration(client: Registered) {
  const auth =
    client.token_endpoint_auth_method === 'none' ? oidc.None() : oidc.ClientSecretBasic(client.client_secret);
  return oidc.discovery(new URL(server.url), client.client_id, undefined, auth, {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  });
}

/** The authorization step through openid-client's URL, the browser leg with the user's cabinet token. */
async function authorize(config: oidc.Configuration, user: User, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
  expect(response.status).toBe(302);
  return { callback: new URL(response.headers.get('location')!), verifier, state, nonce };
}

async function signIn(config: oidc.Configuration, user: User, extra: Record<string, string> = {}) {
  const { callback, verifier, state, nonce } = await authorize(config, user, extra);
  return oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
}

/** The OAuth error of a failed openid-client call, and the problem code beside it. */
async function oauthError(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(oidc.ResponseBodyError);
  const failure = error as oidc.ResponseBodyError;
  return { error: failure.error, code: (failure.cause as { code?: string }).code };
}

describe('Config profile', () => {
  it('oidcc-discovery-endpoint-verification: the required members, endpoints under the issuer, the same RFC 8414 document', async () => {
    const response = await fetch(`${server.url}/.well-known/openid-configuration`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const metadata = await json(response);
    for (const member of [
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'jwks_uri',
      'response_types_supported',
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
    ])
      expect(metadata, member).toHaveProperty(member);
    expect(metadata.issuer).toBe(server.url);
    expect(metadata.response_types_supported).toContain('code');
    expect(metadata.scopes_supported).toContain('openid');
    expect(metadata.claims_supported).toContain('sub');
    expect(metadata.id_token_signing_alg_values_supported).toContain('RS256');
    expect(metadata.id_token_signing_alg_values_supported).not.toContain('none');
    for (const [name, value] of Object.entries(metadata))
      if (name.endsWith('_endpoint') || name === 'jwks_uri')
        expect(String(value).startsWith(`${server.url}/`)).toBe(true);
    expect(await json(await fetch(`${server.url}/.well-known/oauth-authorization-server`))).toEqual(metadata);
  });

  it('oidcc-server-rotate-keys / jwks: unique kids that are the keys’ thumbprints, public halves only, and the tokens’ kid listed', async () => {
    const user = await createUser(server);
    const tokens = await signIn(await configuration(await register()), user);
    const { keys } = (await json(await fetch(`${server.url}/sso/jwks`))) as { keys: (JWK & { kid: string })[] };
    expect(new Set(keys.map((key) => key.kid)).size).toBe(keys.length);
    for (const key of keys) {
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', n: expect.any(String), e: 'AQAB' });
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
      expect(await calculateJwkThumbprint(key)).toBe(key.kid);
    }
    const kids = keys.map((key) => key.kid);
    expect(kids).toContain(decodeProtectedHeader(tokens.id_token!).kid);
    expect(kids).toContain(decodeProtectedHeader(tokens.access_token).kid);
  });
});

describe('Basic profile', () => {
  it('oidcc-ensure-other-scope-order-succeeds: the scope’s order changes nothing', async () => {
    const user = await createUser(server, 'Scope Order');
    const config = await configuration(await register());
    const one = await signIn(config, user, { scope: 'openid email profile' });
    const other = await signIn(config, user, { scope: 'email profile openid' });
    const pick = ({ sub, email, name }: oidc.IDToken) => ({ sub, email, name });
    expect(pick(other.claims()!)).toEqual(pick(one.claims()!));
    expect(other.claims()).toMatchObject({ email: user.email, name: 'Scope Order' });
  });

  it('oidcc-userinfo-get and -post-header: the same claims either way, for the ID token’s sub', async () => {
    const user = await createUser(server);
    const config = await configuration(await register());
    const tokens = await signIn(config, user, { scope: 'openid email' });
    const sub = tokens.claims()!.sub;
    const got = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    const posted = await oidc.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(config.serverMetadata().userinfo_endpoint!),
      'POST',
    );
    expect(posted.status).toBe(200);
    expect(await posted.json()).toEqual(got);
    expect(got).toMatchObject({ sub, email: user.email });
  });

  it('oidcc-ensure-registered-redirect-uri at the token endpoint: another redirect_uri than the authorize step’s is invalid_grant', async () => {
    const user = await createUser(server);
    const config = await configuration(await register({ redirect_uris: `${REDIRECT} https://rp.example.com/other` }));
    const { callback, verifier, state, nonce } = await authorize(config, user);
    const elsewhere = new URL(callback.href.replace('/callback?', '/other?'));
    expect(
      await oauthError(
        oidc.authorizationCodeGrant(config, elsewhere, {
          pkceCodeVerifier: verifier,
          expectedState: state,
          expectedNonce: nonce,
        }),
      ),
    ).toEqual({ error: 'invalid_grant', code: 'redirect_uri_mismatch' });
  });

  it('oidcc-codereuse: a code used again is invalid_grant, and the tokens of its first use stop working', async () => {
    const user = await createUser(server);
    const config = await configuration(await register());
    const { callback, verifier, state, nonce } = await authorize(config, user);
    const first = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    expect((await oidc.tokenIntrospection(config, first.access_token)).active).toBe(true);
    expect(
      await oauthError(
        oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: verifier,
          expectedState: state,
          expectedNonce: nonce,
        }),
      ),
    ).toEqual({ error: 'invalid_grant', code: 'code_already_used' });
    expect((await oidc.tokenIntrospection(config, first.access_token)).active).toBe(false);
  });

  it('an expired access token: its exp has passed, so it is refused although its row would still be live', async () => {
    const quick = await startTestServer({ env: { SSO_ACCESS_TOKEN_TTL_SECONDS: '1' } });
    try {
      const response = await post(
        `${quick.url}/admin/sso/clients`,
        { client_id: uniqueId('rp'), name: 'Quick RP', redirect_uris: REDIRECT },
        { Authorization: `Bearer ${quick.adminToken}` },
      );
      const client = (await json(response)) as Registered;
      const config = await oidc.discovery(
        new URL(quick.url),
        client.client_id,
        undefined,
        oidc.ClientSecretBasic(client.client_secret),
        { execute: [oidc.allowInsecureRequests] },
      );
      const user = await createUser(quick);
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'st',
      });
      const answer = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
      const tokens = await oidc.authorizationCodeGrant(config, new URL(answer.headers.get('location')!), {
        pkceCodeVerifier: verifier,
        expectedState: 'st',
      });
      expect(tokens.expires_in).toBe(1);
      // The row lives on (as if the clocks disagreed); the token's own exp decides.
      await quick.services.db.query(
        `UPDATE sso_access_tokens SET expires_at = now() + interval '1 hour' WHERE jti = $1`,
        [decodeJwt(tokens.access_token).jti],
      );
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const userinfo = await fetch(`${quick.url}/sso/userinfo`, {
        headers: { Authorization: `Bearer ${tokens.access_token}` },
      });
      expect(userinfo.status).toBe(401);
      expect(userinfo.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    } finally {
      await quick.stop();
    }
  });
});

describe('PKCE profile', () => {
  it('a verifier that is not the challenge’s is invalid_grant; the right one then still redeems the code', async () => {
    const user = await createUser(server);
    const config = await configuration(await register());
    const { callback, verifier, state, nonce } = await authorize(config, user);
    expect(
      await oauthError(
        oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
          expectedState: state,
          expectedNonce: nonce,
        }),
      ),
    ).toEqual({ error: 'invalid_grant', code: 'invalid_code_verifier' });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    expect(tokens.access_token).toBeTruthy();
  });
});

describe('refresh profile', () => {
  it('oidcc-refresh-token: the refreshed ID token has the same iss, sub, aud and auth_time, a later iat, and no nonce', async () => {
    const user = await createUser(server);
    const config = await configuration(await register());
    const first = await signIn(config, user, { scope: 'openid offline_access' });
    const before = first.claims()!;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const refreshed = await oidc.refreshTokenGrant(config, first.refresh_token!);
    const after = refreshed.claims()!;
    expect(after).toMatchObject({ iss: before.iss, sub: before.sub, aud: before.aud, auth_time: before.auth_time });
    expect(after.iat).toBeGreaterThan(before.iat);
    expect(after.nonce).toBeUndefined();
    expect(refreshed.refresh_token).not.toBe(first.refresh_token);
  });
});

describe('RP-initiated logout profile', () => {
  const bye = 'https://rp.example.com/bye?from=op';

  it('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri: the URI’s own query is kept, state added', async () => {
    const user = await createUser(server);
    const client = await register({ post_logout_redirect_uris: bye });
    const config = await configuration(client);
    const tokens = await signIn(config, user);
    const response = await fetch(
      oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: bye, state: 'x' }),
      { redirect: 'manual', headers: { Cookie: `svc_session=${user.token}` } },
    );
    expect(response.status).toBe(303);
    const back = new URL(response.headers.get('location')!);
    expect(back.searchParams.get('from')).toBe('op');
    expect(back.searchParams.get('state')).toBe('x');
  });

  it('oidcc-rp-initiated-logout-no-state: back without a state parameter', async () => {
    const user = await createUser(server);
    const client = await register({ post_logout_redirect_uris: bye });
    const config = await configuration(client);
    const tokens = await signIn(config, user);
    const response = await fetch(
      oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: bye }),
      { redirect: 'manual', headers: { Cookie: `svc_session=${user.token}` } },
    );
    expect(response.status).toBe(303);
    expect(new URL(response.headers.get('location')!).searchParams.has('state')).toBe(false);
  });

  it('oidcc-rp-initiated-logout-only-state: without post_logout_redirect_uri no redirect, the person is signed out', async () => {
    const user = await createUser(server);
    const config = await configuration(await register({ post_logout_redirect_uris: bye }));
    const tokens = await signIn(config, user);
    const response = await fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, state: 'x' }), {
      redirect: 'manual',
      headers: { Cookie: `svc_session=${user.token}`, Accept: 'text/html' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('location')).toBeNull();
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it('oidcc-rp-initiated-logout-bad-id-token-hint: a hint for another client than client_id is refused, nothing ended', async () => {
    const user = await createUser(server);
    const config = await configuration(await register({ post_logout_redirect_uris: bye }));
    const other = await register({ post_logout_redirect_uris: bye });
    const tokens = await signIn(config, user);
    const query = new URLSearchParams({
      id_token_hint: tokens.id_token!,
      client_id: other.client_id,
      post_logout_redirect_uri: bye,
    });
    const response = await fetch(`${server.url}/sso/oidc/logout?${query.toString()}`, {
      redirect: 'manual',
      headers: { Cookie: `svc_session=${user.token}`, Accept: 'text/html' },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
  });
});

describe('dynamic registration profile', () => {
  it('oidcc-dynamic-client-registration: openid-client registers a public client and signs in with it, PKCE and refresh', async () => {
    const user = await createUser(server);
    const redirect = 'http://127.0.0.1/callback';
    const config = await oidc.dynamicClientRegistration(
      new URL(server.url),
      {
        client_name: 'Conformance agent',
        redirect_uris: [redirect],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      },
      oidc.None(),
      { execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] },
    );
    const metadata = config.clientMetadata();
    expect(metadata.client_id).toMatch(/^dcr_/);
    expect(metadata).toMatchObject({ token_endpoint_auth_method: 'none', redirect_uris: [redirect] });
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: 'http://127.0.0.1:43210/callback', // a loopback URI without a port takes any (RFC 8252 §7.3)
      scope: 'openid offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'st',
    });
    const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(response.headers.get('location')!), {
      pkceCodeVerifier: verifier,
      expectedState: 'st',
    });
    expect(tokens.claims()).toMatchObject({ aud: metadata.client_id, sub: user.id });
    expect((await oidc.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toBeTruthy();
  });

  it('oidcc-registration without redirect_uris or with a fragment in one is refused', async () => {
    for (const metadata of [{ client_name: 'No redirect' }, { redirect_uris: ['https://rp.example.com/cb#frag'] }]) {
      const failure = await oauthError(
        oidc.dynamicClientRegistration(new URL(server.url), metadata, oidc.None(), {
          execute: [oidc.allowInsecureRequests],
        }),
      );
      expect(['invalid_client_metadata', 'invalid_redirect_uri']).toContain(failure.error);
    }
  });
});
