// An activity that keeps failing is visible: from ACTIVITY_ALERT_ATTEMPTS on, each failed attempt is an error log line
// naming the deal's workflow and the activity, and counts in the worker's Prometheus metrics; once the cause is gone
// the change goes through. The failure is real: PostgreSQL refuses the deal's document rows (a trigger of the test,
// with a retryable SQLSTATE) until the test drops it.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { createServices, type Services } from '../../src/services.ts';
import { createMainApp } from '../../src/main-app.ts';
import { listen } from '../../src/http/server.ts';
import { createAdminToken } from '../../src/admin/auth.ts';
import { startWorker, type RunningWorker } from '../../src/worker.ts';
import { freePort } from '../../src/dev/ports.ts';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { json, ownerDb, post, testConfig, uniqueEmail, uniqueId } from '../helpers.ts';

const lines: Record<string, unknown>[] = [];
let services: Services;
let stopServer: () => Promise<void>;
let worker: RunningWorker;
let url: string;
let metricsUrl: string;
let adminToken: string;

beforeAll(async () => {
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const config = testConfig({ ACTIVITY_ALERT_ATTEMPTS: '2', WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  services = createServices(config, createLogger('error', stream));
  const server = await listen(createMainApp(services), '127.0.0.1', 0);
  url = server.url;
  stopServer = server.stop;
  worker = await startWorker(services);
  adminToken = await createAdminToken(services.db, 'test');
});
afterAll(async () => {
  await stopServer?.();
  await worker?.stop();
  await services?.close();
});

it('logs and counts the attempts of a write that keeps failing, and the change goes through once it can', async () => {
  const marketplace = await json(
    await post(
      `${url}/admin/marketplaces`,
      { name: 'Alert shop', mode: 'sandbox' },
      { Authorization: `Bearer ${adminToken}` },
    ),
  );
  const key = { 'X-Svc-Key': marketplace.secret_key };
  const deal = await json(
    await post(
      `${url}/api/mkt/deals`,
      { external_id: uniqueId('order'), buyer_email: uniqueEmail('buyer'), amount: 10 },
      key,
    ),
  );
  const workflowId = dealWorkflowId(marketplace.id, deal.external_id);

  const refusal = `test_refuse_${randomUUID().replaceAll('-', '')}`;
  // A trigger is the tables' owner's to make: the service's own role owns nothing.
  const owner = ownerDb();
  await owner.query(
    `CREATE FUNCTION ${refusal}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '40001'; END $$`,
  );
  await owner.query(
    `CREATE TRIGGER ${refusal} BEFORE INSERT ON deal_documents FOR EACH ROW WHEN (NEW.deal_id = '${deal.id}') EXECUTE FUNCTION ${refusal}()`,
  );
  let upload: Promise<Response> | undefined;
  try {
    // The caller gives up after its 30 s deadline; the workflow keeps retrying the write meanwhile.
    upload = fetch(`${url}/api/mkt/deals/${deal.id}/documents?kind=act`, {
      method: 'POST',
      headers: key,
      body: Buffer.from('act'),
    });
    const alerts = () =>
      lines.filter((line) => line.workflowId === workflowId && line.activityType === 'recordDealChange');
    await expect.poll(() => alerts().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    // The first attempt fails quietly (it may pass on a retry); the alert starts at the threshold.
    expect(alerts()[0]).toMatchObject({ level: 50, attempt: 2, workflowType: 'dealWorkflow', local: true });
    expect(alerts()[0].msg).toContain(`recordDealChange of workflow ${workflowId} still fails after 2 attempts`);
    expect(JSON.stringify(alerts()[0].err)).toContain('refused by the test');

    const counted = async () => {
      const text = await (await fetch(metricsUrl)).text();
      const sample = text
        .split('\n')
        .find(
          (line) =>
            line.startsWith('activity_failures_after_retries_total{') &&
            line.includes('activityType="recordDealChange"'),
        );
      return Number(sample?.split(' ').at(-1) ?? 0);
    };
    await expect.poll(counted, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
  } finally {
    await owner.query(`DROP TRIGGER ${refusal} ON deal_documents`);
    await owner.query(`DROP FUNCTION ${refusal}()`);
    await owner.end();
  }
  // The next retry lands: the deal takes the document, and a clean change after it goes through as usual.
  await expect
    .poll(async () => (await json(await fetch(`${url}/api/mkt/deals/${deal.id}`, { headers: key }))).documents.length, {
      timeout: 20_000,
    })
    .toBe(1);
  // Retries come at 1, 3, 7 s…: the one after the drop lands well within the caller's 30 s.
  expect((await upload).status).toBe(201);
  const next = await fetch(`${url}/api/mkt/deals/${deal.id}/documents?kind=invoice`, {
    method: 'POST',
    headers: key,
    body: Buffer.from('invoice'),
  });
  expect(next.status).toBe(201);
});
