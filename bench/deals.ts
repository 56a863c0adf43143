// bench/deals: against a running stack (`npm start` in another terminal), measures
//   1. deal creations per second through the API at 1, 10 and 50 concurrent, beside the bare Temporal workflow start
//      from a plain client in the same run (the limit);
//   2. the time from the buyer's approval to the webhook's arrival;
//   3. complete lifecycles (create, document, approval, approve, escrow, release, and the payout to the seller that
//      release starts) with every webhook accounted for.
// The lifecycles' deals have sellers, as a marketplace's do: each seller signed in once and gave the sandbox's test card
// as their payout destination, so release pays out through the path a live deal takes (the seller's own destination,
// read by the payout activity), not the sandbox's shortcut for deals without a seller (its default test card).
// Usage: npm run bench:deals [-- --lifecycles 1000] [-- --sellers 10]
// Reads the admin token from DATA_DIR/demo-credentials.json (or SVC_ADMIN_TOKEN); BASE_URL and TEMPORAL_ADDRESS as
// for the service.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { parseConfig } from '../src/config.ts';
import { line, percentiles, runConcurrently, benchAdminToken, numberFlag } from './stats.ts';
import { dealSearchAttributes } from '../src/deals/search-attributes.ts';
import { freePort } from '../src/dev/ports.ts';
import { embeddedUrls } from '../src/dev/embedded-postgres.ts';

const config = parseConfig();
const lifecycles = numberFlag('lifecycles', 1000);
const sellerCount = numberFlag('sellers', 10);

/** The requests one lifecycle makes: create, document, ask approval, approve, escrow, release. */
const LIFECYCLE_REQUESTS = 6;
/**
 * The webhooks one lifecycle makes, each once, in this order: one per status the deal enters (CONTRACT.md's
 * deal.<status>), and deal.payout_sent between the release and deal.paid: the deal is paid once its payout succeeded.
 */
const LIFECYCLE_EVENTS = ['deal.created', 'deal.docs', 'deal.approval', 'deal.approved', 'deal.escrow_hold', 'deal.payout_sent', 'deal.paid'];
const adminToken = benchAdminToken(config.DATA_DIR);
const base = config.BASE_URL;
const runId = randomUUID().slice(0, 8);

let retried = 0;

