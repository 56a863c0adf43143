// Faults against the production topology (src/dev/cluster.ts): two main servers behind the proxy, two workers, the
// data server, a real Temporal server on PostgreSQL. Each scenario takes a batch of deals through their whole sandbox
// lifecycle (create → document → approval → buyer approves → escrow → release) while one part fails, and counts what
// the marketplace's webhook receiver got by event id. One cluster serves every scenario, each on its own marketplace,
// so that the suite fits CI's time on two cores; each scenario leaves the cluster whole again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  driveDeal,
  eventsOf,
  expectAllArrived,
  inParallel,
  Receiver,
  report,
  setUpMarketplace,
  sleep,
  startFaultCluster,
  tally,
  until,
  type FaultCluster,
  type Marketplace,
} from './harness.ts';

/** Deals per scenario and how many are driven at once. */
const DEALS = Number(process.env.FAULTS_DEALS ?? 150);
const CONCURRENCY = 12;

let cluster: FaultCluster;

beforeAll(async () => {
  cluster = await startFaultCluster(
    {
      // Retries within the test's time: 1 s, 2 s, 4 s… instead of 30 s, 60 s…; and a receiver slower than 2 s is late.
      WEBHOOK_RETRY_BASE_SECONDS: '1',
      WEBHOOK_TIMEOUT_SECONDS: '2',
    },
    // As `npm run start:cluster` runs it, so that the first scenario can follow the console's link into it.
    { temporalUi: true },
  );
});

afterAll(async () => {
  await cluster?.stop();
});

/** Drives DEALS deals; `fault` runs once a third of them exist, while the rest are at every stage of their lifecycle. */
async function withFault(client: Client, market: Marketplace, prefix: string, fault: () => Promise<void>) {
  let created = 0;
  let faulted: Promise<void> | undefined;
  try {
    const ids = await inParallel(DEALS, CONCURRENCY, (index) =>
      driveDeal(client, market, `${prefix}-${index}`, (step) => {
        if (step === 'created' && ++created === Math.ceil(DEALS / 3)) faulted = fault();
      }),
    );
    return new Set(ids);
  } finally {
    // Whatever the deals did, the fault runs to its end (the part it stopped is started again) for the next scenario.
    await faulted;
  }
}

