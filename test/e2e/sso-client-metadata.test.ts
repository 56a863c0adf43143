// Client ID metadata documents (the MCP authorization specification): a client_id that is the address of a JSON
// document needs no registration. openid-client signs in with such a client (public, PKCE); the document is cached
// for its HTTP lifetime; the consent page names the client with its host; and every document or address the draft or
// the SSRF guard forbids is refused before anything else. The documents are served from the loopback, which only
// SSO_CLIENT_METADATA_ALLOW_LOOPBACK (a development setting) allows; a server without it refuses them unfetched.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheLifetime } from '../../src/sso/client-metadata.ts';
import { json, startTestServer, type TestServer } from '../helpers.ts';
import { Browser, createUser } from '../sso-helpers.ts';

const CALLBACK = 'http://127.0.0.1/callback';

let main: TestServer;
let strict: TestServer;
let documents: http.Server;
let origin: string;
/** What each path answers, and how often it was asked. */
const served = new Map<string, { status?: number; headers?: Record<string, string>; body?: string; hang?: boolean }>();
const hits = new Map<string, number>();

beforeAll(async () => {
  documents = http.createServer((request, response) => {
    const path = request.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const answer = served.get(path);
    if (!answer) return response.writeHead(404).end();
    if (answer.hang) return; // never answers
    response.writeHead(answer.status ?? 200, { 'Content-Type': 'application/json', ...answer.headers });
    response.end(answer.body);
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  [main, strict] = await Promise.all([
    startTestServer({ env: { SSO_CLIENT_METADATA_ALLOW_LOOPBACK: 'true' } }),
    startTestServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([main?.stop(), strict?.stop()]);
  documents?.closeAllConnections();
  await new Promise((resolve) => documents?.close(resolve));
});

let counter = 0;
/** A new document address serving `metadata` (client_id set to the address unless given). */
function publish(metadata: Record<string, unknown> = {}, answer: { headers?: Record<string, string> } = {}) {
  const path = `/clients/${++counter}/metadata.json`;
  const clientId = `${origin}${path}`;
  served.set(path, {
    headers: { 'Cache-Control': 'max-age=600', ...answer.headers },
    body: JSON.stringify({ client_id: clientId, client_name: 'Doc Agent', redirect_uris: [CALLBACK], ...metadata }),
  });
  return { clientId, path };
}

/** GET /sso/authorize for the client, with the user's cabinet token, asking for JSON errors. */
async function authorizeAs(server: TestServer, clientId: string, token: string, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:4567/callback',
    state: 'st',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    ...extra,
  });
  return fetch(`${server.url}/sso/authorize?${query.toString()}`, {
    redirect: 'manual',
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
  });
}

describe('client ID metadata documents', () => {
  it('are advertised in both metadata documents', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      expect(await json(await fetch(`${main.url}${path}`))).toMatchObject({
        client_id_metadata_document_supported: true,
      });
    }
  });

  it('let openid-client sign in as a public client with PKCE, no registration', async () => {
    const user = await createUser(main, 'Doc User');
    const { clientId } = publish({ grant_types: ['authorization_code', 'refresh_token'] });
    const config = await oidc.discovery(new URL(main.url), clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const redirectUri = 'http://127.0.0.1:51234/callback';
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'st',
    });
    const answer = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
    expect(answer.status).toBe(302);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(answer.headers.get('location')!), {
      pkceCodeVerifier: verifier,
      expectedState: 'st',
    });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: clientId, aud: clientId, sub: user.id });
    expect(tokens.refresh_token).toMatch(/^rt_/);
    const stored = await main.services.db.query(
      `SELECT name, token_endpoint_auth_method, registered_dynamically, redirect_uris FROM sso_clients WHERE client_id = $1`,
      [clientId],
    );
    expect(stored.rows).toEqual([
      {
        name: `Doc Agent (${new URL(origin).host})`,
        token_endpoint_auth_method: 'none',
        registered_dynamically: true,
        redirect_uris: [CALLBACK],
      },
    ]);
    // Its appearance is on the record, once.
    const audit = await main.services.db.query(
      `SELECT actor FROM audit_log WHERE action = 'resolveSsoClientMetadataDocument' AND object_id = $1`,
      [clientId],
    );
    expect(audit.rows).toEqual([{ actor: `document:${new URL(origin).host}` }]);
    // PKCE is required: the same request without a challenge goes back with invalid_request.
    const withoutPkce = await authorizeAs(main, clientId, user.token, {
      code_challenge: '',
      code_challenge_method: '',
    });
    expect(new URL(withoutPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('are cached for their HTTP lifetime in PostgreSQL, and fetched again after it', async () => {
    const user = await createUser(main);
    const { clientId, path } = publish();
    expect((await authorizeAs(main, clientId, user.token)).status).toBe(302);
    expect((await authorizeAs(main, clientId, user.token)).status).toBe(302);
    expect(hits.get(path)).toBe(1);
    const cached = await main.services.db.query<{ seconds: number }>(
      `SELECT extract(epoch FROM expires_at - fetched_at)::int AS seconds FROM sso_client_metadata_documents WHERE client_id = $1`,
      [clientId],
    );
    expect(cached.rows[0].seconds).toBe(600);

    // Past its lifetime the document is fetched again, and what it says now counts.
    served.set(path, {
      headers: { 'Cache-Control': 'no-store' },
      body: JSON.stringify({
        client_id: clientId,
        client_name: 'Renamed',
        redirect_uris: ['https://agent.example/cb'],
      }),
    });
    await main.services.db.query(
      `UPDATE sso_client_metadata_documents SET expires_at = now() - interval '1 second' WHERE client_id = $1`,
      [clientId],
    );
    const moved = await authorizeAs(main, clientId, user.token);
    expect(moved.status).toBe(400);
    expect(await json(moved)).toMatchObject({ code: 'redirect_uri_not_allowed' });
    expect(hits.get(path)).toBe(2);
    // no-store: every request fetches it.
    await authorizeAs(main, clientId, user.token, { redirect_uri: 'https://agent.example/cb' });
    expect(hits.get(path)).toBe(3);
    expect(cacheLifetime('public, max-age=999999')).toBe(86_400);
    expect(cacheLifetime(undefined)).toBe(300);
    expect(cacheLifetime('no-cache')).toBe(0);
  });

  it('name the client on the consent page with the host of its document', async () => {
    const user = await createUser(main);
    const { clientId } = publish({ client_name: 'Helpful Agent' });
    const browser = new Browser(main);
    browser.cookies.set('svc_session', user.token);
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:4567/callback',
      state: 'st',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const reply = await browser.get(`/sso/authorize?${query.toString()}`);
    expect(new URL(reply.location!, main.url).pathname).toBe('/sso/consent');
    const page = await browser.get(reply.location!);
    expect(page.text).toContain(`Helpful Agent (${new URL(origin).host})`);
    expect(page.text).toContain('data-self-registered');
  });

  it('refuse a document the draft does not allow, before anything else', async () => {
    const user = await createUser(main);
    const refusedWith = async (clientId: string, reason: RegExp) => {
      const answer = await authorizeAs(main, clientId, user.token);
      expect(answer.status).toBe(400);
      const body = await json(answer);
      expect(body.code).toBe('unknown_client');
      expect(body.detail).toMatch(reason);
      const stored = await main.services.db.query('SELECT 1 FROM sso_clients WHERE client_id = $1', [clientId]);
      expect(stored.rowCount).toBe(0);
    };
    await refusedWith(publish({ client_id: 'https://elsewhere.example/metadata.json' }).clientId, /client_id is not/);
    await refusedWith(publish({ token_endpoint_auth_method: 'client_secret_basic' }).clientId, /must be public/);
    await refusedWith(publish({ client_secret: 'cs_mine' }).clientId, /must be public/);
    await refusedWith(publish({ grant_types: ['client_credentials'] }).clientId, /grant_types/);
    await refusedWith(publish({ redirect_uris: ['http://evil.example/cb'] }).clientId, /redirect_uris/);
    await refusedWith(publish({ padding: 'x'.repeat(6000) }).clientId, /larger than 5120 bytes/);

    const redirected = publish();
    served.set(redirected.path, { status: 302, headers: { Location: `${origin}/clients/1/metadata.json` } });
    await refusedWith(redirected.clientId, /HTTP 302/);
    const notJson = publish();
    served.set(notJson.path, { body: '<html>' });
    await refusedWith(notJson.clientId, /not JSON/);

    await refusedWith(`${origin}/`, /must have a path/);
    await refusedWith(`${origin}/a/../metadata.json`, /not in its normal form|path/);
    await refusedWith(`${origin}/metadata.json?v=1`, /no user, password, query or fragment/);
    // Plain http is a development allowance for the loopback alone; private addresses are refused unfetched.
    await refusedWith('http://agent.example/metadata.json', /must be an https URL/);
    await refusedWith('https://10.1.2.3/metadata.json', /not a public or loopback address/);
    await refusedWith('https://[::ffff:a9fe:a9fe]/metadata.json', /not a public or loopback address/);
  });

  it('give up on an address that does not answer within 5 s', { timeout: 15_000 }, async () => {
    const user = await createUser(main);
    const { clientId, path } = publish();
    served.set(path, { hang: true });
    const started = Date.now();
    const answer = await authorizeAs(main, clientId, user.token);
    expect(answer.status).toBe(400);
    expect((await json(answer)).detail).toMatch(/no whole answer within 5 s/);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('are refused from the loopback without the development setting, never fetched', async () => {
    const user = await createUser(strict);
    const { clientId, path } = publish();
    const answer = await authorizeAs(strict, clientId, user.token);
    expect(answer.status).toBe(400);
    expect((await json(answer)).detail).toMatch(/must be an https URL/);
    expect(hits.get(path)).toBeUndefined();
  });
});
