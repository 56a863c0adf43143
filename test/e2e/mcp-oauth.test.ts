// Agents sign in (issue 25): a client registers itself (RFC 7591), signs its user in with PKCE and a resource indicator
// (RFC 8707) through openid-client, and calls the data server's MCP tools with the access token through the MCP SDK's
// client, on the user's own quota. Tokens for another audience, revoked ones and wrong registrations are refused.
// (The MCP SDK's OAuth provider driving the sign-in in Chromium is not covered here.)
import http from 'node:http';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { json, post, startTestServer, uniqueLoopback, type TestServer } from '../helpers.ts';
import { createUser, registerClient } from '../sso-helpers.ts';
import { withSampleData } from '../doubles/data-setup.ts';

const REGISTRATION_LIMIT = 4;
const CALLBACK = 'http://127.0.0.1/callback'; // a loopback IP literal without a port: any port at authorize

let data: TestServer;
let main: TestServer;

beforeAll(async () => {
  data = await startTestServer({ kind: 'data' });
  await withSampleData(data.services.db);
  main = await startTestServer({
    env: { MCP_URL: data.url, SSO_REGISTRATION_LIMIT_PER_ADDRESS: String(REGISTRATION_LIMIT) },
  });
  // One deployment: the data server knows its own address and the issuer (startTestServer set BASE_URL to its own).
  data.services.config.MCP_URL = data.url;
  data.services.config.BASE_URL = main.url;
});
afterAll(async () => {
  await main?.stop();
  await data?.stop();
});

type User = Awaited<ReturnType<typeof createUser>>;

/** A registration from a loopback address of this call's own (registrations are limited per address). */
function register(
  metadata: unknown,
  from = uniqueLoopback(),
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${main.url}/sso/oidc/register`,
      {
        method: 'POST',
        localAddress: from,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: text ? JSON.parse(text) : undefined,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(typeof metadata === 'string' ? metadata : JSON.stringify(metadata));
  });
}

async function registeredClient(extra: Record<string, unknown> = {}) {
  const response = await register({
    client_name: 'Tender agent',
    redirect_uris: [CALLBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
  expect(response.status).toBe(201);
  return response.body as { client_id: string; client_name: string };
}

const configuration = (clientId: string) =>
  oidc.discovery(new URL(main.url), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });

/** The sign-in through openid-client: PKCE, `resource` at authorize (the cabinet token stands in for the browser). */
async function signIn(
  config: oidc.Configuration,
  user: User,
  options: { resource?: string; tokenResource?: string; scope?: string; redirectUri?: string } = {},
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1:53682/callback';
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: options.scope ?? 'openid offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(options.resource ? { resource: options.resource } : {}),
  });
  const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
  expect(response.status).toBe(302);
  return oidc.authorizationCodeGrant(
    config,
    new URL(response.headers.get('location')!),
    { pkceCodeVerifier: verifier, expectedState: state },
    options.tokenResource ? { resource: options.tokenResource } : undefined,
  );
}

async function mcpClient(accessToken: string) {
  const client = new McpClient({ name: 'agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${data.url}/mcp/`), {
      requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
    }),
  );
  return client;
}

const usedBy = async (userId: string) =>
  Number(
    (await data.services.db.query('SELECT coalesce(sum(used), 0) AS n FROM data_usage WHERE account_id = $1', [userId]))
      .rows[0].n,
  );

/** A tools/list over plain HTTP: the status and the challenge. */
async function mcpStatus(accessToken: string) {
  const response = await post(
    `${data.url}/mcp/`,
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    {
      Authorization: `Bearer ${accessToken}`,
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
  );
  await response.text();
  return { status: response.status, challenge: response.headers.get('www-authenticate') };
}

describe('discovery', () => {
  it('names the registration endpoint in both metadata documents, and the issuer in the resource metadata', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = await json(await fetch(`${main.url}${path}`));
      expect(metadata.registration_endpoint).toBe(`${main.url}/sso/oidc/register`);
      expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
      expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
    }
    const resource = await json(await fetch(`${data.url}/.well-known/oauth-protected-resource/mcp`));
    expect(resource).toMatchObject({ resource: `${data.url}/mcp/`, authorization_servers: [main.url] });
  });
});

