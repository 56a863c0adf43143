// Loads the sample data once (first `npm start`): tenders from the generator, practice decisions and two corpora,
// as the `sample` source with one finished run. Later starts find that run and skip. Also used by the benchmark.
import type { Db } from '../db.ts';
import { upsertTenders } from '../data-api/ingest.ts';
import { refreshTenderFacets } from '../data-api/tenders.ts';
import { referenceDay, sampleTender } from './sample-data.ts';
import { SAMPLE_CORPORA, samplePracticeDecisions } from './sample-data-texts.ts';

export const SAMPLE_SOURCE = 'sample';
export const SAMPLE_TENDER_COUNT = 5000;
const BATCH = 1000;

/** Registers a generated source (kind `sample`, nothing to sync). */
export async function ensureGeneratedSource(db: Db, key: string, name: string): Promise<void> {
  await db.query(
    `INSERT INTO data_sources (key, name, kind, enabled) VALUES ($1, $2, 'sample', true) ON CONFLICT (key) DO NOTHING`,
    [key, name],
  );
}

/** Writes generated tenders [from, to) into a source, in batches, dated relative to today; reports progress after each. */
export async function loadGeneratedTenders(
  db: Db,
  source: string,
  range: { from: number; to: number; batch?: number; seed?: number; reference?: number },
  progress?: (done: number) => void,
): Promise<number> {
  let written = 0;
  const batch = range.batch ?? BATCH;
  const reference = range.reference ?? referenceDay();
  for (let start = range.from; start < range.to; start += batch) {
    const end = Math.min(range.to, start + batch);
    const records = Array.from({ length: end - start }, (_, i) => sampleTender(start + i, reference, range.seed));
    written += await upsertTenders(db, source, records);
    progress?.(end - range.from);
  }
  return written;
}

/** Records a finished run of a generated source, so /v1/sources shows it as ok with its count. */
export async function recordGeneratedRun(db: Db, source: string, fetched: number): Promise<void> {
  await db.query(
    `INSERT INTO data_source_runs (run_id, source_key, finished_at, outcome, fetched, upserted, records)
     VALUES ($1, $2, now(), 'ok', $3, $3, (SELECT count(*) FROM tenders WHERE source_key = $2))`,
    [`${source}/${new Date().toISOString()}`, source, fetched],
  );
}

/** Loads the sample data unless it is there; true when it loaded now. Safe to call from several processes. */
export async function ensureSampleData(
  db: Db,
  say: (line: string) => void = () => {},
  count = SAMPLE_TENDER_COUNT,
): Promise<boolean> {
  const lock = await db.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(hashtext('svc sample data'))`);
    const loaded = await db.query(`SELECT 1 FROM data_source_runs WHERE source_key = $1 AND outcome = 'ok' LIMIT 1`, [
      SAMPLE_SOURCE,
    ]);
    if (loaded.rowCount) return false;
    await ensureGeneratedSource(db, SAMPLE_SOURCE, 'Sample data (generated, not real tenders)');
    const began = Date.now();
    say('▸ Sample data (first start only)…');
    let shown = 0;
    await loadGeneratedTenders(db, SAMPLE_SOURCE, { from: 0, to: count }, (done) => {
      if (done - shown >= count / 5 || done === count) {
        say(`    sample tenders ${done}/${count}`);
        shown = done;
      }
    });
    await loadPractice(db);
    await loadCorpora(db);
    await refreshTenderFacets(db);
    await recordGeneratedRun(db, SAMPLE_SOURCE, count);
    say(
      `  ✓ Sample data: ${count} tenders, practice decisions, knowledge corpora (${((Date.now() - began) / 1000).toFixed(1)} s)`,
    );
    return true;
  } finally {
    await lock.query(`SELECT pg_advisory_unlock(hashtext('svc sample data'))`).catch(() => {});
    lock.release();
  }
}

async function loadPractice(db: Db): Promise<void> {
  await db.query(
    `INSERT INTO practice_decisions (id, court, case_number, decided_at, title, text, url, sample)
     SELECT id, court, case_number, decided_at, title, text, url, true
     FROM jsonb_to_recordset($1::jsonb) AS r(id text, court text, case_number text, decided_at date, title text, text text, url text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(samplePracticeDecisions())],
  );
}

async function loadCorpora(db: Db): Promise<void> {
  for (const corpus of SAMPLE_CORPORA) {
    await db.query(
      `INSERT INTO knowledge_corpora (key, title, description, sample) VALUES ($1, $2, $3, true) ON CONFLICT (key) DO NOTHING`,
      [corpus.key, corpus.title, corpus.description],
    );
    await db.query(
      `INSERT INTO knowledge_documents (id, corpus_key, title, text, url)
       SELECT id, $1, title, text, 'https://sample.invalid/knowledge/' || id
       FROM jsonb_to_recordset($2::jsonb) AS r(id text, title text, text text)
       ON CONFLICT (id) DO NOTHING`,
      [corpus.key, JSON.stringify(corpus.documents)],
    );
  }
}
