// bench/data: against a running stack (`npm start` in another terminal), measures the data API at a million tenders:
//   1. loads the generated tenders into the `bench` source once (the sample generator; progress printed; later runs
//      reuse them), then refreshes the facet counts and statistics;
//   2. p50/p95 of selective searches, of broad searches (the most common words, also within a country, and pairs of
//      common words that never meet), of both with the filters suppliers use (status, deadline, value, classification,
//      buyer, law, sort), of filtered lists without text, of facets (also within a query) and of a card;
//   3. requests per second of /v1/tenders/countries;
//   4. the quota's added latency: the atomic count statement alone, sequential and concurrent.
// Usage: npm run bench:data [-- --tenders 1000000]
// DATABASE_URL (and DATABASE_OWNER_URL), or the embedded database of DATA_DIR on POSTGRES_PORT; MCP_URL as for the service.
import { parseConfig } from '../src/config.ts';
import { createDb } from '../src/db.ts';
import { embeddedUrls } from '../src/dev/embedded-postgres.ts';
import { issueDataKey } from '../src/data-api/keys.ts';
import { checkAndCount } from '../src/data-api/quota.ts';
import { refreshTenderFacets } from '../src/data-api/tenders.ts';
import { ensureGeneratedSource, loadGeneratedTenders, recordGeneratedRun } from '../src/dev/sample-data-load.ts';
import { referenceDay } from '../src/dev/sample-data.ts';
import { line, runConcurrently } from './stats.ts';

const config = parseConfig();
const flag = process.argv.indexOf('--tenders');
const target = flag > 0 ? Number(process.argv[flag + 1]) : 1_000_000;
const SOURCE = 'bench';
// The service's role for what the service does; the owner's for VACUUM, which only a table's owner may run.
const urls = config.DATABASE_URL
  ? { url: config.DATABASE_URL, ownerUrl: config.DATABASE_OWNER_URL ?? config.DATABASE_URL }
  : embeddedUrls(config.DATA_DIR, config.POSTGRES_PORT);
const db = createDb(urls.url, 8);
const base = config.MCP_URL;

const SELECTIVE = [
  'аппарат ультразвуковой диагностики',
  'строительству школы Томск',
  'дизельного топлива Пермь',
  'ventilation Leeds',
  'охране объектов Казань',
  '"school textbooks" Cork',
  'реконструкции водопроводных сетей Гомель',
  'catering Galway',
  'антивирусное программное обеспечение Самара',
  'passenger cars Manchester',
];
const BROAD = ['поставка', 'tenders', 'контракта'];
const today = new Date().toISOString().slice(0, 10);
// The filters a supplier sets, each with a text of either kind.
const FILTERED_SELECTIVE = [
  'q=лекарственные+препараты&status=active',
  `q=medicines&deadline_from=${today}`,
  'q=ноутбуков&value_max=5000000&currency=RUB',
  'q=road+repair&classification=cpv:452',
  'q=уборке&buyer=больница',
  'q=diesel&law=eu-2014-24&sort=deadline',
];
const FILTERED_BROAD = [
  'q=поставка&status=active',
  `q=поставка&deadline_from=${today}&sort=deadline`,
  'q=tenders&value_min=100000&sort=value_desc',
  'q=контракта&classification=okpd2:21',
  'q=поставка&law=223-fz',
  'q=tenders&buyer=council',
];
const FILTERED_LISTS = [
  'status=active',
  `status=active&deadline_from=${today}&sort=deadline`,
  'classification=cpv:33600000&sort=value_desc',
  'law=44-fz&value_min=1000000&value_max=5000000',
  'buyer=Водоканал&country=RU',
  'currency=GBP&sort=value_asc',
];
// Each common, never in one tender: the planner multiplies their shares and expects many matches (the worst case).
const NEVER_TOGETHER = ['поставка tenders', 'контракта supply'];

async function loadTenders(): Promise<void> {
  await ensureGeneratedSource(db, SOURCE, 'Benchmark tenders (generated)');
  const present = Number(
    (await db.query('SELECT count(*) AS n FROM tenders WHERE source_key = $1', [SOURCE])).rows[0].n,
  );
  if (present >= target) {
    console.log(`${present} generated tenders already loaded`);
    return;
  }
  console.log(`Loading ${target - present} generated tenders (${present} present)…`);
  const started = performance.now();
  const workers = 4;
  const chunk = Math.ceil((target - present) / workers);
  const reference = referenceDay();
  let done = 0;
  let shown = 0;
  await Promise.all(
    Array.from({ length: workers }, (_, w) => {
      const from = present + w * chunk;
      const to = Math.min(target, from + chunk);
      let last = 0;
      return loadGeneratedTenders(db, SOURCE, { from, to, batch: 2000, reference }, (count) => {
        done += count - last;
        last = count;
        if (done - shown >= 50_000) {
          shown = done;
          const seconds = (performance.now() - started) / 1000;
          console.log(`  ${done}/${target - present} (${(done / seconds).toFixed(0)}/s)`);
        }
      });
    }),
  );
  console.log(`  loaded in ${((performance.now() - started) / 1000).toFixed(0)} s; refreshing facets and statistics…`);
  await refreshTenderFacets(db);
  const owner = createDb(urls.ownerUrl, 1);
  await owner.query('VACUUM ANALYZE tenders, tender_search').finally(() => owner.end());
  await recordGeneratedRun(db, SOURCE, target - present);
}

