// The sync of one data source, started by its Temporal Schedule (`data-sync/<key>`): pages are fetched one activity
// at a time, each retried; the run's outcome (ok, partial when a later page failed, failed) feeds the source status.
// Deterministic: only @temporalio/workflow and type imports.
import { ActivityFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createDataSyncActivities } from '../../activities/data/data-sync.ts';

type Activities = ReturnType<typeof createDataSyncActivities>;

/** Pages per run at most; the next run starts over, and upserts keep that cheap and duplicate-free. */
const MAX_PAGES = 200;

const records = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 10 } });
const remote = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 3 },
});

export interface DataSyncResult {
  outcome: 'ok' | 'partial' | 'failed' | 'skipped';
  pages: number;
  fetched: number;
  upserted: number;
  error?: string;
}

export async function dataSyncWorkflow(sourceKey: string): Promise<DataSyncResult> {
  const info = workflowInfo();
  const runId = `${info.workflowId}/${info.runId}`;
  if (!(await records.beginDataSync({ sourceKey, runId })))
    return { outcome: 'skipped', pages: 0, fetched: 0, upserted: 0 };
  let cursor: string | undefined;
  let pages = 0;
  let fetched = 0;
  let upserted = 0;
  let error: string | undefined;
  while (pages < MAX_PAGES) {
    try {
      const page = await remote.syncDataPage({ sourceKey, ...(cursor ? { cursor } : {}) });
      pages++;
      fetched += page.fetched;
      upserted += page.upserted;
      cursor = page.next;
      if (!cursor) break;
    } catch (failure) {
      if (!(failure instanceof ActivityFailure)) throw failure;
      error = failure.cause?.message ?? failure.message;
      break;
    }
  }
  const outcome = error ? (pages > 0 ? 'partial' : 'failed') : 'ok';
  await records.finishDataSync({ runId, sourceKey, outcome, fetched, upserted, ...(error ? { error } : {}) });
  return { outcome, pages, fetched, upserted, ...(error ? { error } : {}) };
}
