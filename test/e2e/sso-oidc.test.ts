// Standard OpenID Connect beside the spec's flow: openid-client (an independent, certified client library) completes
// a PKCE flow against discovery with ID token signature checks on, with both client authentication methods; then the
// token endpoint's rules one by one: PKCE, one code across both token endpoints, replay revocation, signing key
// rotation, and errors stock libraries can read.
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import {
  REDIRECT_URI,
  basic,
  codeFor,
  createUser,
  exchange,
  oidcToken,
  registerClient,
  type Client,
} from '../sso-helpers.ts';

let server: TestServer;
let client: Client;
let user: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  server = await startTestServer();
  client = await registerClient(server);
  user = await createUser(server, 'Olga');
});
afterAll(async () => {
  await server?.stop();
});

/** The browser leg: the user (holding a cabinet token) visits the authorization URL; answers where it sends them. */
async function visit(url: URL): Promise<URL> {
  const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location')!);
}

async function configuration(auth: 'basic' | 'post') {
  const method =
    auth === 'basic' ? oidc.ClientSecretBasic(client.client_secret) : oidc.ClientSecretPost(client.client_secret);
  return oidc.discovery(new URL(server.url), client.client_id, undefined, method, {
    // http on loopback in tests; and verify the ID token's signature against the JWKS (off by default in openid-client).
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  });
}

describe('openid-client, unmodified', () => {
  it.each(['basic', 'post'] as const)(
    'completes a PKCE flow with client_secret_%s, verifying the ID token signature',
    async (auth) => {
      const config = await configuration(auth);
      expect(config.serverMetadata().issuer).toBe(server.url);
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
      });
      const callback = await visit(url);
      expect(callback.searchParams.get('iss')).toBe(server.url);

      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBeGreaterThan(0);
      const claims = tokens.claims()!;
      expect(claims).toMatchObject({
        iss: server.url,
        sub: user.id,
        aud: client.client_id,
        nonce,
        email: user.email,
        name: 'Olga',
      });
      expect(claims.exp).toBeGreaterThan(claims.iat);

      const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
      expect(info).toMatchObject({
        sub: user.id,
        svc_id: user.id,
        email: user.email,
        name: 'Olga',
        org: { name: 'Olga' },
      });
    },
  );

  it('rejects an ID token whose signature does not verify (the checks are really on)', async () => {
    const config = await configuration('basic');
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    const callback = await visit(url);
    const tamper = async (url: string, options: oidc.CustomFetchOptions) => {
      const response = await fetch(url, options);
      if (!url.endsWith('/sso/oidc/token')) return response;
      const body = (await response.json()) as { id_token: string };
      const [header, payload, signature] = body.id_token.split('.');
      const forged = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'someone-else' }),
      ).toString('base64url');
      return Response.json({ ...body, id_token: `${header}.${forged}.${signature}` });
    };
    config[oidc.customFetch] = tamper;
    const failure = await oidc
      .authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' })
      .catch((error: unknown) => error);
    expect((failure as Error & { cause?: Error }).cause?.message).toBe('JWT signature verification failed');
  });
});