describe('faults against the cluster', () => {
  /** Our processes that are no longer running: a fault of a dependency must never take one of them down. */
  const stoppedProcesses = () =>
    [...cluster.apis, ...cluster.workers, cluster.data]
      .filter((process) => !process.running)
      .map((process) => process.name);

  it(
    "the Temporal Web UI serves, and a deal's console link opens the deal's workflow in it",
    { timeout: 60_000 },
    async () => {
      const ui = cluster.temporalUiUrl!;
      expect(ui).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const page = await fetch(`${ui}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      await page.body?.cancel();

      const client = new Client(cluster.baseUrl);
      const market = await client.call(
        'POST',
        '/admin/marketplaces',
        { name: 'faults temporal ui', mode: 'sandbox' },
        cluster.admin,
      );
      expect(market.status).toBe(201);
      const deal = await client.call(
        'POST',
        '/api/mkt/deals',
        { external_id: 'temporal-ui-0', buyer_email: 'buyer-temporal-ui@example.com', amount: 10 },
        { 'X-Svc-Key': market.body.secret_key },
      );
      expect(deal.status).toBe(201);
      const admin = await client.call('GET', `/admin/deals/${deal.body.id}`, undefined, cluster.admin);
      expect(admin.status).toBe(200);
      // The link the console's "Open in Temporal" button follows: the cluster's UI, not the default that leads nowhere.
      const link: string = admin.body.temporal_url;
      expect(link.startsWith(`${ui}/namespaces/default/workflows/`), link).toBe(true);
      const linked = await fetch(link);
      expect(linked.status).toBe(200);
      await linked.body?.cancel();
      // What the page then asks the UI server for: the workflow, through the UI server's connection to this cluster's
      // Temporal. Its id is the link's last segment.
      const workflowId = decodeURIComponent(link.slice(link.lastIndexOf('/') + 1));
      const described = await until("the deal's workflow through the UI server", 30_000, async () => {
        const answer = await fetch(`${ui}/api/v1/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
        return answer.status === 200
          ? ((await answer.json()) as { workflowExecutionInfo: { execution: { workflowId: string } } })
          : undefined;
      });
      expect(described.workflowExecutionInfo.execution.workflowId).toBe(workflowId);
    },
  );

  it(
    'a worker SIGKILLed mid-lifecycle and restarted: every deal completes, every event arrives',
    { timeout: 300_000 },
    async () => {
      const client = new Client(cluster.baseUrl);
      const receiver = new Receiver();
      await receiver.up();
      const market = await setUpMarketplace(client, cluster.admin, receiver, 'worker');
      const worker = cluster.workers[0];
      let killedPid: number | undefined;
      const ids = await withFault(client, market, 'worker', async () => {
        killedPid = worker.pid;
        await worker.stop('SIGKILL');
        await worker.start();
      });
      const tallied = await tally(cluster.databaseUrl, receiver, ids, 120_000);
      report(
        'worker SIGKILLed',
        `SIGKILLed ${worker.name} (pid ${killedPid}) once ${Math.ceil(DEALS / 3)} of ${DEALS} deals existed, started it again (pid ${worker.pid})`,
        tallied,
        client,
      );
      expect(client.unexpected5xx()).toEqual([]);
      expectAllArrived(tallied, DEALS);
      await receiver.down();
    },
  );

  it(
    'a main server SIGKILLed during a burst of creations: retrying clients get the same deals, none duplicated',
    { timeout: 300_000 },
    async () => {
      const client = new Client(cluster.baseUrl);
      const receiver = new Receiver();
      await receiver.up();
      const market = await setUpMarketplace(client, cluster.admin, receiver, 'api');
      const api = cluster.apis[0];
      let killedPid: number | undefined;
      // The burst: every creation at once, the main server killed a third of the way in.
      let created = 0;
      let killed: Promise<void> | undefined;
      const create = (index: number) =>
        client.call(
          'POST',
          '/api/mkt/deals',
          { external_id: `api-${index}`, buyer_email: market.buyerEmail, title: 'Faults', amount: 10 },
          market.key,
        );
      let first, again;
      try {
        first = await inParallel(DEALS, DEALS, async (index) => {
          const answer = await create(index);
          if (++created === Math.ceil(DEALS / 3)) {
            killedPid = api.pid;
            killed = api.stop('SIGKILL');
          }
          return answer;
        });
        await killed;
        // Every client repeats its creation, as one that never saw an answer would, and must get the deal it made.
        again = await inParallel(DEALS, CONCURRENCY, create);
      } finally {
        // The next scenarios want the whole cluster, whatever the burst did.
        await killed;
        if (!api.running) await api.start();
      }
      const ids = await inParallel(DEALS, CONCURRENCY, (index) => driveDeal(client, market, `api-${index}`));
      const db = new pg.Client({ connectionString: cluster.databaseUrl });
      await db.connect();
      const rows = await db
        .query<{ rows: number; distinct: number }>(
          `SELECT count(*)::int AS rows, count(DISTINCT external_id)::int AS distinct FROM deals WHERE marketplace_id = $1 AND external_id LIKE 'api-%'`,
          [market.id],
        )
        .finally(() => db.end());
      const tallied = await tally(cluster.databaseUrl, receiver, new Set(ids), 120_000);
      report(
        'main server SIGKILLed',
        `${DEALS} creations at once, SIGKILLed ${api.name} (pid ${killedPid}) after ${Math.ceil(DEALS / 3)} answers, every client repeated its creation, ${api.name} started again, every deal driven to paid`,
        tallied,
        client,
        `first answers ${[...new Set(first.map((answer) => answer.status))].join('/')}, repeats ${[...new Set(again.map((answer) => answer.status))].join('/')}; deals rows ${rows.rows[0].rows}, distinct external ids ${rows.rows[0].distinct}`,
      );
      expect(first.every((answer) => answer.status === 201 || answer.status === 200)).toBe(true);
      expect(again.map((answer) => answer.status)).toEqual(Array(DEALS).fill(200));
      expect(again.map((answer) => answer.body.id)).toEqual(first.map((answer) => answer.body.id));
      expect(ids).toEqual(first.map((answer) => answer.body.id));
      expect(rows.rows[0]).toEqual({ rows: DEALS, distinct: DEALS });
      expect(client.unexpected5xx()).toEqual([]);
      expectAllArrived(tallied, DEALS);
      await receiver.down();
    },
  );

  it(
    'the Temporal server stopped for 30 s: requests get 503 with Retry-After, never 500; workflows go on',
    { timeout: 360_000 },
    async () => {
      const client = new Client(cluster.baseUrl);
      const receiver = new Receiver();
      await receiver.up();
      const market = await setUpMarketplace(client, cluster.admin, receiver, 'temporal');
      const probes: Array<{ what: string; status: number; retryAfter: string | null; type: string | null }> = [];
      const probeIds: string[] = [];
      const ids = await withFault(client, market, 'temporal', async () => {
        await cluster.temporal.stop();
        try {
          const back = Date.now() + 30_000;
          // Requests during the outage, one of each kind every two seconds: a creation, /healthz.
          while (Date.now() < back) {
            const externalId = `temporal-probe-${probeIds.length}`;
            probeIds.push(externalId);
            const creation = await client.once(
              'POST',
              '/api/mkt/deals',
              { external_id: externalId, buyer_email: market.buyerEmail, title: 'Faults', amount: 10 },
              market.key,
            );
            const health = await client.once('GET', '/healthz');
            for (const [what, answer] of [
              ['POST /api/mkt/deals', creation],
              ['GET /healthz', health],
            ] as const) {
              probes.push({
                what,
                status: answer.status,
                retryAfter: answer.headers.get('retry-after'),
                type: answer.headers.get('content-type'),
              });
            }
            await sleep(2_000);
          }
        } finally {
          await cluster.temporal.start();
        }
      });
      // A creation refused during the outage is made when the client repeats it, and goes the whole way too.
      for (const id of await inParallel(probeIds.length, CONCURRENCY, (index) =>
        driveDeal(client, market, probeIds[index]),
      ))
        ids.add(id);
      const tallied = await tally(cluster.databaseUrl, receiver, ids, 120_000);
      const probeSummary = probes
        .map((probe) => `${probe.what} ${probe.status}`)
        .reduce((counts, line) => counts.set(line, (counts.get(line) ?? 0) + 1), new Map<string, number>());
      report(
        'Temporal stopped 30 s',
        `stopped the Temporal server once ${Math.ceil(DEALS / 3)} of ${DEALS} deals existed, probed for 30 s, started it again; then drove the ${probeIds.length} probe creations to paid`,
        tallied,
        client,
        `probes during the outage: ${[...probeSummary].map(([line, count]) => `${line} ×${count}`).join(', ')}`,
      );
      expect(probes.length).toBeGreaterThan(0);
      for (const probe of probes) {
        expect(probe, probe.what).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) });
        expect(probe.type, probe.what).toMatch(/json/);
      }
      expect(client.unexpected5xx()).toEqual([]);
      expectAllArrived(tallied, DEALS + probeIds.length);
      expect(stoppedProcesses(), 'processes of ours that stopped (FAULTS_KEEP_DATA=1 keeps their logs)').toEqual([]);
      await receiver.down();
    },
  );

  it(
    'PostgreSQL stopped and started again: /healthz 503, requests get a 503 problem, everything recovers by itself',
    { timeout: 360_000 },
    async () => {
      const client = new Client(cluster.baseUrl);
      const receiver = new Receiver();
      await receiver.up();
      const market = await setUpMarketplace(client, cluster.admin, receiver, 'postgres');
      const apiPorts = [1, 2].map((offset) => Number(new URL(cluster.baseUrl).port) + offset);
      const servers = [...apiPorts.map((port) => `http://127.0.0.1:${port}`), cluster.dataUrl];
      const probes: Array<{
        what: string;
        status: number;
        type: string | null;
        code?: string;
        retryAfter?: string | null;
      }> = [];
      let recoveredIn = 0;
      const ids = await withFault(client, market, 'postgres', async () => {
        await cluster.postgres.stop();
        const stoppedAt = Date.now();
        try {
          // Each server notices on its own: poll until every /healthz says 503, then probe the API.
          for (const server of servers) {
            await until(`${server}/healthz turning 503`, 30_000, async () =>
              (await fetch(`${server}/healthz`)).status === 503 ? true : undefined,
            );
            const health = await fetch(`${server}/healthz`);
            probes.push({ what: `${server}/healthz`, status: health.status, type: health.headers.get('content-type') });
          }
          for (const [method, url, body] of [
            ['GET', '/api/mkt/deals?external_id=postgres-0', undefined],
            [
              'POST',
              '/api/mkt/deals',
              { external_id: 'postgres-probe', buyer_email: market.buyerEmail, title: 'Faults', amount: 10 },
            ],
            ['GET', '/api/mkt/ping', undefined],
          ] as const) {
            for (const port of apiPorts) {
              const answer = await new Client(`http://127.0.0.1:${port}`).once(method, url, body, market.key);
              probes.push({
                what: `${method} ${url} on :${port}`,
                status: answer.status,
                type: answer.headers.get('content-type'),
                code: answer.body?.code,
                retryAfter: answer.headers.get('retry-after'),
              });
            }
          }
          // Down long enough for every pool's idle connections to have failed and the workers' activities to retry.
          await sleep(Math.max(0, stoppedAt + 15_000 - Date.now()));
        } finally {
          await cluster.postgres.start();
        }
        const startedAt = Date.now();
        for (const server of servers)
          await until(`${server}/healthz 200 again`, 60_000, async () =>
            (await fetch(`${server}/healthz`)).status === 200 ? true : undefined,
          );
        recoveredIn = Date.now() - startedAt;
      });
      ids.add(await driveDeal(client, market, 'postgres-probe'));
      const tallied = await tally(cluster.databaseUrl, receiver, ids, 120_000);
      report(
        'PostgreSQL stopped',
        `stopped PostgreSQL for 15 s once ${Math.ceil(DEALS / 3)} of ${DEALS} deals existed, probed every server, started it again; /healthz 200 on all ${recoveredIn} ms later; no process of ours restarted`,
        tallied,
        client,
        `probes: ${probes.map((probe) => `${probe.what} ${probe.status}${probe.code ? ` ${probe.code}` : ''}`).join(', ')}`,
      );
      for (const probe of probes) {
        expect(probe.status, probe.what).toBe(503);
        expect(probe.type, probe.what).toMatch(/json/);
      }
      for (const probe of probes.filter(
        (probe) => probe.what.startsWith('GET /api') || probe.what.startsWith('POST'),
      )) {
        expect(probe.type, probe.what).toMatch(/^application\/problem\+json/);
        expect(probe.retryAfter, probe.what).toMatch(/^\d+$/);
      }
      expect(client.unexpected5xx()).toEqual([]);
      expectAllArrived(tallied, DEALS + 1);
      expect(stoppedProcesses(), 'processes of ours that stopped (FAULTS_KEEP_DATA=1 keeps their logs)').toEqual([]);
      await receiver.down();
    },
  );

  it(
    'the webhook receiver refusing, then slower than the timeout, then back: everything arrives, in order per deal',
    { timeout: 360_000 },
    async () => {
      const client = new Client(cluster.baseUrl);
      const receiver = new Receiver();
      await receiver.up();
      const market = await setUpMarketplace(client, cluster.admin, receiver, 'receiver');
      // Down from the start of the batch: connection refused for 30 s, then 20 s answering nothing within the 2 s timeout.
      await receiver.down();
      const downAt = Date.now();
      const outage = (async () => {
        await sleep(30_000);
        receiver.mode = 'slow';
        await receiver.up();
        await sleep(20_000);
        receiver.mode = 'up';
      })();
      const ids = new Set(
        await inParallel(DEALS, CONCURRENCY, (index) => driveDeal(client, market, `receiver-${index}`)),
      );
      await outage;
      const backAt = Date.now();
      const tallied = await tally(cluster.databaseUrl, receiver, ids, 180_000);
      const slowRequests =
        [...receiver.requests.values()].reduce((sum, count) => sum + count, 0) -
        [...receiver.delivered.values()].reduce((sum, count) => sum + count, 0);
      report(
        'webhook receiver down',
        `receiver refused connections for 30 s and then held requests past the 2 s timeout for 20 s (${((backAt - downAt) / 1000).toFixed(0)} s in all), WEBHOOK_RETRY_BASE_SECONDS=1; all caught up ${((Date.now() - backAt) / 1000).toFixed(0)} s after it was back`,
        tallied,
        client,
        `requests the slow receiver left unanswered: ${slowRequests}`,
      );
      expect(client.unexpected5xx()).toEqual([]);
      expectAllArrived(tallied, DEALS);
      expect(slowRequests).toBeGreaterThan(0);
      await receiver.down();
    },
  );

  it(
    'a receiver answering 410 Gone stops its deliveries: one attempt per event, logged as failed',
    { timeout: 180_000 },
    async () => {
      const client = new Client(cluster.baseUrl);
      const receiver = new Receiver();
      await receiver.up();
      const market = await setUpMarketplace(client, cluster.admin, receiver, 'gone');
      receiver.mode = 'gone';
      const count = 10;
      const ids = new Set(await inParallel(count, CONCURRENCY, (index) => driveDeal(client, market, `gone-${index}`)));
      const made = await eventsOf(cluster.databaseUrl, ids);
      // Every event's one attempt logged as failed with 410 (the log is what an operator reads).
      const attempts = await until('every 410 attempt logged', 60_000, async () => {
        const log = await client.call(
          'GET',
          `/admin/marketplaces/${market.id}/webhook-deliveries?limit=500`,
          undefined,
          cluster.admin,
        );
        const page = log.body as {
          items: Array<{ deal_id: string; status: string; http_status: number; attempt: number }>;
        };
        const items = page.items.filter((item) => ids.has(item.deal_id));
        return items.length === made.length && items.every((item) => item.status === 'failed') ? items : undefined;
      });
      // Nothing retries after a 410: three times the first retry delay later, still one request per event.
      await sleep(3_000);
      const tallied = await tally(cluster.databaseUrl, receiver, ids, 0);
      const requests = made.map((event) => receiver.requests.get(event.event_id) ?? 0);
      report(
        'receiver answering 410',
        `${count} deals driven to paid against a receiver answering 410 Gone`,
        tallied,
        client,
        `requests ${requests.reduce((sum, n) => sum + n, 0)} for ${made.length} events; attempts logged ${attempts.length}, all failed`,
      );
      expect(tallied).toMatchObject({
        deals: count,
        expected: count * tallied.eventsPerDeal,
        delivered: 0,
        lost: count * tallied.eventsPerDeal,
        wrongEvents: 0,
      });
      expect(requests).toEqual(Array(made.length).fill(1));
      expect(attempts.map((item) => `${item.attempt} ${item.http_status}`)).toEqual(Array(made.length).fill('1 410'));
      await receiver.down();
    },
  );
});
