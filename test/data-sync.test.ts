// Scheduled ingestion on the Temporal dev server: a source's schedule starts the sync workflow on our worker, which
// reads the source's double; statuses come from the runs, and re-running never duplicates a record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, uniqueId, type TestServer } from './helpers.ts';
import { bearer, dataKey } from './doubles/data-setup.ts';
import { startSourcesDouble, type SourcesDouble } from './doubles/data-sources.ts';
import { ensureSchedule, saveSource, scheduleId, type SourceDefinition } from '../src/data-api/sync.ts';

let server: TestServer;
let double: SourcesDouble;
let key: string;
const made: string[] = [];

beforeAll(async () => {
  [server, double] = await Promise.all([startTestServer({ kind: 'data', worker: true }), startSourcesDouble()]);
  key = (await dataKey(server.services.db)).key;
});
afterAll(async () => {
  for (const source of made) await server.services.temporal.schedule.getHandle(scheduleId(source)).delete().catch(() => {});
  await server?.stop();
  await double?.stop();
});

async function scheduled(kind: SourceDefinition['kind'], url: string): Promise<SourceDefinition> {
  const source: SourceDefinition = { key: uniqueId(kind).toLowerCase(), name: `Test ${kind}`, kind, country: kind === 'eis' ? 'RU' : null, url, intervalSeconds: 3600 };
  made.push(source.key);
  await saveSource(server.services.db, source);
  await ensureSchedule(server.services.temporal, source, server.services.config.TEMPORAL_TASK_QUEUE);
  return source;
}

/** Triggers the schedule now and waits until that run has finished. */
async function runOnce(source: SourceDefinition) {
  const runs = async () =>
    Number((await server.services.db.query('SELECT count(*) AS n FROM data_source_runs WHERE source_key = $1 AND finished_at IS NOT NULL', [source.key])).rows[0].n);
  const before = await runs();
  const schedule = server.services.temporal.schedule.getHandle(scheduleId(source.key));
  await schedule.trigger();
  // Generous: the whole suite shares two cores, and a busy machine delays the schedule and the worker alike.
  const deadline = Date.now() + 60_000;
  while ((await runs()) === before) {
    if (Date.now() > deadline) {
      const { info } = await schedule.describe();
      throw new Error(`no sync run of ${source.key} finished in 60 s; schedule: ${JSON.stringify({ recent: info.recentActions, running: info.runningActions })}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const sources = await json(await fetch(`${server.url}/v1/sources`, { headers: bearer(key) }));
  return sources.items.find((s: { key: string }) => s.key === source.key);
}

describe('scheduled sync', () => {
  it('syncs an OCDS feed across pages on schedule, and a second run adds no duplicate', async () => {
    const source = await scheduled('ocds', `${double.url}/ocds/page-1.json`);
    const description = await server.services.temporal.schedule.getHandle(scheduleId(source.key)).describe();
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: 'dataSyncWorkflow', args: [source.key] });
    const first = await runOnce(source);
    expect(first).toMatchObject({ status: 'ok', records: 1, last_sync_at: expect.any(String) });
    const second = await runOnce(source);
    expect(second).toMatchObject({ status: 'ok', records: 1 });
    const tender = await json(await fetch(`${server.url}/v1/tenders/${source.key}:ocds-213czf-000-00001`, { headers: bearer(key) }));
    expect(tender).toMatchObject({ source: source.key, country: 'GB', ocid: 'ocds-213czf-000-00001' });
  });

  it('syncs EIS notices and TED search results', async () => {
    const eis = await runOnce(await scheduled('eis', `${double.url}/eis/notices.xml`));
    expect(eis).toMatchObject({ status: 'ok', records: 2, country: 'RU' });
    const ted = await runOnce(await scheduled('ted', `${double.url}/ted/v3/notices/search`));
    expect(ted).toMatchObject({ status: 'ok', records: 3 });
  });

  it('reports a failing source, a partial run as degraded, and recovery as ok', async () => {
    const broken = await scheduled('ocds', `${double.url}/broken/feed.json`);
    double.failing('/broken/feed.json');
    expect(await runOnce(broken)).toMatchObject({ status: 'failing', records: 0, last_sync_at: null });
    double.failing('/ocds/page-2.json');
    const flaky = await scheduled('ocds', `${double.url}/ocds/page-1.json`);
    expect(await runOnce(flaky)).toMatchObject({ status: 'degraded', records: 1 });
    double.healed('/ocds/page-2.json');
    expect(await runOnce(flaky)).toMatchObject({ status: 'ok', records: 1 });
  });
});