/** One API call; a 503 (the deal engine is saturated) is retried after its Retry-After, as a good client does. */
async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}, server = base): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${server}${url}`, {
      method,
      headers: { ...(body === undefined || Buffer.isBuffer(body) ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status === 503 && attempt < 5) {
      retried++;
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
      continue;
    }
    if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
}

/**
 * Records when each webhook first arrives, by deal and event; and every event of each deal by its event id, so that a
 * retried delivery (the same event id again) is counted as a duplicate, never as another webhook.
 */
async function startReceiver() {
  const arrivals = new Map<string, number>();
  const byDeal = new Map<string, Array<{ eventId: string; event: string }>>();
  const eventIds = new Set<string>();
  let duplicates = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString());
      if (eventIds.has(event.event_id)) {
        duplicates++;
      } else {
        eventIds.add(event.event_id);
        if (!arrivals.has(`${event.id}/${event.event}`)) arrivals.set(`${event.id}/${event.event}`, performance.now());
        byDeal.set(event.id, [...(byDeal.get(event.id) ?? []), { eventId: event.event_id, event: event.event }]);
      }
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    arrivals,
    /** The events of a deal, each once, in the order they first arrived. */
    eventsOf: (dealId: string) => (byDeal.get(dealId) ?? []).map((arrival) => arrival.event),
    duplicates: () => duplicates,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Waits until the worker has caught up (no workflow or activity task waiting), so one phase does not slow the next. */
async function drained(client: Client, taskQueue: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  let quietReadings = 0;
  while (quietReadings < 2 && Date.now() < deadline) {
    let backlog = 0;
    for (const taskQueueType of [1, 2]) {
      const { stats } = await client.workflowService.describeTaskQueue({
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: { name: taskQueue },
        taskQueueType,
        reportStats: true,
      });
      backlog += Number(stats?.approximateBacklogCount ?? 0);
    }
    quietReadings = backlog === 0 ? quietReadings + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * A second main server on the same database and Temporal, with a task queue no worker polls: its creations cost
 * exactly the API's own work (HTTP, key check, insert, workflow start), without the first workflow task that the
 * worker would run beside it on these two cores.
 */
async function startApiWithoutWorker() {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/api.ts'], {
    env: {
      ...process.env,
      // The service's own role (a superuser would be refused), as the first main server connects.
      DATABASE_URL: config.DATABASE_URL ?? embeddedUrls(config.DATA_DIR, config.POSTGRES_PORT).url,
      DATABASE_OWNER_URL: '',
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      TEMPORAL_TASK_QUEUE: `bench-api-alone-${runId}`,
      LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    const ok = await fetch(`${url}/healthz`).then((response) => response.ok, () => false);
    if (ok) break;
    if (tries > 200) throw new Error('the second main server did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, stop: () => new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM'); }) };
}

async function main() {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const marketplace = await call('POST', '/admin/marketplaces', { name: `bench ${runId}`, mode: 'sandbox' }, admin);
  const key = { 'X-Svc-Key': marketplace.secret_key };
  const receiver = await startReceiver();
  await call('POST', '/api/mkt/webhook', { url: receiver.url }, key);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  console.log(`bench/deals against ${base} (Temporal ${config.TEMPORAL_ADDRESS}), run ${runId}\n`);

  console.log('1. Creating deals: the API beside the same Temporal operation from a plain client');
  const settings = { holdPolicy: 'refund', holdMarginSeconds: 43_200, historyLimit: 10_000 };
  const alone = await startApiWithoutWorker();
  for (const [concurrency, total] of [[1, 100], [10, 500], [50, 1000]] as const) {
    // The engine's floor: a start that no worker ever runs.
    const bare = await runConcurrently(total, concurrency, async () => {
      await client.workflow.start('benchBareStart', { taskQueue: `bench-bare-${runId}`, workflowId: `bench/${runId}/${randomUUID()}`, args: [{}] });
    });
    // What the API does in Temporal: start a deal workflow that the worker then runs (its first task provisions
    // the parties), without our HTTP, authentication and insert around it.
    await drained(client, config.TEMPORAL_TASK_QUEUE);
    const raw = await runConcurrently(total, concurrency, async () => {
      const id = randomUUID();
      const deal = { id, marketplace_id: marketplace.id, external_id: `raw-${id}`, title: '', buyer_email: `raw-${runId}@example.com`, buyer_name: '', seller_email: '', amount: 100, currency: 'RUB', description: '', created_at: new Date().toISOString(), updated_at: new Date().toISOString() };
      await client.workflow.start('dealWorkflow', {
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        workflowId: `bench-raw/${runId}/${id}`,
        args: [{ snapshot: { deal, documents: [], approvals: [], payments: [] }, settings }],
        typedSearchAttributes: dealSearchAttributes(deal, 'created'),
        memo: { title: '' },
      });
    });
    const apiAlone = await runConcurrently(total, concurrency, async (index) => {
      await call('POST', '/api/mkt/deals', { external_id: `alone${concurrency}-${index}-${runId}`, buyer_email: `alone-${runId}@example.com`, amount: 100 }, key, alone.url);
    });
    await drained(client, config.TEMPORAL_TASK_QUEUE);
    const api = await runConcurrently(total, concurrency, async (index) => {
      await call('POST', '/api/mkt/deals', { external_id: `c${concurrency}-${index}-${runId}`, buyer_email: `bench-${runId}@example.com`, amount: 100 }, key);
    });
    console.log(line(`  bare start (no worker), ${concurrency} conc.`, bare));
    console.log(line(`  POST …/deals, no worker, ${concurrency} conc.`, apiAlone));
    console.log(line(`  deal workflow start, ${concurrency} conc.`, raw));
    console.log(line(`  POST /api/mkt/deals, ${concurrency} conc.`, api));
    console.log(`  API alone / bare start = ${(apiAlone.perSecond / bare.perSecond).toFixed(2)}x   API / deal workflow start = ${(api.perSecond / raw.perSecond).toFixed(2)}x\n`);
  }
  await alone.stop();
  // The measured starts that nothing will ever finish: terminate them.
  for await (const execution of client.workflow.list({ query: `ExecutionStatus = 'Running'` })) {
    const measured = [`bench/${runId}/`, `bench-raw/${runId}/`, `deal/${marketplace.id}/alone`];
    if (measured.some((prefix) => execution.workflowId.startsWith(prefix))) {
      await client.workflow.getHandle(execution.workflowId).terminate('benchmark done').catch(() => {});
    }
  }

  // One buyer for every lifecycle: sign in once through the invitation.
  const buyerEmail = `bench-${runId}@example.com`;
  const { items } = await call('GET', `/admin/mail?to=${encodeURIComponent(buyerEmail)}`, undefined, admin);
  const inviteToken = items[0]?.text.match(/invite\?token=(\S+)/)?.[1];
  if (!inviteToken) throw new Error('No invitation mail for the bench buyer; is the worker running?');
  const buyer = { Authorization: `Bearer ${(await call('POST', '/cabinet/invite/accept', { token: inviteToken, password: 'bench password' })).token}` };

  // The sellers: a deal naming each mails them an invitation; each signs in once and gives the test card that succeeds.
  const sellers = Array.from({ length: sellerCount }, (_, n) => `bench-seller-${n}-${runId}@example.com`);
  await Promise.all(
    sellers.map(async (email, n) => {
      await call('POST', '/api/mkt/deals', { external_id: `seller-${n}-${runId}`, buyer_email: buyerEmail, seller_email: email, title: 'Bench seller', amount: 10 }, key);
      let token: string | undefined;
      for (let tries = 0; !token; tries++) {
        if (tries > 300) throw new Error(`No invitation mail for ${email}; is the worker running?`);
        const mail = await call('GET', `/admin/mail?to=${encodeURIComponent(email)}`, undefined, admin);
        token = mail.items.map((item: { text: string }) => item.text.match(/invite\?token=(\S+)/)?.[1]).find(Boolean);
        if (!token) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const seller = { Authorization: `Bearer ${(await call('POST', '/cabinet/invite/accept', { token, password: 'bench password' })).token}` };
      await call('PUT', '/cabinet/payout-destination', { type: 'test_card', token: '4111111111111111' }, seller);
    }),
  );

  const approveToWebhook: number[] = [];
  const releaseToPaid: number[] = [];
  const lifecycleIds = new Map<number, string>();
  let missing = 0;
  let otherEvents = 0;
  let requests = 0;
  const lifecycle = async (index: number) => {
    const step = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
      requests++;
      return call(method, url, body, headers);
    };
    const sellerEmail = sellers[index % sellers.length];
    const deal = await step('POST', '/api/mkt/deals', { external_id: `life-${index}-${runId}`, buyer_email: buyerEmail, seller_email: sellerEmail, title: 'Bench', amount: 10 }, key);
    lifecycleIds.set(index, deal.id);
    await step('POST', `/api/mkt/deals/${deal.id}/documents?kind=contract`, Buffer.from('contract'), { ...key, 'Content-Type': 'text/plain' });
    const approval = await step('POST', `/api/mkt/deals/${deal.id}/approval`, {}, key);
    const approvedAt = performance.now();
    await step('POST', `/cabinet/approvals/${approval.id}/approve`, {}, buyer);
    await step('POST', `/api/mkt/deals/${deal.id}/escrow`, {}, key);
    const releasedAt = performance.now();
    await step('POST', `/cabinet/deals/${deal.id}/escrow/release`, {}, buyer);
    if (!(await waitFor(() => receiver.eventsOf(deal.id).length >= LIFECYCLE_EVENTS.length, 60_000))) missing++;
    // Every event of the lifecycle once, in the order the deal made them, and nothing else.
    else if (receiver.eventsOf(deal.id).join() !== LIFECYCLE_EVENTS.join()) otherEvents++;
    const arrived = receiver.arrivals.get(`${deal.id}/deal.approved`);
    if (arrived) approveToWebhook.push(arrived - approvedAt);
    const paid = receiver.arrivals.get(`${deal.id}/deal.paid`);
    if (paid) releaseToPaid.push(paid - releasedAt);
  };
  /** The webhooks that reached the receiver for the lifecycles from `from` on, counted by event id. */
  const received = (from: number, count: number) =>
    Array.from({ length: count }, (_, index) => receiver.eventsOf(lifecycleIds.get(from + index) ?? '').length).reduce((total, n) => total + n, 0);

  const SEQUENTIAL = 100;
  console.log(`2. Approval to webhook, and release to deal.paid with its payout (sequential, ${SEQUENTIAL} lifecycles)`);
  await runConcurrently(SEQUENTIAL, 1, lifecycle);
  const sequential = percentiles(approveToWebhook);
  const sequentialPaid = percentiles(releaseToPaid);
  console.log(`  buyer approves → deal.approved arrives   p50 ${sequential.p50.toFixed(1)} ms   p99 ${sequential.p99.toFixed(1)} ms`);
  console.log(`  buyer releases → deal.paid arrives       p50 ${sequentialPaid.p50.toFixed(1)} ms   p99 ${sequentialPaid.p99.toFixed(1)} ms   (the payout to the seller's card in between)`);
  console.log(`  webhooks received ${received(0, SEQUENTIAL)} of ${SEQUENTIAL * LIFECYCLE_EVENTS.length}; lifecycles missing a webhook: ${missing}, with other events: ${otherEvents}\n`);
  let failed = missing + otherEvents;

  if (lifecycles > 0) await lifecyclesUnderLoad();
  await receiver.close();
  await connection.close();
  if (failed > 0) process.exitCode = 1;

  async function lifecyclesUnderLoad() {
    console.log(`3. ${lifecycles} complete lifecycles, 25 concurrent`);
    approveToWebhook.length = 0;
    releaseToPaid.length = 0;
    missing = 0;
    otherEvents = 0;
    requests = 0;
    const all = await runConcurrently(lifecycles, 25, (index) => lifecycle(SEQUENTIAL + index));
    const underLoad = percentiles(approveToWebhook);
    const paidUnderLoad = percentiles(releaseToPaid);
    console.log(line(`  lifecycle (${LIFECYCLE_REQUESTS} requests + ${LIFECYCLE_EVENTS.length} webhooks)`, all));
    console.log(`  requests made ${requests} (${(requests / lifecycles).toFixed(1)} per lifecycle); retried after a 503: ${retried}`);
    console.log(`  webhooks received ${received(SEQUENTIAL, lifecycles)} of ${lifecycles * LIFECYCLE_EVENTS.length} (${LIFECYCLE_EVENTS.join(' → ')}); duplicates ${receiver.duplicates()}`);
    console.log(`  lifecycles missing a webhook: ${missing}; with other events or another order: ${otherEvents}`);
    console.log(`  approve → deal.approved under load        p50 ${underLoad.p50.toFixed(1)} ms   p99 ${underLoad.p99.toFixed(1)} ms`);
    console.log(`  release → deal.paid (payout) under load   p50 ${paidUnderLoad.p50.toFixed(1)} ms   p99 ${paidUnderLoad.p99.toFixed(1)} ms`);
    failed += missing + otherEvents;
  }
}

await main();
