// Shared set-up of the data API tests: the sample data (loaded once per database, as at first start), a source of
// tenders only this test file knows, and data keys. Not a double of an outside service, but test-only like them.
import type { Db } from '../../src/db.ts';
import { upsertTenders, type TenderRecord } from '../../src/data-api/ingest.ts';
import { refreshTenderFacets } from '../../src/data-api/tenders.ts';
import { issueDataKey, type Tariff } from '../../src/data-api/keys.ts';
import { ensureGeneratedSource, ensureSampleData } from '../../src/dev/sample-data-load.ts';
import { uniqueEmail } from '../helpers.ts';

export async function withSampleData(db: Db): Promise<void> {
  await ensureSampleData(db);
}

/** A source with these tenders (ids `<source>:<sourceId>`), facets refreshed. */
export async function seedTenders(
  db: Db,
  source: string,
  records: Array<Partial<TenderRecord> & { sourceId: string; title: string }>,
) {
  await ensureGeneratedSource(db, source, `Test source ${source}`);
  await upsertTenders(
    db,
    source,
    records.map((r) => ({ country: 'RU', raw: { test: true }, ...r })),
  );
  await refreshTenderFacets(db);
}

export async function dataKey(
  db: Db,
  tariff: Tariff = 'pro',
  email = uniqueEmail('data'),
): Promise<{ key: string; account_id: string; email: string }> {
  const issued = await issueDataKey(db, { email, tariff });
  return { ...issued, email };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
