// The faults suite's tools: the cluster on free ports in a folder of its own, a marketplace's webhook receiver that
// counts by event id and can be down, slow or gone, a client that retries as a good integrator does while recording
// every status it saw, and a driver that takes deals through their whole lifecycle whatever state a fault left them in.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { startCluster, type Cluster } from '../../src/dev/cluster.ts';
import { freePorts, isPortFree } from '../../src/dev/ports.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value other than undefined, or throws `what` at the deadline. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined> | T | undefined,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

/**
 * `count` consecutive free ports: the Temporal server takes its frontend port and the 8 after it. Below 32768, as
 * Temporal keeps its services' ports in a smallint (src/dev/temporal-server.ts), and above the usual dev ports.
 */
async function freeRange(count: number): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const first = 20_000 + Math.floor(Math.random() * 12_000);
    const ports = Array.from({ length: count }, (_, i) => first + i);
    if ((await Promise.all(ports.map((port) => isPortFree('127.0.0.1', port)))).every(Boolean)) return first;
  }
  throw new Error(`no ${count} consecutive free ports`);
}

export interface FaultCluster extends Cluster {
  dataDir: string;
  admin: Record<string, string>;
}

/**
 * The production topology (src/dev/cluster.ts) in a temporary DATA_DIR; `stop()` also removes the folder, unless
 * FAULTS_KEEP_DATA is set: then its logs (DATA_DIR/logs/<process>.log) stay for a look after a failure. The Temporal
 * Web UI runs only when `temporalUi` asks for it: a scenario that never opens it need not wait for its build.
 */
