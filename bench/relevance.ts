// bench:relevance: runs the judged set (relevance-judgments.ts) against the sample data and prints nDCG@10 and
// recall@50, for the search as it is and for the search before issue 15 (websearch_to_tsquery ranked by ts_rank,
// no thesaurus, no typo correction, no filters but the country), overall and per kind of query.
// Self-contained: it starts a PostgreSQL of its own in a temporary folder, migrates it and loads the sample data.
//   nDCG@10: graded gains 2^grade - 1 with a log2 discount, against the ideal order of every sample tender's grade.
//   recall@50: the share of the fully relevant tenders (grade 2) in the first 50, out of at most 50 (a query with 170
//   relevant tenders cannot show more than 50 on one page, so it is not held against it).
// Usage: npm run bench:relevance [-- --verbose]
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '../src/db.ts';
import { startEmbeddedPostgres } from '../src/dev/embedded-postgres.ts';
import { freePort } from '../src/dev/ports.ts';
import { ensureSampleData } from '../src/dev/sample-data-load.ts';
import type { ProductKey } from '../src/dev/sample-data-catalog.ts';
import { prepareDatabase } from '../src/migrate.ts';
import { createLogger } from '../src/log.ts';
import { TenderSearchQuery, tenderSearch } from '../src/data-api/schemas.ts';
import { searchBounds, searchTenders } from '../src/data-api/tenders.ts';
import { JUDGMENTS, type JudgedTender, type Judgment } from './relevance-judgments.ts';

const verbose = process.argv.includes('--verbose');

interface Scores {
  ndcg: number;
  recall: number;
}

function evaluate(ranked: string[], grades: Map<string, number>): Scores {
  const gain = (grade: number) => 2 ** grade - 1;
  const dcg = (list: number[]) => list.slice(0, 10).reduce((sum, grade, i) => sum + gain(grade) / Math.log2(i + 2), 0);
  const ideal = dcg([...grades.values()].sort((a, b) => b - a));
  const relevant = [...grades.values()].filter((grade) => grade === 2).length;
  const found = ranked.slice(0, 50).filter((id) => grades.get(id) === 2).length;
  return {
    ndcg: ideal === 0 ? 1 : dcg(ranked.map((id) => grades.get(id) ?? 0)) / ideal,
    recall: relevant === 0 ? 1 : found / Math.min(relevant, 50),
  };
}

/** The sample tenders with what they truly are. */
async function truth(db: Db): Promise<Map<string, JudgedTender>> {
  const result = await db.query<{
    id: string;
    raw: { product: ProductKey; buyer_kind: string; city: string };
    country: string;
    status: string;
    law: string | null;
    value_amount: string;
    value_currency: string;
    deadline_at: Date;
    published_at: Date;
  }>(
    `SELECT id, raw, country, status, law, value_amount, value_currency, deadline_at, published_at FROM tenders WHERE source_key = 'sample'`,
  );
  return new Map(
    result.rows.map((row) => [
      row.id,
      {
        product: row.raw.product,
        buyer_kind: row.raw.buyer_kind,
        city: row.raw.city,
        country: row.country,
        status: row.status,
        law: row.law,
        value: Number(row.value_amount),
        currency: row.value_currency,
        deadline: row.deadline_at.toISOString().slice(0, 10),
        published: row.published_at.toISOString().slice(0, 10),
      },
    ]),
  );
}

async function engine(db: Db, judgment: Judgment): Promise<string[]> {
  const input = tenderSearch(TenderSearchQuery.parse({ ...judgment.query, limit: '50' }));
  return (await searchTenders(db, input, searchBounds(10_000))).items.map((item) => item.id);
}

/** The search before issue 15: its text and country only (the other filters did not exist). */
async function before(db: Db, judgment: Judgment): Promise<string[]> {
  const { q, country } = judgment.query;
  const params: string[] = [];
  const match = q ? `websearch_to_tsquery('russian', $${params.push(q)})` : undefined;
  const where = [
    ...(match ? [`s.search @@ ${match}`] : []),
    ...(country ? [`s.country = $${params.push(country)}`] : []),
  ];
  const result = await db.query<{ id: string }>(
    `SELECT s.id FROM tender_search s ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY ${match ? `ts_rank(s.search, ${match}, 32) DESC,` : ''} s.published_at DESC NULLS LAST, s.id LIMIT 50`,
    params,
  );
  return result.rows.map((row) => row.id);
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-relevance-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its folder
  const postgres = await startEmbeddedPostgres({ dataDir: dir, port: await freePort() });
  const db = createDb(postgres.url, 4);
  try {
    await prepareDatabase({ databaseUrl: postgres.url, ownerUrl: postgres.ownerUrl }, createLogger('silent'));
    await ensureSampleData(db);
    const tenders = await truth(db);
    const rows: Array<{ judgment: Judgment; now: Scores; then: Scores }> = [];
    for (const judgment of JUDGMENTS) {
      const grades = new Map([...tenders].map(([id, tender]) => [id, judgment.grade(tender)]));
      rows.push({
        judgment,
        now: evaluate(await engine(db, judgment), grades),
        then: evaluate(await before(db, judgment), grades),
      });
    }
    const mean = (list: typeof rows, pick: (row: (typeof rows)[number]) => number) =>
      list.reduce((sum, row) => sum + pick(row), 0) / list.length;
    const line = (label: string, list: typeof rows) =>
      `${label.padEnd(10)} ${String(list.length).padStart(3)}   ${mean(list, (r) => r.then.ndcg).toFixed(3)}   ${mean(list, (r) => r.then.recall).toFixed(3)}` +
      `      ${mean(list, (r) => r.now.ndcg).toFixed(3)}   ${mean(list, (r) => r.now.recall).toFixed(3)}`;
    console.log(`${JUDGMENTS.length} judged queries over ${tenders.size} sample tenders\n`);
    console.log('queries      n   before: nDCG@10 recall@50   now: nDCG@10 recall@50');
    for (const tag of ['ru', 'en', 'mixed', 'filters', 'typo'] as const)
      console.log(
        line(
          tag,
          rows.filter((r) => r.judgment.tags.includes(tag)),
        ),
      );
    console.log(line('all', rows));
    const worst = [...rows]
      .sort((a, b) => a.now.ndcg + a.now.recall - (b.now.ndcg + b.now.recall))
      .slice(0, verbose ? rows.length : 5);
    console.log(`\n${verbose ? 'Every query' : 'The weakest queries'} (now: nDCG@10, recall@50):`);
    for (const row of worst)
      console.log(`  ${row.now.ndcg.toFixed(3)}  ${row.now.recall.toFixed(3)}  ${JSON.stringify(row.judgment.query)}`);
  } finally {
    await db.end();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
