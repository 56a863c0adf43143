// What the SSO tests share: a registered client, a user with a password and a cabinet token, the calls a client
// makes (authorize without following redirects, the JSON exchange), and a browser without JavaScript that keeps cookies.
import { ensureUser, setPassword } from '../src/accounts/users.ts';
import { createSession } from '../src/accounts/sessions.ts';
import { json, post, uniqueEmail, uniqueId, type TestServer } from './helpers.ts';
import { PageBrowser } from './page-browser.ts';
export type { Reply } from './page-browser.ts';

export const PASSWORD = 'a strong password';
export const REDIRECT_URI = 'https://client.example.com/callback';

export interface Client {
  client_id: string;
  client_secret: string;
  redirect_uris: string;
  name: string;
}

export async function registerClient(
  server: TestServer,
  fields: Partial<{ client_id: string; name: string; redirect_uris: string }> = {},
): Promise<Client> {
  const body = { client_id: uniqueId('client'), name: 'Client shop', redirect_uris: REDIRECT_URI, ...fields };
  const response = await post(`${server.url}/admin/sso/clients`, body, {
    Authorization: `Bearer ${server.adminToken}`,
  });
  if (response.status !== 201)
    throw new Error(`registering ${JSON.stringify(body)}: ${response.status} ${await response.text()}`);
  return json(response);
}

/** A user as a deal makes them (svc ID, personal organization) who has set a password, and their cabinet token. */
export async function createUser(server: TestServer, name = 'Anna Buyer') {
  const email = uniqueEmail('sso');
  const { user } = await ensureUser(server.services.db, { email, name });
  await setPassword(server.services.db, user.id, PASSWORD);
  // The session is made directly, not through POST /cabinet/login: a test server's low per-address sign-in limits
  // count in the database every test file shares, and would refuse a sign-in from 127.0.0.1 now and then.
  const { token } = await createSession(server.services.db, user.id, server.services.config.CABINET_TOKEN_TTL_SECONDS);
  return { id: user.id, email, name, token };
}

export function authorizeUrl(server: TestServer, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams(
    Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return `${server.url}/sso/authorize?${query.toString()}`;
}

export function authorize(
  server: TestServer,
  params: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(authorizeUrl(server, params), { redirect: 'manual', headers });
}

/** Authorizes with the user's cabinet token and answers the code from the redirect. */
export async function codeFor(
  server: TestServer,
  client: Client,
  token: string,
  extra: Record<string, string> = {},
): Promise<string> {
  const response = await authorize(
    server,
    { client_id: client.client_id, redirect_uri: REDIRECT_URI, state: 'st', ...extra },
    { Authorization: `Bearer ${token}` },
  );
  const location = response.headers.get('location');
  const code = location && new URL(location).searchParams.get('code');
  if (response.status !== 302 || !code)
    throw new Error(`authorize: ${response.status} ${location ?? (await response.text())}`);
  return code;
}

export function exchange(server: TestServer, body: Record<string, unknown>): Promise<Response> {
  return post(`${server.url}/sso/token`, body);
}

export function oidcToken(
  server: TestServer,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}/sso/oidc/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A browser without JavaScript that asks for pages, as browsers do (test/page-browser.ts). */
export class Browser extends PageBrowser {
  constructor(server: TestServer, headers: Record<string, string> = {}) {
    super(server, { Accept: 'text/html', ...headers });
  }
}

/** The hidden fields of a page's forms, unescaped (the last form's value wins for a repeated name). */
export function hiddenFields(text: string): Record<string, string> {
  const unescape = (value: string) =>
    value.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  return Object.fromEntries(
    [...text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], unescape(m[2])]),
  );
}
