// Scheduled ingestion on the Temporal dev server: a source's schedule starts the sync workflow on our worker, which
// reads the source's double; statuses come from the runs, and re-running never duplicates a record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { bearer, dataKey } from '../doubles/data-setup.ts';
import { startSourcesDouble, type SourcesDouble } from '../doubles/data-sources.ts';
import { ensureSchedule, saveSource, scheduleId, type SourceDefinition } from '../../src/data-api/sync.ts';

let server: TestServer;
let double: SourcesDouble;
let key: string;
const made: string[] = [];

beforeAll(async () => {
  [server, double] = await Promise.all([startTestServer({ kind: 'data', worker: true }), startSourcesDouble()]);
  key = (await dataKey(server.services.db)).key;
});
afterAll(async () => {
  for (const source of made)
    await server.services.temporal.schedule
      .getHandle(scheduleId(source))
      .delete()
      .catch(() => {});
  await server?.stop();
  await double?.stop();
});

async function scheduled(kind: SourceDefinition['kind'], url: string): Promise<SourceDefinition> {
  const source: SourceDefinition = {
    key: uniqueId(kind).toLowerCase(),
    name: `Test ${kind}`,
    kind,
    country: kind === 'eis' ? 'RU' : null,
    url,
    intervalSeconds: 3600,
  };
  made.push(source.key);
  await saveSource(server.services.db, source);
  await ensureSchedule(server.services.temporal, source, server.services.config.TEMPORAL_TASK_QUEUE);
  return source;
}

/**
 * Triggers the schedule and waits until the workflow it started has closed, then reads the source's status. The
 * run's row is not the signal to wait for: the workflow's last activity finishes it (and then refreshes the facets)
 * before the workflow closes, and the schedule names each workflow it starts `<workflowId>-<start to the second>`,
 * so a trigger within the same second while that workflow is still open is refused as already started and silently
 * dropped: the test then waited for a run that never came.
 */
async function runOnce(source: SourceDefinition) {
  const schedule = server.services.temporal.schedule.getHandle(scheduleId(source.key));
  const before = (await schedule.describe()).info.numActionsTaken;
  await schedule.trigger();
  await expect
    .poll(async () => (await schedule.describe()).info.numActionsTaken, {
      timeout: 30_000,
      interval: 100,
      message: 'the schedule started no workflow',
    })
    .toBeGreaterThan(before);
  const action = (await schedule.describe()).info.recentActions.at(-1)!.action;
  await server.services.temporal.workflow
    .getHandle(action.workflow.workflowId, action.workflow.firstExecutionRunId)
    .result();
  const sources = await json(await fetch(`${server.url}/v1/sources`, { headers: bearer(key) }));
  return sources.items.find((s: { key: string }) => s.key === source.key);
}

describe('scheduled sync', () => {
  it('syncs an OCDS feed across pages on schedule, and a second run adds no duplicate', async () => {
    const source = await scheduled('ocds', `${double.url}/ocds/page-1.json`);
    const description = await server.services.temporal.schedule.getHandle(scheduleId(source.key)).describe();
    expect(description.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'dataSyncWorkflow',
      args: [source.key],
    });
    const first = await runOnce(source);
    expect(first).toMatchObject({ status: 'ok', records: 1, last_sync_at: expect.any(String) });
    const second = await runOnce(source);
    expect(second).toMatchObject({ status: 'ok', records: 1 });
    const tender = await json(
      await fetch(`${server.url}/v1/tenders/${source.key}:ocds-213czf-000-00001`, { headers: bearer(key) }),
    );
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
