// Tests talk to the real PostgreSQL and Temporal of the global setup, over HTTP, through the servers users hit.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect, inject } from 'vitest';
import { parseConfig, type Config } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { createServices, type Services } from '../src/services.ts';
import { listen } from '../src/http/server.ts';
import { createMainApp } from '../src/main-app.ts';
import { createDataApp } from '../src/data-app.ts';
import { createAdminToken } from '../src/admin/auth.ts';
import { startWorker, type RunningWorker } from '../src/worker.ts';
import { createDb } from '../src/db.ts';

export function uniqueId(prefix = 't'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/**
 * An id as the service writes it: a UUID in PostgreSQL's canonical form, lower case with hyphens (src/uuid.ts's isUuid
 * also takes upper case, since it reads what callers send). Anchored: `expect(id).toMatch(UUID_PATTERN)`,
 * `expect.stringMatching(UUID_PATTERN)`; inside a larger pattern, UUID_SOURCE.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** UUID_PATTERN without its anchors, for a larger pattern: new RegExp(`/deals/(${UUID_SOURCE})`). */
export const UUID_SOURCE = UUID_PATTERN.source.slice(1, -1);

/**
 * A loopback address of this test's own (all of 127.0.0.0/8 reaches this machine): limits per client address are
 * counted in the one database every test shares, so a test of them must be a client no other test is.
 */
export function uniqueLoopback(): string {
  const [a = 0, b = 0, c = 0] = randomBytes(3);
  return `127.${1 + (a % 254)}.${b}.${1 + (c % 254)}`;
}

/**
 * Asks a password reset mail as a client of its own address: the reset mails of one client address are limited per
 * hour in PostgreSQL (src/accounts/mail-limits.ts), and the test files share one database, so tests that are not about
 * that limit must not spend one address's allowance together. The server must trust X-Forwarded-For (TRUST_PROXY=1).
 */
export function askPasswordReset(serverUrl: string, email: string): Promise<Response> {
  return post(`${serverUrl}/cabinet/password/forgot`, { email }, { 'X-Forwarded-For': uniqueLoopback() });
}

export function uniqueEmail(prefix = 'user'): string {
  return `${uniqueId(prefix)}@example.com`;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return parseConfig({
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: uniqueId('queue'),
    DATA_DIR: inject('dataDir'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Tests' webhook receivers listen on 127.0.0.1, as a developer's do. A test of the real default passes
    // WEBHOOK_ALLOW_LOOPBACK: '' (blank counts as unset).
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    // Every test's client is 127.0.0.1, and the widget creation limits count in the shared database: tests of that
    // limit set their own and come from a uniqueLoopback() address.
    WIDGET_CREATE_LIMIT_PER_ADDRESS: '1000000',
    // The same for sign-in attempts per address (every attempt counts until a right password takes it back): tests
    // of that limit set their own and sign in from addresses of their own.
    SSO_LOGIN_ADDRESS_LIMIT: '1000000',
    ...env,
  });
}

export interface TestServer {
  url: string;
  services: Services;
  adminToken: string;
  stop(): Promise<void>;
}

/** The main (or data) server on a free port, with a fresh administrator token. */
export async function startTestServer(
  options: { kind?: 'main' | 'data'; env?: Record<string, string>; worker?: boolean } = {},
): Promise<TestServer> {
  const config = testConfig(options.env);
  const services = createServices(config, createLogger(config.LOG_LEVEL));
  const app = options.kind === 'data' ? createDataApp(services) : createMainApp(services);
  const server = await listen(app, '127.0.0.1', 0);
  // Links in mails and redirects point at this server.
  services.config.BASE_URL = server.url;
  const worker: RunningWorker | undefined = options.worker ? await startWorker(services) : undefined;
  const adminToken = await createAdminToken(services.db, 'test');
  return {
    url: server.url,
    services,
    adminToken,
    async stop() {
      await server.stop();
      await worker?.stop();
      await services.close();
    },
  };
}

export async function json(response: Response): Promise<any> {
  const text = await response.text();
  return text ? JSON.parse(text) : undefined;
}

export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A buyer made by a deal follows the invitation link from their mail and sets a password: their cabinet headers. */
export async function signInFromInvitation(server: TestServer, email: string): Promise<Record<string, string>> {
  let token: string | undefined;
  await expect
    .poll(
      async () => {
        const mail = await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, {
          headers: { Authorization: `Bearer ${server.adminToken}` },
        });
        // Deal notices may have arrived since: the newest mail that carries an invitation link.
        const texts: string[] = (await json(mail)).items.map((item: { text: string }) => item.text);
        token = texts.map((text) => text.match(/\/cabinet\/invite\?token=(\S+)/)?.[1]).find(Boolean);
        return token;
      },
      { timeout: 20_000 },
    )
    .toBeDefined();
  const accepted = await post(`${server.url}/cabinet/invite/accept`, { token, password: 'a strong password' });
  expect(accepted.status).toBe(200);
  return { Authorization: `Bearer ${(await json(accepted)).token}` };
}

/**
 * A connection as the database's owner, for what a test sets up that the service's own role may not do (a trigger, a
 * function); the service connects as the application role, which owns nothing. End it when done.
 */
export function ownerDb(max = 1) {
  return createDb(inject('databaseOwnerUrl'), max);
}

/**
 * A deal of the marketplace (its secret key) made through the API with a contract and an approval asked of the buyer,
 * who (and the seller, when one is asked for) followed the invitation and is signed in to the cabinet.
 */
export async function dealInApproval(
  server: TestServer,
  secretKey: string,
  options: { amount?: number; seller?: boolean } = {},
) {
  const key = { 'X-Svc-Key': secretKey };
  const api = (path: string) => `${server.url}/api/mkt${path}`;
  const buyerEmail = uniqueEmail('buyer');
  const sellerEmail = options.seller ? uniqueEmail('seller') : undefined;
  const fields = {
    external_id: uniqueId('order'),
    buyer_email: buyerEmail,
    ...(sellerEmail ? { seller_email: sellerEmail } : {}),
    title: 'Desk',
    amount: options.amount ?? 4200,
  };
  const deal = await json(await post(api('/deals'), fields, key));
  const upload = await fetch(api(`/deals/${deal.id}/documents?kind=contract&name=Terms.pdf`), {
    method: 'POST',
    headers: { ...key, 'Content-Type': 'application/pdf' },
    body: Buffer.from('%PDF-1.4 desk'),
  });
  expect(upload.status).toBe(201);
  const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, key));
  const buyer = await signInFromInvitation(server, buyerEmail);
  const seller = sellerEmail ? await signInFromInvitation(server, sellerEmail) : undefined;
  return { dealId: deal.id as string, approvalId: approval.id as string, buyer, seller, buyerEmail };
}