describe('dynamic client registration', () => {
  it('registers a public client: 201 with client_id, client_id_issued_at and the metadata; marked and audited', async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await register({
      client_name: 'Claude for tenders',
      redirect_uris: [CALLBACK, 'https://agent.example.com/oauth/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      logo_uri: 'https://agent.example.com/logo.png', // not understood: ignored (RFC 7591 §2)
    });
    expect(response.status).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      client_id: expect.stringMatching(/^dcr_[A-Za-z0-9_-]{22}$/),
      client_id_issued_at: expect.any(Number),
      client_name: 'Claude for tenders',
      redirect_uris: [CALLBACK, 'https://agent.example.com/oauth/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(response.body.client_id_issued_at).toBeGreaterThanOrEqual(before - 5);
    expect(response.body).not.toHaveProperty('client_secret');

    const card = await json(
      await fetch(`${main.url}/admin/sso/clients/${response.body.client_id}`, {
        headers: { Authorization: `Bearer ${main.adminToken}` },
      }),
    );
    expect(card).toMatchObject({
      name: 'Claude for tenders',
      token_endpoint_auth_method: 'none',
      registered_dynamically: true,
      automatic: false,
    });
    const audit = await main.services.db.query(
      `SELECT actor, object_type FROM audit_log WHERE action = 'registerSsoClientDynamically' AND object_id = $1`,
      [response.body.client_id],
    );
    expect(audit.rows).toEqual([{ actor: expect.stringMatching(/^address:127\./), object_type: 'sso_client' }]);
  });

  it('defaults to a public client with the authorization_code grant, named after its redirect host', async () => {
    const response = await register({ redirect_uris: ['https://tool.example.org/cb'] });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      client_name: 'tool.example.org',
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'none',
    });
  });

  it('refuses a confidential client, other grants, and redirect URIs outside the rules', async () => {
    const refusals: [unknown, number, string][] = [
      [
        { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'client_secret_basic' },
        400,
        'invalid_client_metadata',
      ],
      [{ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'client_secret_post' }, 400, 'invalid_client_metadata'],
      [{ redirect_uris: [CALLBACK], grant_types: ['client_credentials'] }, 400, 'invalid_client_metadata'],
      [{ redirect_uris: [CALLBACK], grant_types: ['refresh_token'] }, 400, 'invalid_client_metadata'],
      [{ redirect_uris: [CALLBACK], response_types: ['token'] }, 400, 'invalid_client_metadata'],
      [{ redirect_uris: [] }, 400, 'invalid_client_metadata'],
      [{ client_name: 'no URIs' }, 400, 'invalid_client_metadata'],
      [{ redirect_uris: ['http://agent.example.com/cb'] }, 400, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://*.example.com/cb'] }, 400, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://agent.example.com/cb#frag'] }, 400, 'invalid_redirect_uri'],
      [{ redirect_uris: ['javascript:alert(1)'] }, 400, 'invalid_redirect_uri'],
    ];
    for (const [metadata, status, error] of refusals) {
      const response = await register(metadata);
      expect({ metadata, status: response.status, error: response.body.error }).toEqual({ metadata, status, error });
    }
  });

  it('limits registrations per client address', async () => {
    const from = uniqueLoopback();
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof register>> | undefined;
    for (let i = 0; i <= REGISTRATION_LIMIT; i++) {
      last = await register({ redirect_uris: [CALLBACK] }, from);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array<number>(REGISTRATION_LIMIT).fill(201), 429]);
    expect(last!.body.code).toBe('too_many_registrations');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect((await register({ redirect_uris: [CALLBACK] })).status).toBe(201); // another address still registers
  });
});

