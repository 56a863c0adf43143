// bench/deals: against a running stack (`npm start` in another terminal), measures
//   0. on the quiet service, the time from the buyer's approval to the webhook's arrival beside the engine's floor for
//      the same thing (an Update whose local activity POSTs, bench/floor-workflow.ts) in the same run;
//   1. deal creations per second through the API at 1, 10 and 50 concurrent, beside the bare Temporal workflow start
//      from a plain client in the same run (the limit);
//   2. the time from the buyer's approval to the webhook's arrival once those creations left their deals open;
//   3. complete lifecycles (create, document, approval, approve, escrow, release, and the payout to the seller that
//      release starts) with every webhook accounted for, and what each costs in PostgreSQL and in Temporal;
//   4. the engine's ceiling: as many workflows shaped like a lifecycle (a start and five Updates, each task running a
//      local activity that POSTs, bench/floor-workflow.ts) at the same concurrency, with no PostgreSQL and no rules;
//   5. the approval on deals whose workflows are not in the worker's cache (replayed from history first), on a worker
//      of the bench's own that keeps two workflows in memory.
// The lifecycles' deals have sellers, as a marketplace's do: each seller signed in once and gave the sandbox's test card
// as their payout destination, so release pays out through the path a live deal takes (the seller's own destination,
// read by the payout activity), not the sandbox's shortcut for deals without a seller (its default test card).
// Usage: npm run bench:deals [-- --lifecycles 1000] [-- --sellers 10] [-- --phases quiet,creation,sequential,lifecycles,ceiling,replay]
// Reads the admin token from DATA_DIR/demo-credentials.json (or SVC_ADMIN_TOKEN); BASE_URL and TEMPORAL_ADDRESS as
// for the service.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createRequire } from 'node:module';
import { floorUpdate } from './floor-workflow.ts';
import { statementCounter } from './pg-statements.ts';
import { parseConfig } from '../src/config.ts';
import { cpuByProcess, cpuPer, line, percentiles, runConcurrently, benchAdminToken, numberFlag } from './stats.ts';
import { dealSearchAttributes } from '../src/deals/search-attributes.ts';
import { freePort } from '../src/dev/ports.ts';
import { embeddedUrls } from '../src/dev/embedded-postgres.ts';
import pg from 'pg';

const config = parseConfig();
const lifecycles = numberFlag('lifecycles', 1000);
const sellerCount = numberFlag('sellers', 10);
/** `--phases quiet,creation,…`: which parts to run (all by default), to measure one change at a time. */
const phases = new Set(
  (process.argv.includes('--phases')
    ? process.argv[process.argv.indexOf('--phases') + 1]
    : 'quiet,creation,sequential,lifecycles,ceiling,replay'
  ).split(','),
);

/** The requests one lifecycle makes: create, document, ask approval, approve, escrow, release. */
const LIFECYCLE_REQUESTS = 6;
/**
 * The webhooks one lifecycle makes, each once, in this order: one per status the deal enters (deal.<status>,
 * docs/decisions/0009-an-event-for-every-status.md), and deal.payout_sent between the release and deal.paid: the deal
 * is paid once its payout succeeded.
 */
const LIFECYCLE_EVENTS = [
  'deal.created',
  'deal.docs',
  'deal.approval',
  'deal.approved',
  'deal.escrow_hold',
  'deal.payout_sent',
  'deal.paid',
];
const adminToken = benchAdminToken(config.DATA_DIR);
const base = config.BASE_URL;
const runId = randomUUID().slice(0, 8);

let retried = 0;

