// Tender sources and their status, derived from their latest sync runs.
import type { z } from 'zod';
import type { Db } from '../db.ts';
import type { SourcesSchema } from './schemas.ts';

type SourceStatus = z.output<typeof SourcesSchema>['items'][number]['status'];

/** How many recent runs decide between degraded (some succeeded) and failing (none did). */
const RECENT_RUNS = 3;

export function sourceStatus(source: { enabled: boolean; configured: boolean }, recent: string[]): SourceStatus {
  if (!source.enabled || !source.configured) return 'disabled';
  const [latest] = recent;
  if (latest === 'ok') return 'ok';
  if (latest === 'partial') return 'degraded';
  if (latest === 'failed') return recent.some((outcome) => outcome !== 'failed') ? 'degraded' : 'failing';
  return 'degraded'; // enabled but not synced yet
}

export async function listSources(db: Db): Promise<z.output<typeof SourcesSchema>> {
  const result = await db.query<{
    key: string;
    name: string;
    country: string | null;
    enabled: boolean;
    configured: boolean;
    last_sync_at: Date | null;
    recent: string[] | null;
    records: number | null;
  }>(
    `SELECT s.key, s.name, s.country, s.enabled, (s.url IS NOT NULL OR s.kind = 'sample') AS configured,
       (SELECT max(r.finished_at) FROM data_source_runs r WHERE r.source_key = s.key AND r.outcome IN ('ok', 'partial')) AS last_sync_at,
       (SELECT array_agg(outcome) FROM (SELECT r.outcome FROM data_source_runs r WHERE r.source_key = s.key AND r.finished_at IS NOT NULL
          ORDER BY r.finished_at DESC LIMIT ${RECENT_RUNS}) AS recent) AS recent,
       (SELECT r.records FROM data_source_runs r WHERE r.source_key = s.key AND r.records IS NOT NULL ORDER BY r.finished_at DESC LIMIT 1) AS records
     FROM data_sources s ORDER BY s.key`,
  );
  return {
    items: result.rows.map((row) => ({
      key: row.key,
      name: row.name,
      country: row.country,
      status: sourceStatus(row, row.recent ?? []),
      last_sync_at: row.last_sync_at?.toISOString() ?? null,
      records: row.records ?? 0,
    })),
  };
}