describe('an agent signs its user in and uses the data server', () => {
  it('calls search_tenders with the access token for the data server, on the user’s quota', async () => {
    const agent = await registeredClient();
    const user = await createUser(main, 'Agent User');
    const tokens = await signIn(await configuration(agent.client_id), user, { resource: `${data.url}/mcp/` });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: `${data.url}/mcp/`, client_id: agent.client_id });
    expect(tokens.refresh_token).toMatch(/^rt_/);
    expect(await usedBy(user.id)).toBe(0);

    const client = await mcpClient(tokens.access_token);
    const result = await client.callTool({ name: 'search_tenders', arguments: { query: 'medicines', limit: 2 } });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { items: unknown[] }).items.length).toBeGreaterThan(0);
    await client.close();
    expect(await usedBy(user.id)).toBe(1);
    // The data account was made on first use, on the free tariff.
    const account = await data.services.db.query('SELECT tariff FROM data_accounts WHERE id = $1', [user.id]);
    expect(account.rows).toEqual([{ tariff: 'free' }]);

    // The REST data API takes the same token and charges the same account.
    const rest = await fetch(`${data.url}/v1/tenders?limit=1`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(rest.status).toBe(200);
    expect(await usedBy(user.id)).toBe(2);
  });

  it('takes {mcp_url} itself as the resource, and a refreshed token keeps the audience', async () => {
    const agent = await registeredClient();
    const user = await createUser(main);
    const config = await configuration(agent.client_id);
    const tokens = await signIn(config, user, { resource: data.url, tokenResource: data.url });
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await mcpStatus(refreshed.access_token)).status).toBe(200);
  });

  it('refuses a token without the data server’s audience with 401 and the resource metadata challenge', async () => {
    const agent = await registeredClient();
    const user = await createUser(main);
    const tokens = await signIn(await configuration(agent.client_id), user); // no resource: a token for userinfo
    const userinfo = await fetch(`${main.url}/sso/userinfo`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(200);
    const { status, challenge } = await mcpStatus(tokens.access_token);
    expect(status).toBe(401);
    expect(challenge).toBe(
      `Bearer realm="svc", resource_metadata="${data.url}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
    );
    const rest = await fetch(`${data.url}/v1/tenders?limit=1`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toContain(
      `resource_metadata="${data.url}/.well-known/oauth-protected-resource/v1"`,
    );
    expect(await usedBy(user.id)).toBe(0);
  });

  it('refuses a revoked token and an expired one with 401', async () => {
    const agent = await registeredClient();
    const user = await createUser(main);
    const config = await configuration(agent.client_id);
    const tokens = await signIn(config, user, { resource: `${data.url}/mcp/` });
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await mcpStatus(tokens.access_token)).status).toBe(401);

    const other = await signIn(config, user, { resource: `${data.url}/mcp/` });
    expect((await mcpStatus(other.access_token)).status).toBe(200);
    await main.services.db.query(
      `UPDATE sso_access_tokens SET expires_at = now() - interval '1 second' WHERE audience IS NOT NULL AND user_id = $1`,
      [user.id],
    );
    expect((await mcpStatus(other.access_token)).status).toBe(401);
  });

  it('gives an operator’s confidential client the same, and introspection names the audience', async () => {
    const site = await registerClient(main, { redirect_uris: 'http://127.0.0.1:53682/callback' });
    const config = await oidc.discovery(
      new URL(main.url),
      site.client_id,
      undefined,
      oidc.ClientSecretBasic(site.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const user = await createUser(main);
    const tokens = await signIn(config, user, { resource: `${data.url}/mcp/` });
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      aud: `${data.url}/mcp/`,
      token_type: 'Bearer',
    });
    expect(await oidc.tokenIntrospection(config, tokens.refresh_token!)).toMatchObject({
      active: true,
      aud: `${data.url}/mcp/`,
    });
    const plain = await signIn(config, user);
    expect(await oidc.tokenIntrospection(config, plain.access_token)).not.toHaveProperty('aud');
  });

  it('refuses the tokens of a client an operator disabled, from the next request on', async () => {
    const agent = await registeredClient();
    const user = await createUser(main);
    const tokens = await signIn(await configuration(agent.client_id), user, { resource: `${data.url}/mcp/` });
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
    const disabled = await fetch(`${main.url}/admin/sso/clients/${agent.client_id}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${main.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(disabled.status).toBe(200);
    expect((await mcpStatus(tokens.access_token)).status).toBe(401);
  });

  it('refuses a resource other than the data server, at authorize and at the token request', async () => {
    const agent = await registeredClient();
    const user = await createUser(main);
    const config = await configuration(agent.client_id);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: 'http://127.0.0.1:53682/callback',
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: 'st',
      resource: 'https://elsewhere.example.com/api',
    });
    const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('code')).toBeNull();

    const refused = await signIn(config, user, {
      resource: `${data.url}/mcp/`,
      tokenResource: data.url,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(oidc.ResponseBodyError);
    expect((refused as oidc.ResponseBodyError).error).toBe('invalid_target');
  });

  it('issues no refresh token to a client that did not register the refresh_token grant', async () => {
    const agent = await registeredClient({ grant_types: ['authorization_code'] });
    const user = await createUser(main);
    const tokens = await signIn(await configuration(agent.client_id), user, { resource: `${data.url}/mcp/` });
    expect(tokens.refresh_token).toBeUndefined();
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
  });
});