/** One API call; a 503 (the deal engine is saturated) is retried after its Retry-After, as a good client does. */
async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
  server = base,
): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${server}${url}`, {
      method,
      headers: {
        ...(body === undefined || Buffer.isBuffer(body) ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
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
async function startApiWithoutWorker(taskQueue = `bench-api-alone-${runId}`) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/api.ts'], {
    env: {
      ...process.env,
      // The service's own role (a superuser would be refused), as the first main server connects.
      DATABASE_URL: config.DATABASE_URL ?? embeddedUrls(config.DATA_DIR, config.POSTGRES_PORT).url,
      DATABASE_OWNER_URL: '',
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      TEMPORAL_TASK_QUEUE: taskQueue,
      LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    const ok = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (tries > 200) throw new Error('the second main server did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
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

  async function creations() {
    console.log('1. Creating deals: the API beside the same Temporal operation from a plain client');
    const settings = { holdPolicy: 'refund', holdMarginSeconds: 43_200, historyLimit: 10_000 };
    const alone = await startApiWithoutWorker();
    for (const [concurrency, total] of [
      [1, 100],
      [10, 500],
      [50, 1000],
    ] as const) {
      // The engine's floor: a start that no worker ever runs.
      const bare = await runConcurrently(total, concurrency, async () => {
        await client.workflow.start('benchBareStart', {
          taskQueue: `bench-bare-${runId}`,
          workflowId: `bench/${runId}/${randomUUID()}`,
          args: [{}],
        });
      });
      // What the API does in Temporal: start a deal workflow that the worker then runs (its first task provisions
      // the parties), without our HTTP, authentication and insert around it.
      await drained(client, config.TEMPORAL_TASK_QUEUE);
      const rawCpuBefore = cpuByProcess();
      const raw = await runConcurrently(total, concurrency, async () => {
        const id = randomUUID();
        const deal = {
          id,
          marketplace_id: marketplace.id,
          external_id: `raw-${id}`,
          title: '',
          buyer_email: `raw-${runId}@example.com`,
          buyer_name: '',
          seller_email: '',
          amount: 100,
          currency: 'RUB',
          description: '',
          created_at: new Date().toISOString(),
          updated_at: new Date().toISOString(),
        };
        await client.workflow.start('dealWorkflow', {
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          workflowId: `bench-raw/${runId}/${id}`,
          args: [{ snapshot: { deal, documents: [], approvals: [], payments: [] }, settings }],
          typedSearchAttributes: dealSearchAttributes(deal, 'created'),
          memo: { title: '' },
        });
      });
      await drained(client, config.TEMPORAL_TASK_QUEUE);
      const cpuRaw = cpuPer(rawCpuBefore, cpuByProcess(), total);
      const apiAlone = await runConcurrently(total, concurrency, async (index) => {
        await call(
          'POST',
          '/api/mkt/deals',
          {
            external_id: `alone${concurrency}-${index}-${runId}`,
            buyer_email: `alone-${runId}@example.com`,
            amount: 100,
          },
          key,
          alone.url,
        );
      });
      await drained(client, config.TEMPORAL_TASK_QUEUE);
      const cpuBefore = cpuByProcess();
      const api = await runConcurrently(total, concurrency, async (index) => {
        await call(
          'POST',
          '/api/mkt/deals',
          { external_id: `c${concurrency}-${index}-${runId}`, buyer_email: `bench-${runId}@example.com`, amount: 100 },
          key,
        );
      });
      await drained(client, config.TEMPORAL_TASK_QUEUE);
      const cpuApi = cpuPer(cpuBefore, cpuByProcess(), total);
      console.log(line(`  bare start (no worker), ${concurrency} conc.`, bare));
      console.log(line(`  POST …/deals, no worker, ${concurrency} conc.`, apiAlone));
      console.log(line(`  deal workflow start, ${concurrency} conc.`, raw));
      console.log(line(`  POST /api/mkt/deals, ${concurrency} conc.`, api));
      console.log(`  CPU per creation: deal workflow start ${cpuRaw}; POST /api/mkt/deals ${cpuApi}`);
      console.log(
        `  API alone / bare start = ${(apiAlone.perSecond / bare.perSecond).toFixed(2)}x   API / deal workflow start = ${(api.perSecond / raw.perSecond).toFixed(2)}x\n`,
      );
    }
    await alone.stop();
    // The measured starts that nothing will ever finish: terminate them.
    for await (const execution of client.workflow.list({ query: `ExecutionStatus = 'Running'` })) {
      const measured = [`bench/${runId}/`, `bench-raw/${runId}/`, `deal/${marketplace.id}/alone`];
      if (measured.some((prefix) => execution.workflowId.startsWith(prefix))) {
        await client.workflow
          .getHandle(execution.workflowId)
          .terminate('benchmark done')
          .catch(() => {});
      }
    }
  }

  // The sellers: a deal naming each (and the buyer) mails them an invitation; each signs in once and gives the test
  // card that succeeds. The buyer of every lifecycle signs in once through the invitation too.
  const buyerEmail = `bench-${runId}@example.com`;
  const sellers = Array.from({ length: sellerCount }, (_, n) => `bench-seller-${n}-${runId}@example.com`);
  const signIn = async (email: string) => {
    let token: string | undefined;
    for (let tries = 0; !token; tries++) {
      if (tries > 300) throw new Error(`No invitation mail for ${email}; is the worker running?`);
      const mail = await call('GET', `/admin/mail?to=${encodeURIComponent(email)}`, undefined, admin);
      token = mail.items.map((item: { text: string }) => item.text.match(/invite\?token=(\S+)/)?.[1]).find(Boolean);
      if (!token) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return {
      Authorization: `Bearer ${(await call('POST', '/cabinet/invite/accept', { token, password: 'bench password' })).token}`,
    };
  };
  await Promise.all(
    sellers.map(async (email, n) => {
      await call(
        'POST',
        '/api/mkt/deals',
        {
          external_id: `seller-${n}-${runId}`,
          buyer_email: buyerEmail,
          seller_email: email,
          title: 'Bench seller',
          amount: 10,
        },
        key,
      );
      const seller = await signIn(email);
      await call('PUT', '/cabinet/payout-destination', { type: 'test_card', token: '4111111111111111' }, seller);
    }),
  );
  const buyer = await signIn(buyerEmail);

  const approveToWebhook: number[] = [];
  const releaseToPaid: number[] = [];
  const lifecycleIds = new Map<number, string>();
  let missing = 0;
  let otherEvents = 0;
  let requests = 0;
  let nextIndex = 0;
  const lifecycle = async (index: number) => {
    const step = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
      requests++;
      return call(method, url, body, headers);
    };
    const sellerEmail = sellers[index % sellers.length];
    const deal = await step(
      'POST',
      '/api/mkt/deals',
      {
        external_id: `life-${index}-${runId}`,
        buyer_email: buyerEmail,
        seller_email: sellerEmail,
        title: 'Bench',
        amount: 10,
      },
      key,
    );
    lifecycleIds.set(index, deal.id);
    await step('POST', `/api/mkt/deals/${deal.id}/documents?kind=contract`, Buffer.from('contract'), {
      ...key,
      'Content-Type': 'text/plain',
    });
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
    Array.from({ length: count }, (_, index) => receiver.eventsOf(lifecycleIds.get(from + index) ?? '').length).reduce(
      (total, n) => total + n,
      0,
    );
  /** `count` lifecycles at `concurrency`, their figures, and the events each should have sent, checked. */
  const lifecyclesAt = async (count: number, concurrency: number) => {
    approveToWebhook.length = 0;
    releaseToPaid.length = 0;
    missing = 0;
    otherEvents = 0;
    requests = 0;
    const from = nextIndex;
    nextIndex += count;
    const all = await runConcurrently(count, concurrency, (index) => lifecycle(from + index));
    failed += missing + otherEvents;
    return {
      all,
      approved: percentiles(approveToWebhook),
      paid: percentiles(releaseToPaid),
      webhooks: received(from, count),
      from,
    };
  };
  const ms = ({ p50, p99 }: { p50: number; p99: number }) => `p50 ${p50.toFixed(1)} ms   p99 ${p99.toFixed(1)} ms`;
  let failed = 0;
  let floorRuntime = false;
  /** Phase 3's pace, to set beside the engine's ceiling. */
  let lifecyclesPerSecond: number | undefined;
  console.log(
    `Each lifecycle: ${LIFECYCLE_REQUESTS} requests; ${LIFECYCLE_EVENTS.length} webhooks expected, each once, in this order: ${LIFECYCLE_EVENTS.join(' → ')}\n`,
  );

  /** Waits until the deal notices' outbox is empty (the mails of the changes are queued); how long that took. */
  async function noticesDrained(): Promise<number | undefined> {
    const started = performance.now();
    const db = new pg.Client(config.DATABASE_URL ?? embeddedUrls(config.DATA_DIR, config.POSTGRES_PORT).url);
    try {
      await db.connect();
      while ((await db.query('SELECT count(*)::int AS n FROM deal_notices')).rows[0].n > 0) {
        if (performance.now() - started > 300_000) throw new Error('the notice outbox did not drain in 5 minutes');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return performance.now() - started;
    } catch (error) {
      console.log(`  (the notice outbox: ${(error as Error).message})`);
      return undefined;
    } finally {
      await db.end().catch(() => {});
    }
  }

  if (phases.has('quiet')) {
    console.log(
      "0. The quiet service: approval to webhook on fresh deals, beside the engine's floor (sequential, 50 each)",
    );
    const floor = await engineFloor(50);
    const quiet = await lifecyclesAt(50, 1);
    console.log(`  engine floor: Update → local activity POST arrives   ${ms(floor)}`);
    console.log(
      `  buyer approves → deal.approved arrives               ${ms(quiet.approved)}   (${(quiet.approved.p50 / floor.p50).toFixed(1)}× the floor at p50, ${(quiet.approved.p99 / floor.p99).toFixed(1)}× at p99)`,
    );
    console.log(
      `  webhooks received ${quiet.webhooks} of ${50 * LIFECYCLE_EVENTS.length}; lifecycles missing a webhook: ${missing}, with other events: ${otherEvents}\n`,
    );
  }

  if (phases.has('creation')) await creations();

  if (phases.has('sequential')) {
    const SEQUENTIAL = 100;
    console.log(
      `2. Approval to webhook, and release to deal.paid with its payout (sequential, ${SEQUENTIAL} lifecycles${phases.has('creation') ? ', after the creations above left their deals open' : ''})`,
    );
    const sequential = await lifecyclesAt(SEQUENTIAL, 1);
    console.log(`  buyer approves → deal.approved arrives   ${ms(sequential.approved)}`);
    console.log(
      `  buyer releases → deal.paid arrives       ${ms(sequential.paid)}   (the payout to the seller's card in between)`,
    );
    console.log(
      `  webhooks received ${sequential.webhooks} of ${SEQUENTIAL * LIFECYCLE_EVENTS.length}; lifecycles missing a webhook: ${missing}, with other events: ${otherEvents}`,
    );
    await temporalCost(lifecycleIds.get(sequential.from + SEQUENTIAL - 1)!);
    console.log('');
  }

  if (lifecycles > 0 && phases.has('lifecycles')) {
    console.log(`3. ${lifecycles} complete lifecycles, 25 concurrent`);
    const counter = await statementCounter(config.DATA_DIR, config.POSTGRES_PORT);
    await counter?.reset();
    const cpuBefore = cpuByProcess();
    const load = await lifecyclesAt(lifecycles, 25);
    lifecyclesPerSecond = load.all.perSecond;
    // The lifecycle is over when its mails are out too: the notice outbox is drained off the changes' path, so the CPU
    // and the statements are counted until it is empty, not only until the last webhook arrived.
    const mailsAfterMs = await noticesDrained();
    const cpuAfter = cpuByProcess();
    console.log(line(`  lifecycle (${LIFECYCLE_REQUESTS} requests, ${LIFECYCLE_EVENTS.length} webhooks)`, load.all));
    console.log(
      `  requests made ${requests} (${(requests / lifecycles).toFixed(1)} per lifecycle); retried after a 503: ${retried}`,
    );
    console.log(
      `  webhooks received ${load.webhooks} of ${lifecycles * LIFECYCLE_EVENTS.length}; duplicates ${receiver.duplicates()}`,
    );
    console.log(`  lifecycles missing a webhook: ${missing}; with other events or another order: ${otherEvents}`);
    console.log(`  approve → deal.approved under load        ${ms(load.approved)}`);
    console.log(`  release → deal.paid (payout) under load   ${ms(load.paid)}`);
    console.log(
      `  the deals' mails all sent ${mailsAfterMs === undefined ? '(not known: no database)' : `${(mailsAfterMs / 1000).toFixed(1)} s after the last webhook`}; ${(lifecycles / (load.all.seconds + (mailsAfterMs ?? 0) / 1000)).toFixed(1)} lifecycles per s with them`,
    );
    if (cpuAfter.size > 0)
      console.log(
        `  CPU per lifecycle (this machine's processes, from /proc): ${cpuPer(cpuBefore, cpuAfter, lifecycles)}`,
      );
    // The counters also hold what the deals' mails, the drainer and the ledger's checks at commit cost: all of it is the lifecycle's.
    await counter?.report(lifecycles, 'lifecycle', 30);
    await counter?.close();
    console.log('');
  }

  if (lifecycles > 0 && phases.has('ceiling')) {
    console.log(
      `4. The engine's ceiling on this machine: ${lifecycles} workflows shaped like a lifecycle (a start and ${LIFECYCLE_REQUESTS - 1} Updates, each task running a local activity that POSTs), 25 concurrent, on a worker of the bench's own`,
    );
    const ceiling = await engineCeiling(lifecycles, 25);
    console.log(line(`  floor lifecycle (a start, ${LIFECYCLE_REQUESTS - 1} updates)`, ceiling.all));
    // A local activity runs again when its workflow task was lost (at least once): a loaded server may bring a few POSTs
    // twice, which is the engine's promise, not a fault; one missing is.
    console.log(
      `  POSTs received ${ceiling.posts} of ${ceiling.expected}; made again after a lost workflow task ${ceiling.again}`,
    );
    console.log(`  CPU per floor lifecycle (the bench runs its worker and client): ${ceiling.cpu}`);
    if (lifecyclesPerSecond !== undefined)
      console.log(
        `  the deals' lifecycles above: ${lifecyclesPerSecond.toFixed(1)}/s, ${((100 * lifecyclesPerSecond) / ceiling.all.perSecond).toFixed(0)}% of the engine's ceiling`,
      );
    console.log('');
    if (ceiling.posts !== ceiling.expected) failed++;
  }

  if (phases.has('replay')) await replayed(20);

  await receiver.close();
  await connection.close();
  if (failed > 0) process.exitCode = 1;

  /**
   * A worker of the bench's own for bench/floor-workflow.ts on `taskQueue`: its local activity POSTs to the receiver.
   * It runs in the bench's process, so what it costs is counted as the bench's.
   */
  async function floorWorker(taskQueue: string) {
    // The SDK's bundling and state changes are not figures; the runtime is installed once per process.
    if (!floorRuntime) Runtime.install({ logger: new DefaultLogger('WARN') });
    floorRuntime = true;
    const native = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    const worker = await Worker.create({
      connection: native,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue,
      workflowsPath: createRequire(import.meta.url).resolve('./floor-workflow.ts'),
      activities: {
        async postToReceiver(url: string, workflowId: string, event: string) {
          // The event's id is the workflow's and the event's, so a POST made again counts as a duplicate, not a new one.
          const body = JSON.stringify({ id: workflowId, event, event_id: `${workflowId}/${event}` });
          await fetch(url, { method: 'POST', body });
        },
      },
    });
    return {
      runUntil: <T>(work: () => Promise<T>) => worker.runUntil(work).finally(() => native.close()),
    };
  }

  /**
   * The engine's floor: on a worker of the bench's own, `count` fresh workflows each get one Update whose local
   * activity POSTs to the receiver; from the Update's call to the POST's arrival.
   */
  async function engineFloor(count: number) {
    const taskQueue = `bench-floor-${runId}`;
    const worker = await floorWorker(taskQueue);
    const latencies: number[] = [];
    await worker.runUntil(async () => {
      for (let n = 0; n < count; n++) {
        const workflowId = `bench-floor/${runId}/${n}`;
        const handle = await client.workflow.start('benchFloorWorkflow', { taskQueue, workflowId, args: [workflowId] });
        const begun = performance.now();
        await handle.executeUpdate(floorUpdate, { args: [receiver.url] });
        await waitFor(() => receiver.arrivals.has(`${workflowId}/floor`), 10_000);
        latencies.push(receiver.arrivals.get(`${workflowId}/floor`)! - begun);
      }
    });
    return percentiles(latencies);
  }

  /**
   * The engine's ceiling for a lifecycle on this machine: `count` workflows shaped like one, `concurrency` at a time,
   * on a worker of the bench's own. Each is started, its first task running a local activity that POSTs (a deal's
   * provisions its parties), then gets the lifecycle's five Updates one after another, each running a local activity
   * that POSTs to the receiver (a deal's writes its records, and its webhook leaves). No PostgreSQL, no HTTP API, no
   * rules: what a lifecycle costs beyond this is ours.
   */
  async function engineCeiling(count: number, concurrency: number) {
    const taskQueue = `bench-ceiling-${runId}`;
    const worker = await floorWorker(taskQueue);
    const updates = LIFECYCLE_REQUESTS - 1;
    const duplicatesBefore = receiver.duplicates();
    const cpuBefore = cpuByProcess();
    const all = await worker.runUntil(() =>
      runConcurrently(count, concurrency, async (index) => {
        const workflowId = `bench-ceiling/${runId}/${index}`;
        const handle = await client.workflow.start('benchFloorWorkflow', {
          taskQueue,
          workflowId,
          args: [workflowId, { updates, postOnStart: receiver.url }],
        });
        for (let n = 1; n <= updates; n++)
          await handle.executeUpdate(floorUpdate, { args: [receiver.url, `update-${n}`] });
        await handle.result();
      }),
    );
    const cpu = cpuPer(cpuBefore, cpuByProcess(), count);
    const arrived = Array.from(
      { length: count },
      (_, index) => receiver.eventsOf(`bench-ceiling/${runId}/${index}`).length,
    );
    return {
      all,
      cpu,
      posts: arrived.reduce((total, n) => total + n, 0),
      expected: count * (updates + 1),
      again: receiver.duplicates() - duplicatesBefore,
    };
  }

  /** What one lifecycle's deal workflow asked of Temporal: its history's events by kind, and Temporal Cloud's actions. */
  async function temporalCost(dealId: string) {
    const deal = await call('GET', `/api/mkt/deals/${dealId}`, undefined, key);
    const history = await client.workflow.getHandle(`deal/${marketplace.id}/${deal.external_id}`).fetchHistory();
    const events = history.events ?? [];
    const count = (type: string) =>
      events.filter((event) => event.eventType === (proto.temporal.api.enums.v1.EventType as any)[type]).length;
    const markers = (name: string) =>
      events.filter((event) => event.markerRecordedEventAttributes?.markerName === name).length;
    const tasks = count('EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    const activities = count('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED');
    const locals = markers('core_local_activity');
    const updates = count('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED');
    const upserts = count('EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES');
    const timers = count('EVENT_TYPE_TIMER_STARTED');
    const patches = markers('core_patch');
    // Temporal Cloud's billable actions (its pricing page): the start, each Update, activity, local activity, timer,
    // search-attribute upsert and patch marker.
    const actions = 1 + updates + activities + locals + timers + upserts + patches;
    console.log(
      `  Temporal per lifecycle: ${events.length} history events, ${tasks} workflow tasks, ${activities} activity tasks, ${locals} local activities, ` +
        `${updates} updates, ${timers} timers, ${upserts} search-attribute upserts, ${patches} patch markers ≈ ${actions} Temporal Cloud actions`,
    );
  }

  /**
   * The approval on deals whose workflows are not in the worker's cache: a second API and a worker of the bench's own
   * on their own task queue, the worker keeping two workflows in memory; `count` deals brought to their approval,
   * then approved one after another, each replayed from its history first.
   */
  async function replayed(count: number) {
    console.log(
      `5. Approval to webhook on deals whose workflow is not in the worker's cache (replayed first; ${count} deals, sequential)`,
    );
    const taskQueue = `bench-replay-${runId}`;
    const api = await startApiWithoutWorker(taskQueue);
    const worker = spawn(process.execPath, ['--import', 'tsx', 'src/bin/worker.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: config.DATABASE_URL ?? embeddedUrls(config.DATA_DIR, config.POSTGRES_PORT).url,
        DATABASE_OWNER_URL: '',
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_MAX_CACHED_WORKFLOWS: '2',
        // The bench's receiver listens on this machine, as under `npm start`.
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WORKER_METRICS_ADDRESS: '',
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    try {
      const deals: { id: string; approval: string }[] = [];
      for (let n = 0; n < count; n++) {
        const deal = await call(
          'POST',
          '/api/mkt/deals',
          { external_id: `replay-${n}-${runId}`, buyer_email: buyerEmail, amount: 10 },
          key,
          api.url,
        );
        await call(
          'POST',
          `/api/mkt/deals/${deal.id}/documents?kind=contract`,
          Buffer.from('contract'),
          { ...key, 'Content-Type': 'text/plain' },
          api.url,
        );
        const approval = await call('POST', `/api/mkt/deals/${deal.id}/approval`, {}, key, api.url);
        deals.push({ id: deal.id, approval: approval.id });
      }
      for (const deal of deals) await waitFor(() => receiver.arrivals.has(`${deal.id}/deal.approval`), 30_000);
      const latencies: number[] = [];
      for (const deal of deals) {
        const begun = performance.now();
        await call('POST', `/cabinet/approvals/${deal.approval}/approve`, {}, buyer, api.url);
        if (await waitFor(() => receiver.arrivals.has(`${deal.id}/deal.approved`), 30_000))
          latencies.push(receiver.arrivals.get(`${deal.id}/deal.approved`)! - begun);
        else failed++;
      }
      console.log(
        `  buyer approves → deal.approved arrives, the workflow replayed first   ${ms(percentiles(latencies))}   (${latencies.length} of ${count} arrived)\n`,
      );
      // Nothing polls this queue after the bench: its deals' workflows end here.
      for (const deal of deals) {
        const { external_id } = await call('GET', `/api/mkt/deals/${deal.id}`, undefined, key);
        await client.workflow
          .getHandle(`deal/${marketplace.id}/${external_id}`)
          .terminate('benchmark done')
          .catch(() => {});
      }
    } finally {
      await api.stop();
      await new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.kill('SIGTERM');
      });
    }
  }
}

await main();