export async function startFaultCluster(
  env: Record<string, string>,
  options: { temporalUi?: boolean } = {},
): Promise<FaultCluster> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-faults-'));
  chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its folder
  const port = await freeRange(3); // the proxy and the two main servers after it
  const [dataPort, postgresPort, temporalUiPort] = await freePorts(3);
  const cluster = await startCluster({
    dataDir,
    host: '127.0.0.1',
    port,
    dataPort,
    postgresPort,
    temporalPort: await freeRange(9),
    temporalUiPort: options.temporalUi ? temporalUiPort : undefined,
    namespace: 'default',
    workers: 2,
    env,
    say: (message) => console.log(`[cluster] ${message}`),
  }).catch((error) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  const stopCluster = cluster.stop;
  return Object.assign(cluster, {
    dataDir,
    admin: { Authorization: `Bearer ${cluster.demo.admin_token}` },
    stop: async () => {
      await stopCluster();
      if (process.env.FAULTS_KEEP_DATA) console.log(`[cluster] kept ${dataDir}`);
      else rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

export interface Arrival {
  event_id: string;
  event: string;
  deal_id: string;
}

/**
 * A marketplace's webhook endpoint. It counts every request by event id (retries of one event carry the same one),
 * and keeps the order in which each deal's events first arrived. `mode` says how it answers: `up` 200; `slow` holds
 * the request past the service's timeout, never answering; `gone` 410. `down()` closes its port (connection refused)
 * until `up()`.
 */
export class Receiver {
  mode: 'up' | 'slow' | 'gone' = 'up';
  /** Requests per event id, whatever the answer. */
  readonly requests = new Map<string, number>();
  /** The deal of every event id seen. */
  readonly dealOf = new Map<string, string>();
  /** Event ids answered 2xx, with how often. */
  readonly delivered = new Map<string, number>();
  /** Per deal, event types in order of their first 2xx arrival. */
  readonly orderByDeal = new Map<string, string[]>();
  private server!: http.Server;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks/svc`;
  }

  async up(): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        const arrival: Arrival = { event_id: body.event_id, event: body.event, deal_id: body.id };
        this.requests.set(arrival.event_id, (this.requests.get(arrival.event_id) ?? 0) + 1);
        this.dealOf.set(arrival.event_id, arrival.deal_id);
        if (this.mode === 'slow') return; // the service gives up at its timeout and retries
        if (this.mode === 'gone') {
          response.writeHead(410).end('gone');
          return;
        }
        const times = this.delivered.get(arrival.event_id) ?? 0;
        this.delivered.set(arrival.event_id, times + 1);
        if (times === 0) {
          const order = this.orderByDeal.get(arrival.deal_id) ?? [];
          order.push(arrival.event);
          this.orderByDeal.set(arrival.deal_id, order);
        }
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Closes the port: the service's next attempts get connection refused. */
  down(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** Retried duplicates: 2xx answers beyond the first for one event id. */
  get duplicates(): number {
    let extra = 0;
    for (const times of this.delivered.values()) extra += times - 1;
    return extra;
  }
}

/** Every status the client saw, by status, so a scenario can say (and assert) that no 500 ever came. */
export class Client {
  readonly statuses = new Map<number | 'network', number>();
  readonly failures: string[] = [];

  constructor(readonly base: string) {}

  private note(status: number | 'network') {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  /** One request, as it went. */
  async once(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: Headers; body: any }> {
    const response = await fetch(`${this.base}${url}`, {
      method,
      headers: {
        ...(body === undefined || Buffer.isBuffer(body) ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    this.note(response.status);
    if (response.status >= 500) this.failures.push(`${method} ${url}: ${response.status} ${text.slice(0, 300)}`);
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  /**
   * A request retried as a careful integrator retries: after a refused connection, a 502 from the load balancer (the
   * instance died under the request) or a 503 (after its Retry-After). Other answers are returned as they are.
   */
  async call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 240_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const answer = await this.once(method, url, body, headers);
        if (answer.status !== 502 && answer.status !== 503) return answer;
        if (Date.now() > deadline)
          throw new Error(`${method} ${url}: still ${answer.status} after ${timeoutMs / 1000} s`);
        await sleep(answer.status === 503 ? Math.min(Number(answer.headers.get('retry-after') ?? 1), 5) * 1000 : 500);
      } catch (error) {
        if (!(error instanceof TypeError) || Date.now() > deadline) throw error; // fetch's TypeError: no connection
        this.note('network');
        await sleep(500);
      }
    }
  }

  /** Answers never acceptable, whatever failed: a 500 (or another 5xx) where a 503, or the proxy's 502, belongs. */
  unexpected5xx(): string[] {
    return this.failures.filter((failure) => !/: 50[23] /.test(failure));
  }

  summary(): string {
    return [...this.statuses]
      .sort(([a], [b]) => String(a).localeCompare(String(b)))
      .map(([status, count]) => `${status}×${count}`)
      .join(' ');
  }
}

/**
 * The webhook events a sandbox lifecycle must make, in this order, each once: the specification's three. The service may
 * make more (deal.<status> for every status: docs/decisions/0009-an-event-for-every-status.md); the receiver must get every event it made, in the order it made them.
 */
export const LIFECYCLE_EVENTS = ['deal.approved', 'deal.escrow_hold', 'deal.paid'];

export interface Marketplace {
  id: string;
  key: Record<string, string>;
  buyerEmail: string;
  buyer: Record<string, string>;
}

/** A sandbox marketplace with `receiver` as its webhook, and its buyer signed in through the invitation mail. */
export async function setUpMarketplace(
  client: Client,
  admin: Record<string, string>,
  receiver: Receiver,
  name: string,
): Promise<Marketplace> {
  const run = randomUUID().slice(0, 8);
  const created = await client.call(
    'POST',
    '/admin/marketplaces',
    { name: `faults ${name} ${run}`, mode: 'sandbox' },
    admin,
  );
  if (created.status !== 201) throw new Error(`marketplace: ${created.status} ${JSON.stringify(created.body)}`);
  const key = { 'X-Svc-Key': created.body.secret_key };
  const hook = await client.call('POST', '/api/mkt/webhook', { url: receiver.url }, key);
  if (hook.status !== 200) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  const buyerEmail = `buyer-${name}-${run}@example.com`;
  // The deal workflow makes the buyer's account and mails the invitation; one deal of the batch's own makes it.
  const first = await client.call(
    'POST',
    '/api/mkt/deals',
    { external_id: `invite-${name}-${run}`, buyer_email: buyerEmail, amount: 10 },
    key,
  );
  if (first.status !== 201) throw new Error(`first deal: ${first.status} ${JSON.stringify(first.body)}`);
  const token = await until('the buyer invitation mail', 60_000, async () => {
    const mail = await client.call('GET', `/admin/mail?to=${encodeURIComponent(buyerEmail)}`, undefined, admin);
    return mail.body.items[0]?.text.match(/\/cabinet\/invite\?token=(\S+)/)?.[1] as string | undefined;
  });
  const accepted = await client.call('POST', '/cabinet/invite/accept', { token, password: 'a strong password' });
  if (accepted.status !== 200) throw new Error(`invitation: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return { id: created.body.id, key, buyerEmail, buyer: { Authorization: `Bearer ${accepted.body.token}` } };
}

/**
 * Takes one deal from nothing to `paid`, by its state: each round reads the deal and makes the next move. A move a
 * fault interrupted may or may not have happened; reading the state again instead of assuming is what makes the
 * retries safe (a creation is idempotent by external_id; a move refused with 400 because it already happened is seen
 * as done on the next read). Returns the deal id.
 */
export async function driveDeal(
  client: Client,
  market: Marketplace,
  externalId: string,
  progress: (step: string) => void = () => {},
): Promise<string> {
  const created = await client.call(
    'POST',
    '/api/mkt/deals',
    { external_id: externalId, buyer_email: market.buyerEmail, title: 'Faults', amount: 10 },
    market.key,
  );
  if (created.status !== 201 && created.status !== 200)
    throw new Error(`create ${externalId}: ${created.status} ${JSON.stringify(created.body)}`);
  const id: string = created.body.id;
  progress('created');
  // Moves are counted; waiting for a payout the release started is not (it is the deal's own step, slow under faults).
  const deadline = Date.now() + 300_000;
  for (let moves = 0; moves < 40 && Date.now() < deadline;) {
    const deal = await client.call(
      'GET',
      `/api/mkt/deals?external_id=${encodeURIComponent(externalId)}`,
      undefined,
      market.key,
    );
    if (deal.status !== 200) throw new Error(`read ${externalId}: ${deal.status} ${JSON.stringify(deal.body)}`);
    const status: string = deal.body.status;
    if (status === 'paid') return id;
    progress(status);
    const released = deal.body.payments?.some((payment: { status: string }) => payment.status === 'released');
    if (status === 'escrow_hold' && released) {
      await sleep(250);
      continue;
    }
    moves++;
    let move;
    if (status === 'created') {
      move = await client.call('POST', `/api/mkt/deals/${id}/documents?kind=contract`, Buffer.from('contract'), {
        ...market.key,
        'Content-Type': 'text/plain',
      });
    } else if (status === 'docs') {
      move = await client.call('POST', `/api/mkt/deals/${id}/approval`, {}, market.key);
    } else if (status === 'approval') {
      const pending = deal.body.approvals.find((approval: { status: string }) => approval.status === 'pending');
      move = await client.call('POST', `/cabinet/approvals/${pending.id}/approve`, {}, market.buyer);
    } else if (status === 'approved') {
      move = await client.call('POST', `/api/mkt/deals/${id}/escrow`, {}, market.key);
    } else if (status === 'escrow_hold') {
      move = await client.call('POST', `/cabinet/deals/${id}/escrow/release`, {}, market.buyer);
    } else {
      throw new Error(`deal ${externalId} went ${status}`);
    }
    if (move.status >= 300 && move.status !== 400)
      throw new Error(`${status} move of ${externalId}: ${move.status} ${JSON.stringify(move.body)}`);
  }
  throw new Error(`deal ${externalId} did not reach paid in 40 moves`);
}

/** Runs `work` over 0…count-1 with at most `concurrency` at once; the first failure rejects after all settle. */
export async function inParallel<T>(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  const errors: unknown[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const index = next++;
        try {
          results[index] = await work(index);
        } catch (error) {
          errors.push(error);
        }
      }
    }),
  );
  if (errors.length > 0) throw errors[0];
  return results;
}

/** Every event the service recorded for these deals (its webhook_events rows), oldest first: what must arrive. */
export async function eventsOf(databaseUrl: string, dealIds: Set<string>): Promise<Arrival[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const result = await db.query<Arrival>(
      `SELECT id AS event_id, event, deal_id FROM webhook_events WHERE deal_id = ANY($1::uuid[]) ORDER BY occurred_at, seq`,
      [[...dealIds]],
    );
    return result.rows;
  } finally {
    await db.end();
  }
}

