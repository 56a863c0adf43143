// Issue 25's "done when" for agents: the MCP TypeScript SDK's client, with its OAuth provider and no key, connects to
// /mcp/, discovers the protected-resource and authorization-server metadata, registers itself, sends its user through
// sign-in and consent in Chromium, and calls search_tenders on the user's quota.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import {
  Client as McpClient,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '../helpers.ts';
import { PASSWORD, createUser } from '../sso-helpers.ts';
import { withSampleData } from '../doubles/data-setup.ts';
import { launchChromium } from '../chromium.ts';
import { TOOL_NAMES } from '../../src/data-api/tool-names.ts';

let data: TestServer;
let main: TestServer;
let callbacks: http.Server;
let redirectUri: string;
let browser: Browser;

beforeAll(async () => {
  data = await startTestServer({ kind: 'data' });
  await withSampleData(data.services.db);
  // Every registration here comes from 127.0.0.1, which the per-address limit counts in the shared database.
  main = await startTestServer({ env: { MCP_URL: data.url, SSO_REGISTRATION_LIMIT_PER_ADDRESS: '1000000' } });
  data.services.config.MCP_URL = data.url;
  data.services.config.BASE_URL = main.url;
  // The agent's loopback callback page (RFC 8252 §7.3).
  callbacks = http.createServer((_request, response) =>
    response.end('<!doctype html><title>Agent</title><p>you may close this window</p>'),
  );
  await new Promise<void>((resolve) => callbacks.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => callbacks?.close(resolve));
  await main?.stop();
  await data?.stop();
});

/** An agent's OAuth state kept in memory, as a desktop MCP client keeps it on disk. */
class MemoryProvider implements OAuthClientProvider {
  client: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
  stored: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
  verifier = '';
  authorizationUrl: URL | undefined;
  /** Our authorize step requires state (the SDK sends one when the provider makes it). */
  readonly sentState = randomBytes(16).toString('base64url');

  get redirectUrl() {
    return redirectUri;
  }
  get clientMetadata() {
    return {
      client_name: 'Tender agent',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return this.sentState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: NonNullable<typeof this.client>) {
    this.client = information;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: NonNullable<typeof this.stored>) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovery: Parameters<NonNullable<OAuthClientProvider['saveDiscoveryState']>>[0] | undefined;
  saveDiscoveryState(state: NonNullable<typeof this.discovery>) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

describe('an MCP client with the SDK’s OAuth provider', () => {
  it('registers, signs its user in through the form and consent in Chromium, and calls search_tenders', async () => {
    const user = await createUser(main, 'Agent Owner');
    const provider = new MemoryProvider();
    const first = new StreamableHTTPClientTransport(new URL(`${data.url}/mcp/`), { authProvider: provider });
    await expect(new McpClient({ name: 'agent', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    // It found the issuer through the resource metadata and registered itself there.
    expect(provider.client?.client_id).toMatch(/^dcr_/);
    const authorization = provider.authorizationUrl!;
    expect(`${authorization.origin}${authorization.pathname}`).toBe(`${main.url}/sso/authorize`);
    expect(authorization.searchParams.get('resource')).toBe(`${data.url}/mcp/`);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorization.href);
    await page.fill('#email', user.email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL((url) => url.pathname === '/sso/consent'), page.click('button[type=submit]')]);
    // Consent names the agent, the tools it gets, and that its name is its own word.
    expect(await page.textContent('h1')).toBe('Let Tender agent sign you in with svc ID?');
    expect(await page.locator('ul.tools li').allTextContents()).toEqual([...TOOL_NAMES]);
    expect(await page.textContent('[data-self-registered]')).toContain('This application registered itself');
    const consentUrl = page.url();
    await page.goto(`${consentUrl}&lang=ru`);
    expect(await page.textContent('h1')).toBe('Разрешить сайту «Tender agent» вход через svc ID?');
    expect(await page.textContent('ul.tools + p, p:has(+ ul.tools)')).toContain('инструментами данных о закупках');
    await page.goto(consentUrl);
    await Promise.all([page.waitForURL((url) => url.pathname === '/callback'), page.click('button[value=allow]')]);
    const landed = new URL(page.url());

    // A site asking no resource gets no tools on its consent page.
    const site = (await (
      await fetch(`${main.url}/sso/oidc/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ client_name: 'Plain site', redirect_uris: [redirectUri] }),
      })
    ).json()) as { client_id: string };
    await page.goto(
      `${main.url}/sso/authorize?${new URLSearchParams({
        client_id: site.client_id,
        redirect_uri: redirectUri,
        state: 's',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString()}`,
    );
    expect(await page.textContent('h1')).toBe('Let Plain site sign you in with svc ID?');
    expect(await page.locator('ul.tools').count()).toBe(0);
    await context.close();
    expect(landed.searchParams.get('state')).toBe(provider.sentState);

    await first.finishAuth(landed.searchParams);
    expect(decodeJwt(provider.stored!.access_token).aud).toBe(`${data.url}/mcp/`);

    const client = new McpClient({ name: 'agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${data.url}/mcp/`), { authProvider: provider }));
    const result = await client.callTool({ name: 'search_tenders', arguments: { query: 'medicines', limit: 1 } });
    expect(result.isError).toBeFalsy();
    await client.close();
    const used = await data.services.db.query(
      'SELECT coalesce(sum(used), 0)::int AS n FROM data_usage WHERE account_id = $1',
      [user.id],
    );
    expect(used.rows[0].n).toBe(1);
  });
});
