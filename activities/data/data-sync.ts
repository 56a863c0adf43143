// Activities of the data-source sync workflow: record the run, fetch and store one page, close the run.
import type { Services } from '../../src/services.ts';
import { CONNECTORS } from '../../src/data-api/connectors/index.ts';
import { upsertTenders } from '../../src/data-api/ingest.ts';
import { beginRun, finishRun, loadSource, type RunOutcome } from '../../src/data-api/sync.ts';

export function createDataSyncActivities(services: Services) {
  return {
    /** Records the run; false when the source has no endpoint or is disabled (nothing to sync). */
    async beginDataSync(input: { sourceKey: string; runId: string }): Promise<boolean> {
      const source = await loadSource(services.db, input.sourceKey);
      if (!source?.enabled) return false;
      await beginRun(services.db, input.sourceKey, input.runId);
      return true;
    },

    /** One page from the source into tenders; upserts make a retried page harmless. */
    async syncDataPage(input: {
      sourceKey: string;
      cursor?: string;
    }): Promise<{ fetched: number; upserted: number; next?: string }> {
      const source = await loadSource(services.db, input.sourceKey);
      if (!source) throw new Error(`Source ${input.sourceKey} has no endpoint.`);
      const page = await CONNECTORS[source.kind](source, input.cursor);
      const upserted = await upsertTenders(services.db, source.key, page.records);
      return { fetched: page.records.length, upserted, ...(page.next ? { next: page.next } : {}) };
    },

    async finishDataSync(run: RunOutcome): Promise<void> {
      await finishRun(services.db, run);
    },
  };
}