export interface Tally {
  deals: number;
  /** The event types the service made per deal, as made for the first deal (for the report). */
  perDeal: string;
  eventsPerDeal: number;
  expected: number;
  delivered: number;
  duplicated: number;
  lost: number;
  outOfOrder: number;
  wrongEvents: number;
}

/**
 * Waits until every event the service made for `dealIds` has reached the receiver (or the deadline), then counts.
 * "Exactly once" is judged by event id, as receivers deduplicate: every expected id delivered, none lost, none the
 * receiver did not expect; a 2xx delivery resent because a worker died before recording it is counted as duplicated
 * and reported, not hidden.
 */
export async function tally(
  databaseUrl: string,
  receiver: Receiver,
  dealIds: Set<string>,
  timeoutMs: number,
): Promise<Tally> {
  const expected = await eventsOf(databaseUrl, dealIds);
  const deadline = Date.now() + timeoutMs;
  while (expected.some((event) => !receiver.delivered.has(event.event_id)) && Date.now() < deadline) await sleep(500);
  const expectedIds = new Set(expected.map((event) => event.event_id));
  let outOfOrder = 0;
  let wrongEvents = 0;
  for (const id of dealIds) {
    const made = expected.filter((event) => event.deal_id === id).map((event) => event.event);
    if ((receiver.orderByDeal.get(id) ?? []).join() !== made.join()) outOfOrder++;
    if (made.filter((event) => LIFECYCLE_EVENTS.includes(event)).join() !== LIFECYCLE_EVENTS.join()) wrongEvents++;
  }
  let duplicated = 0;
  for (const id of expectedIds) duplicated += Math.max(0, (receiver.delivered.get(id) ?? 0) - 1);
  const firstDeal = [...dealIds][0];
  return {
    deals: dealIds.size,
    perDeal: expected
      .filter((event) => event.deal_id === firstDeal)
      .map((event) => event.event)
      .join(' → '),
    eventsPerDeal: expected.filter((event) => event.deal_id === firstDeal).length,
    expected: expected.length,
    delivered: [...expectedIds].filter((id) => receiver.delivered.has(id)).length,
    duplicated,
    lost: [...expectedIds].filter((id) => !receiver.delivered.has(id)).length,
    outOfOrder,
    wrongEvents,
  };
}

/** Every deal made the same events, each arrived (by id), none lost, in the order made; the specification's three among them. */
export function expectAllArrived(tallied: Tally, deals: number): void {
  expect(tallied).toMatchObject({
    deals,
    expected: deals * tallied.eventsPerDeal,
    delivered: deals * tallied.eventsPerDeal,
    lost: 0,
    outOfOrder: 0,
    wrongEvents: 0,
  });
}

export function report(scenario: string, did: string, tallied: Tally, client: Client, more = ''): void {
  console.log(
    [
      `── ${scenario}`,
      `   did: ${did}`,
      `   events per deal: ${tallied.perDeal}`,
      `   deals ${tallied.deals}, events expected ${tallied.expected}, delivered ${tallied.delivered}, duplicated ${tallied.duplicated}, lost ${tallied.lost}, ` +
        `deals out of order ${tallied.outOfOrder}, deals with other events ${tallied.wrongEvents}`,
      `   client saw: ${client.summary()}${more ? `\n   ${more}` : ''}`,
    ].join('\n'),
  );
}
