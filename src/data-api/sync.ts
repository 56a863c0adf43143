// Sources and their Temporal Schedules. Remote endpoints come from the configuration; each configured source gets a
// schedule `data-sync/<key>` that starts the sync workflow every DATA_SYNC_INTERVAL_SECONDS (overlaps skipped);
// a source without an endpoint is disabled and its schedule, if any, paused.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { Db } from '../db.ts';
import type { Services } from '../services.ts';
import type { SourceConfig } from './connectors/index.ts';
import { refreshTenderFacets } from './tenders.ts';

export interface SourceDefinition {
  key: string;
  name: string;
  kind: SourceConfig['kind'];
  country: string | null;
  url: string | undefined;
  intervalSeconds: number;
}

export const SYNC_WORKFLOW = 'dataSyncWorkflow';
export const scheduleId = (key: string) => `data-sync/${key}`;

/** The sources the configuration names: EIS and TED always (disabled without a URL), plus each OCDS feed. */
export function configuredSources(config: Config): SourceDefinition[] {
  const interval = config.DATA_SYNC_INTERVAL_SECONDS;
  const ocds = (config.OCDS_SOURCES ?? '')
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [key, ...url] = pair.split('=');
      return {
        key: key,
        name: `OCDS feed ${key}`,
        kind: 'ocds' as const,
        country: null,
        url: url.join('='),
        intervalSeconds: interval,
      };
    });
  return [
    {
      key: 'eis-44fz',
      name: 'EIS (zakupki.gov.ru): 44-FZ notices',
      kind: 'eis',
      country: 'RU',
      url: config.EIS_NOTICES_URL,
      intervalSeconds: interval,
    },
    {
      key: 'ted',
      name: 'TED (Tenders Electronic Daily): EU notices',
      kind: 'ted',
      country: null,
      url: config.TED_SEARCH_URL,
      intervalSeconds: interval,
    },
    ...ocds,
  ];
}

export async function saveSource(db: Db, source: SourceDefinition): Promise<void> {
  await db.query(
    `INSERT INTO data_sources (key, name, kind, country, url, enabled, interval_seconds) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (key) DO UPDATE SET name = excluded.name, kind = excluded.kind, country = excluded.country, url = excluded.url,
       enabled = excluded.enabled, interval_seconds = excluded.interval_seconds, updated_at = now()`,
    [
      source.key,
      source.name,
      source.kind,
      source.country,
      source.url ?? null,
      Boolean(source.url),
      source.intervalSeconds,
    ],
  );
}

/** Creates or updates the source's schedule; paused when the source has no endpoint. */
export async function ensureSchedule(client: Client, source: SourceDefinition, taskQueue: string): Promise<void> {
  const options = {
    spec: { intervals: [{ every: `${source.intervalSeconds}s` }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: SYNC_WORKFLOW,
      args: [source.key],
      taskQueue,
      workflowId: scheduleId(source.key),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    state: {
      paused: !source.url,
      note: source.url ? `syncs ${source.kind} source ${source.key}` : 'no endpoint configured',
    },
  };
  try {
    await client.schedule.create({ scheduleId: scheduleId(source.key), ...options });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const handle = client.schedule.getHandle(scheduleId(source.key));
    await handle.update((previous) => ({
      ...previous,
      spec: options.spec,
      action: options.action,
      policies: options.policies,
    }));
    await (source.url ? handle.unpause('source configured') : handle.pause('no endpoint configured'));
  }
}

/** Registers the configured sources and their schedules (at start; idempotent). */
export async function configureDataSources(services: Services): Promise<SourceDefinition[]> {
  const sources = configuredSources(services.config);
  for (const source of sources) {
    await saveSource(services.db, source);
    await ensureSchedule(services.temporal, source, services.config.TEMPORAL_TASK_QUEUE);
  }
  return sources;
}

// What the sync activities do, over the database.

export async function loadSource(db: Db, key: string): Promise<(SourceConfig & { enabled: boolean }) | undefined> {
  const result = await db.query<{
    key: string;
    kind: SourceConfig['kind'] | 'sample';
    url: string | null;
    country: string | null;
    enabled: boolean;
  }>('SELECT key, kind, url, country, enabled FROM data_sources WHERE key = $1', [key]);
  const row = result.rows[0];
  if (!row || row.kind === 'sample' || !row.url) return undefined;
  return { key: row.key, kind: row.kind, url: row.url, country: row.country, enabled: row.enabled };
}

export async function beginRun(db: Db, sourceKey: string, runId: string): Promise<void> {
  await db.query('INSERT INTO data_source_runs (run_id, source_key) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING', [
    runId,
    sourceKey,
  ]);
}

export interface RunOutcome {
  runId: string;
  sourceKey: string;
  outcome: 'ok' | 'partial' | 'failed';
  fetched: number;
  upserted: number;
  error?: string;
}

export async function finishRun(db: Db, run: RunOutcome): Promise<void> {
  await db.query(
    `UPDATE data_source_runs SET finished_at = now(), outcome = $2, fetched = $3, upserted = $4, error = $5,
       records = (SELECT count(*) FROM tenders WHERE source_key = $6)
     WHERE run_id = $1`,
    [run.runId, run.outcome, run.fetched, run.upserted, run.error?.slice(0, 1000) ?? null, run.sourceKey],
  );
  if (run.upserted > 0) await refreshTenderFacets(db);
}