/** Runs `count` requests with `concurrency` in flight; prints rate and p50/p95/p99 (the targets are p95). */
async function timed(label: string, paths: string[], key: string, count = 200, concurrency = 1): Promise<void> {
  const latencies: number[] = [];
  const summary = await runConcurrently(count, concurrency, async (i) => {
    const begun = performance.now();
    const response = await fetch(`${base}${paths[i % paths.length]}`, { headers: { Authorization: `Bearer ${key}` } });
    await response.arrayBuffer();
    latencies.push(performance.now() - begun);
    if (response.status !== 200) throw new Error(`${paths[i % paths.length]}: ${response.status}`);
  });
  const sorted = latencies.sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)];
  console.log(`${line(label, summary)}   p95 ${p95.toFixed(1).padStart(7)} ms`);
}

async function main() {
  await loadTenders();
  const total = Number((await db.query('SELECT count(*) AS n FROM tenders')).rows[0].n);
  const { key } = await issueDataKey(db, { email: 'bench-data@example.com', tariff: 'enterprise' });
  console.log(`\n${total} tenders in the database; data server ${base}\n`);

  const search = (q: string) => `/v1/tenders?q=${encodeURIComponent(q)}`;
  for (const q of BROAD) {
    const body = (await (
      await fetch(`${base}${search(q)}`, { headers: { Authorization: `Bearer ${key}` } })
    ).json()) as any;
    console.log(
      `broad «${q}»: total ${body.total} (${body.total_relation}), top score ${body.items[0]?.score?.toFixed(3)}`,
    );
  }
  const ids = (await db.query<{ id: string }>('SELECT id FROM tenders TABLESAMPLE SYSTEM (0.1) LIMIT 200')).rows.map(
    (r) => r.id,
  );

  await timed('warm-up', SELECTIVE.map(search), key, 50);
  await timed('selective search', SELECTIVE.map(search), key, 300);
  await timed('broad search (common words)', BROAD.map(search), key, 150);
  await timed(
    'broad search, country=RU',
    BROAD.map((q) => `${search(q)}&country=RU`),
    key,
    60,
  );
  await timed('common words never together', NEVER_TOGETHER.map(search), key, 60);
  await timed(
    'selective search with filters',
    FILTERED_SELECTIVE.map((query) => `/v1/tenders?${query}`),
    key,
    120,
  );
  await timed(
    'broad search with filters',
    FILTERED_BROAD.map((query) => `/v1/tenders?${query}`),
    key,
    120,
  );
  await timed(
    'lists with filters (no q)',
    FILTERED_LISTS.map((query) => `/v1/tenders?${query}`),
    key,
    120,
  );
  const first = (await (
    await fetch(`${base}/v1/tenders?status=active&limit=100`, { headers: { Authorization: `Bearer ${key}` } })
  ).json()) as any;
  await timed('next page by cursor', [`/v1/tenders?status=active&limit=100&cursor=${first.next_cursor}`], key, 60);
  await timed('facets', ['/v1/tenders/facets', '/v1/tenders/facets?country=RU'], key, 200);
  await timed(
    'facets within a query and filters',
    ['/v1/tenders/facets?q=medicines', '/v1/tenders/facets?q=поставка&status=active', '/v1/tenders/facets?law=44-fz'],
    key,
    60,
  );
  await timed(
    'card',
    ids.map((id) => `/v1/tenders/${encodeURIComponent(id)}`),
    key,
    200,
  );
  await timed('latest (no q), offset 1000', ['/v1/tenders?offset=1000'], key, 100);
  await timed('countries, 50 concurrent', ['/v1/tenders/countries'], key, 5000, 50);

  const sequential = await runConcurrently(1000, 1, async () => {
    await checkAndCount(db, key, 1);
  });
  console.log(`${line('quota statement alone', sequential)}`);
  const concurrent = await runConcurrently(2000, 8, async () => {
    await checkAndCount(db, key, 1);
  });
  console.log(`${line('quota statement, 8 concurrent', concurrent)}`);
  await db.end();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