describe('discovery and keys', () => {
  it('publishes the metadata with issuer = BASE_URL and RFC 9207 iss, and a JWKS of RS256 keys', async () => {
    const metadata = await json(await fetch(`${server.url}/.well-known/openid-configuration`));
    expect(metadata).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/sso/authorize`,
      token_endpoint: `${server.url}/sso/oidc/token`,
      userinfo_endpoint: `${server.url}/sso/userinfo`,
      jwks_uri: `${server.url}/sso/jwks`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      authorization_response_iss_parameter_supported: true,
    });
    const jwks = await json(await fetch(metadata.jwks_uri));
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
      expect(key).not.toHaveProperty('d'); // public halves only
    }
    const stored = await server.services.db.query('SELECT private_sealed FROM sso_signing_keys');
    for (const row of stored.rows) expect(row.private_sealed).toMatch(/^v1\./);
  });

  it('rotates the signing key: the new key is published at once and signs from not_before; the old one stays published', async () => {
    const admin = { Authorization: `Bearer ${server.adminToken}` };
    const before = await tokensFor(await codeFor(server, client, user.token));
    const oldKid = decodeProtectedHeader(before.id_token).kid;

    const upcoming = await json(await post(`${server.url}/admin/sso/signing-keys/rotate`, {}, admin));
    expect(Date.parse(upcoming.not_before)).toBeGreaterThan(Date.now() + 60_000);
    const published = async () =>
      (await json(await fetch(`${server.url}/sso/jwks`))).keys.map((key: { kid: string }) => key.kid);
    expect(await published()).toEqual(expect.arrayContaining([oldKid, upcoming.kid]));
    const stillOld = await tokensFor(await codeFor(server, client, user.token));
    expect(decodeProtectedHeader(stillOld.id_token).kid).toBe(oldKid);

    const now = await json(
      await post(`${server.url}/admin/sso/signing-keys/rotate`, { activate_after_seconds: 0 }, admin),
    );
    const after = await tokensFor(await codeFor(server, client, user.token));
    expect(decodeProtectedHeader(after.id_token).kid).toBe(now.kid);
    expect(await published()).toEqual(expect.arrayContaining([oldKid, upcoming.kid, now.kid]));
    // Tokens signed before the rotation still verify against the published set.
    const keys = createRemoteJWKSet(new URL(`${server.url}/sso/jwks`));
    for (const token of [before.id_token, after.id_token]) {
      await expect(jwtVerify(token, keys, { issuer: server.url, audience: client.client_id })).resolves.toBeTruthy();
    }
  });
});

const tokenForm = (code: string, extra: Record<string, string> = {}) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: REDIRECT_URI,
  ...extra,
});

async function tokensFor(code: string, extra: Record<string, string> = {}) {
  const response = await oidcToken(server, tokenForm(code, extra), {
    Authorization: basic(client.client_id, client.client_secret),
  });
  expect(response.status).toBe(200);
  return json(response);
}

async function oauthError(response: Response, status: number, error: string, code?: string) {
  expect(response.status).toBe(status);
  const body = await json(response);
  expect(body).toMatchObject({ error, status, ...(code ? { code } : {}) });
  expect(body.error_description).toBeTruthy();
  return body;
}

describe('the token endpoint', () => {
  it('answers access_token, token_type, expires_in and an id_token, uncached', async () => {
    const response = await oidcToken(
      server,
      tokenForm(await codeFor(server, client, user.token, { nonce: 'n-1', scope: 'openid' })),
      {
        Authorization: basic(client.client_id, client.client_secret),
      },
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await json(response);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid' });
    expect(decodeProtectedHeader(body.access_token).typ).toBe('at+jwt');
    const { payload } = await jwtVerify(body.id_token, createRemoteJWKSet(new URL(`${server.url}/sso/jwks`)), {
      issuer: server.url,
      audience: client.client_id,
    });
    expect(payload).toMatchObject({ sub: user.id, nonce: 'n-1' });
    expect(typeof payload.auth_time).toBe('number');
  });

  it('enforces PKCE S256: the verifier must match, is required with a challenge, and is refused without one', async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const challenge = await oidc.calculatePKCECodeChallenge(verifier);
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };

    let code = await codeFor(server, client, user.token, pkce);
    await oauthError(
      await oidcToken(server, tokenForm(code), { Authorization: basic(client.client_id, client.client_secret) }),
      400,
      'invalid_grant',
      'invalid_code_verifier',
    );
    await oauthError(
      await oidcToken(server, tokenForm(code, { code_verifier: oidc.randomPKCECodeVerifier() }), {
        Authorization: basic(client.client_id, client.client_secret),
      }),
      400,
      'invalid_grant',
      'invalid_code_verifier',
    );
    expect((await tokensFor(code, { code_verifier: verifier })).access_token).toBeTruthy();

    code = await codeFor(server, client, user.token);
    await oauthError(
      await oidcToken(server, tokenForm(code, { code_verifier: verifier }), {
        Authorization: basic(client.client_id, client.client_secret),
      }),
      400,
      'invalid_grant',
      'invalid_code_verifier',
    );
    // The spec's endpoint follows the same rule.
    code = await codeFor(server, client, user.token, pkce);
    const spec = { client_id: client.client_id, client_secret: client.client_secret, code, redirect_uri: REDIRECT_URI };
    await oauthError(await exchange(server, spec), 400, 'invalid_grant', 'invalid_code_verifier');
    expect((await exchange(server, { ...spec, code_verifier: verifier })).status).toBe(200);
  });

  it('refuses plain PKCE and a method without a challenge at the authorize step, back at the client', async () => {
    const refused: Record<string, string>[] = [
      { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' },
      { code_challenge: 'x'.repeat(43) },
      { code_challenge_method: 'S256' },
    ];
    for (const extra of refused) {
      const query = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        state: 's',
        ...extra,
      });
      const response = await fetch(`${server.url}/sso/authorize?${query}`, {
        redirect: 'manual',
        headers: { Authorization: `Bearer ${user.token}` },
      });
      expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('spends a code once across both token endpoints', async () => {
    const specBody = (code: string) => ({
      client_id: client.client_id,
      client_secret: client.client_secret,
      code,
      redirect_uri: REDIRECT_URI,
    });
    let code = await codeFor(server, client, user.token);
    expect((await exchange(server, specBody(code))).status).toBe(200);
    await oauthError(
      await oidcToken(server, tokenForm(code), { Authorization: basic(client.client_id, client.client_secret) }),
      400,
      'invalid_grant',
      'code_already_used',
    );

    code = await codeFor(server, client, user.token);
    await tokensFor(code);
    await oauthError(await exchange(server, specBody(code)), 400, 'invalid_grant', 'code_already_used');
  });

  it('revokes the access token a code issued when the code is used again', async () => {
    const code = await codeFor(server, client, user.token);
    const { access_token: accessToken } = await tokensFor(code);
    const userinfo = () => fetch(`${server.url}/sso/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } });
    expect((await userinfo()).status).toBe(200);
    await oauthError(
      await oidcToken(server, tokenForm(code), { Authorization: basic(client.client_id, client.client_secret) }),
      400,
      'invalid_grant',
      'code_already_used',
    );
    const revoked = await userinfo();
    expect(revoked.headers.get('www-authenticate')).toContain('invalid_token');
    await oauthError(revoked, 401, 'invalid_token', 'unauthorized');
  });

  it('authenticates clients one way only, and names the failure as RFC 6749 does', async () => {
    const code = await codeFor(server, client, user.token);
    const wrong = await oidcToken(server, tokenForm(code), { Authorization: basic(client.client_id, 'cs_wrong') });
    expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="sso"');
    await oauthError(wrong, 401, 'invalid_client', 'invalid_client');
    await oauthError(await oidcToken(server, tokenForm(code)), 401, 'invalid_client');
    await oauthError(
      await oidcToken(server, tokenForm(code, { client_secret: client.client_secret }), {
        Authorization: basic(client.client_id, client.client_secret),
      }),
      400,
      'invalid_request',
    );
    await oauthError(
      await oidcToken(
        server,
        { ...tokenForm(code), grant_type: 'client_credentials' },
        { Authorization: basic(client.client_id, client.client_secret) },
      ),
      400,
      'unsupported_grant_type',
    );
    await oauthError(
      await oidcToken(server, {
        grant_type: 'authorization_code',
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
      400,
      'invalid_request',
    );
    // None of that spent the code.
    expect((await tokensFor(code)).id_token).toBeTruthy();
  });

  it('answers userinfo 401 with a bearer challenge without a token', async () => {
    const response = await fetch(`${server.url}/sso/userinfo`);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await oauthError(response, 401, 'invalid_token', 'unauthorized');
  });
});
