// Tender search as suppliers use it (issue 15), over REST and MCP: the filters, the sorts, cursors, facets within the
// query, the thesaurus (Russian and English synonyms and translations), one-letter typos, and scores that separate.
// A source of tenders only this file knows, named by a word no other tender has, keeps the assertions exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { json, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { bearer, dataKey, seedTenders, withSampleData } from '../doubles/data-setup.ts';
import { indexQuery, parseTsquery, tsqueryText } from '../../src/data-api/tender-filters.ts';

let server: TestServer;
let key: string;
const source = uniqueId('flt')
  .toLowerCase()
  .replace(/[^a-z0-9-]/g, '');
const mark = `zf${uniqueId('').replace(/\W/g, '').toLowerCase()}`; // in every tender of this file, in no other
const day = 86_400_000;
const at = (days: number) => new Date(Date.now() + days * day).toISOString();
const okpd2 = (id: string, description: string) => [{ scheme: 'OKPD2', id, description }];
const cpv = (id: string, description: string) => [{ scheme: 'CPV', id, description }];

beforeAll(async () => {
  server = await startTestServer({ kind: 'data' });
  await withSampleData(server.services.db);
  await seedTenders(server.services.db, source, [
    {
      sourceId: 'med-ru',
      title: `Поставка лекарственных препаратов ${mark}`,
      description: 'Для нужд стационара.',
      buyerName: 'ГБУЗ «Городская больница № 3»',
      buyerId: '7701000001',
      status: 'active',
      law: '44-fz',
      valueAmount: 2_500_000,
      valueCurrency: 'RUB',
      publishedAt: at(-3),
      deadlineAt: at(10),
      classification: okpd2('21.20.10', 'Препараты лекарственные'),
    },
    {
      sourceId: 'med-gb',
      title: `Supply of pharmaceutical products ${mark}`,
      description: 'Hospital pharmacy.',
      country: 'GB',
      buyerName: 'Leeds Teaching Hospitals NHS Trust',
      status: 'active',
      law: 'uk-pa-2023',
      valueAmount: 400_000,
      valueCurrency: 'GBP',
      publishedAt: at(-2),
      deadlineAt: at(20),
      classification: cpv('33600000-6', 'Pharmaceutical products'),
    },
    {
      sourceId: 'fuel-ru',
      title: `Поставка дизельного топлива ${mark}`,
      description: 'По топливным картам.',
      buyerName: 'МУП «Водоканал»',
      buyerId: '7701000002',
      status: 'complete',
      law: '223-fz',
      valueAmount: 9_000_000,
      valueCurrency: 'RUB',
      publishedAt: at(-200),
      deadlineAt: at(-180),
      classification: okpd2('19.20.21.300', 'Топливо дизельное'),
    },
    {
      sourceId: 'road-ru',
      title: `Выполнение работ по ремонту автомобильных дорог ${mark}`,
      description: 'Асфальтобетонное покрытие.',
      buyerName: 'Администрация города Перми',
      buyerId: '7701000003',
      status: 'active',
      law: '44-fz',
      valueAmount: 120_000_000,
      valueCurrency: 'RUB',
      publishedAt: at(-1),
      deadlineAt: at(5),
      classification: okpd2('42.11.20', 'Работы строительные по строительству автомобильных дорог'),
    },
    {
      sourceId: 'desc-only',
      title: `Закупка для нужд учреждения ${mark}`,
      description: 'Поставка лекарственных препаратов по заявкам.',
      buyerName: 'ГБУЗ «Городская больница № 3»',
      status: 'cancelled',
      law: '44-fz',
      valueAmount: 50_000,
      valueCurrency: 'RUB',
      publishedAt: at(-30),
      deadlineAt: at(-20),
    },
    {
      sourceId: 'med-ru-old',
      title: `Поставка лекарственных препаратов ${mark}`,
      description: 'Для нужд стационара.',
      buyerName: 'ГБУЗ «Областная больница»',
      status: 'complete',
      law: '44-fz',
      valueAmount: 700_000,
      valueCurrency: 'RUB',
      publishedAt: at(-400),
      deadlineAt: at(-380),
      classification: okpd2('21.20.10', 'Препараты лекарственные'),
    },
  ]);
  key = (await dataKey(server.services.db, 'pro')).key;
});
afterAll(() => server?.stop());

const list = async (query: Record<string, string>) => {
  const response = await fetch(`${server.url}/v1/tenders?${new URLSearchParams({ limit: '100', ...query })}`, {
    headers: bearer(key),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return json(response);
};
const ids = (body: { items: Array<{ id: string }> }) => body.items.map((item) => item.id.slice(source.length + 1));
const mine = async (query: Record<string, string>) => ids(await list({ source, ...query }));

describe('the thesaurus and typos', () => {
  it('finds medicine tenders in both languages for the queries of issue 15', async () => {
    for (const q of ['лекарственные средства', 'medicines', 'medicine', 'drugs', 'медикаменты', 'pharmaceuticals']) {
      expect((await mine({ q })).sort(), q).toEqual(['desc-only', 'med-gb', 'med-ru', 'med-ru-old']);
    }
    // The sample data too: medicines found in Russian and English tenders alike.
    const sample = await list({ q: 'лекарственные средства', source: 'sample' });
    expect(sample.total).toBeGreaterThan(50);
    expect(new Set(sample.items.map((item: { country: string }) => item.country)).size).toBeGreaterThan(2);
  });

  it('forgives a one-letter typo and keeps a broader term over its narrower ones (diesel is a fuel)', async () => {
    expect((await mine({ q: 'лекарственых препаратов' })).sort()).toContain('med-ru');
    expect(await mine({ q: 'medicnes' })).toContain('med-gb');
    expect(await mine({ q: 'топливо' })).toEqual(['fuel-ru']);
    expect(await mine({ q: 'diesel' })).toEqual(['fuel-ru']);
    expect(await mine({ q: 'бензин' })).toEqual([]);
  });

  it('searches the classification labels and the buyer', async () => {
    expect(await mine({ q: 'больница' })).toEqual(expect.arrayContaining(['med-ru', 'desc-only', 'med-ru-old']));
    expect(await mine({ q: 'строительству' })).toEqual(['road-ru']); // only its OKPD2 label says it
  });
});

describe('scores', () => {
  it('spread over 0..1: title above description above label, the newer of equals first', async () => {
    const body = await list({ q: 'лекарственные препараты', source });
    const byId = Object.fromEntries(
      body.items.map((item: { id: string; score: number }) => [item.id.slice(source.length + 1), item.score]),
    );
    for (const score of Object.values(byId) as number[]) expect(score).toBeGreaterThan(0);
    for (const score of Object.values(byId) as number[]) expect(score).toBeLessThanOrEqual(1);
    expect(byId['med-ru']).toBeGreaterThan(0.9); // title and label, published this week
    expect(byId['med-ru']).toBeGreaterThan(byId['med-ru-old']); // the same tender, a year older
    expect(byId['med-ru-old']).toBeGreaterThan(byId['desc-only']); // in the title beats in the description
    expect(byId['desc-only']).toBeLessThan(0.65);
    expect(ids(body).slice(0, 2)).toEqual(['med-gb', 'med-ru']); // equal matches: the newer first
  });
});

describe('filters', () => {
  it('filter by status, law, currency, buyer (id or words), country and source', async () => {
    expect((await mine({ status: 'active' })).sort()).toEqual(['med-gb', 'med-ru', 'road-ru']);
    expect((await mine({ q: 'лекарства', status: 'active' })).sort()).toEqual(['med-gb', 'med-ru']);
    expect(await mine({ law: '223-FZ' })).toEqual(['fuel-ru']);
    expect(await mine({ currency: 'gbp' })).toEqual(['med-gb']);
    expect(await mine({ buyer: '7701000002' })).toEqual(['fuel-ru']);
    expect((await mine({ buyer: 'городская больница' })).sort()).toEqual(['desc-only', 'med-ru']);
    expect(await mine({ country: 'gb' })).toEqual(['med-gb']);
    expect((await list({ q: mark, source: 'sample' })).total).toBe(0);
  });

  it('filter by deadline, publication date and value ranges', async () => {
    expect((await mine({ deadline_from: at(0).slice(0, 10) })).sort()).toEqual(['med-gb', 'med-ru', 'road-ru']);
    expect(await mine({ deadline_to: at(-100) })).toEqual(['fuel-ru', 'med-ru-old']);
    expect((await mine({ published_from: at(-5).slice(0, 10), published_to: at(-2).slice(0, 10) })).sort()).toEqual([
      'med-gb',
      'med-ru',
    ]);
    expect(await mine({ value_min: '1000000', value_max: '10000000', currency: 'RUB' })).toEqual(['med-ru', 'fuel-ru']);
    expect(await mine({ q: 'препараты', value_max: '1000000' })).toEqual(['med-ru-old', 'desc-only']);
  });

  it('filter by classification code prefixes, with or without the scheme', async () => {
    expect((await mine({ classification: 'okpd2:21.20' })).sort()).toEqual(['med-ru', 'med-ru-old']);
    expect(await mine({ classification: 'cpv:336' })).toEqual(['med-gb']);
    expect((await mine({ classification: '21.20, 33600000-6' })).sort()).toEqual(['med-gb', 'med-ru', 'med-ru-old']);
    expect(await mine({ classification: 'OKPD2:42' })).toEqual(['road-ru']);
    expect(await mine({ classification: 'cpv:21' })).toEqual([]);
  });
});

describe('sorts and cursors', () => {
  it('sort newest (default without text), by deadline, by value either way', async () => {
    expect(await mine({})).toEqual(['road-ru', 'med-gb', 'med-ru', 'desc-only', 'fuel-ru', 'med-ru-old']);
    expect(await mine({ sort: 'deadline' })).toEqual([
      'med-ru-old',
      'fuel-ru',
      'desc-only',
      'road-ru',
      'med-ru',
      'med-gb',
    ]);
    expect(await mine({ sort: 'value_desc', currency: 'RUB' })).toEqual([
      'road-ru',
      'fuel-ru',
      'med-ru',
      'med-ru-old',
      'desc-only',
    ]);
    expect(await mine({ sort: 'value_asc', currency: 'RUB' })).toEqual([
      'desc-only',
      'med-ru-old',
      'med-ru',
      'fuel-ru',
      'road-ru',
    ]);
    expect(await mine({ q: 'лекарства', sort: 'newest' })).toEqual(['med-gb', 'med-ru', 'desc-only', 'med-ru-old']);
  });

  it('page by cursor to the end, in lists and in ranked searches, and say null there', async () => {
    for (const query of [
      { source, sort: 'deadline' },
      { source, q: 'лекарства' },
    ] as Array<Record<string, string>>) {
      const whole = ids(await list(query));
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await list({ ...query, limit: '2', ...(cursor ? { cursor } : {}) });
        seen.push(...ids(page));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual(whole);
    }
    expect((await list({ source, limit: '100' })).next_cursor).toBeNull();
  });

  it('refuse a cursor of another sort, a made-up one, a cursor with offset, and values that contradict each other', async () => {
    const page = await list({ source, limit: '1', sort: 'deadline' });
    const refused = async (query: Record<string, string>, code: string, field: string) => {
      const response = await fetch(`${server.url}/v1/tenders?${new URLSearchParams(query)}`, { headers: bearer(key) });
      expect(response.status).toBe(400);
      const problem = await json(response);
      expect(problem.code, JSON.stringify(query)).toBe(code);
      // A shape error names its field; a conflict or a cursor names it in words.
      if (code === 'validation_failed')
        expect(problem.errors.map((error: { path: string }) => error.path)).toContain(field);
      else expect(problem.detail).toContain(field);
    };
    // Shapes the OpenAPI document states: validation_failed, naming the field.
    await refused({ cursor: 'not a cursor' }, 'validation_failed', 'cursor');
    await refused({ status: 'open' }, 'validation_failed', 'status');
    await refused({ deadline_from: '2026-13-01' }, 'validation_failed', 'deadline_from');
    await refused({ deadline_to: '2026-11-01T10:00:00-20:12' }, 'validation_failed', 'deadline_to');
    await refused({ published_from: '0000-02-29' }, 'validation_failed', 'published_from');
    await refused({ classification: 'cpv:abc' }, 'validation_failed', 'classification');
    await refused({ classification: '' }, 'validation_failed', 'classification');
    await refused({ currency: 'RUBLE' }, 'validation_failed', 'currency');
    await refused({ law: '44 fz' }, 'validation_failed', 'law');
    // Well-shaped, but not a cursor this API gave, or parameters that contradict one another.
    await refused({ cursor: 'bm90LWEtY3Vyc29y' }, 'invalid_cursor', 'cursor');
    await refused({ cursor: page.next_cursor, sort: 'newest' }, 'conflicting_parameters', 'cursor');
    await refused({ cursor: page.next_cursor, sort: 'deadline', offset: '5' }, 'conflicting_parameters', 'offset');
    await refused({ sort: 'relevance' }, 'conflicting_parameters', 'sort');
    await refused({ value_min: '10', value_max: '5' }, 'conflicting_parameters', 'value_min');
  });
});

describe('facets within the query and filters', () => {
  it('count only the matching tenders, law included', async () => {
    const response = await fetch(`${server.url}/v1/tenders/facets?${new URLSearchParams({ q: 'лекарства', source })}`, {
      headers: bearer(key),
    });
    expect(response.status).toBe(200);
    const facets = await json(response);
    expect(facets).toMatchObject({ total: 4, total_relation: 'eq' });
    expect(facets.country).toEqual([
      { value: 'RU', tenders: 3 },
      { value: 'GB', tenders: 1 },
    ]);
    expect(facets.law).toEqual([
      { value: '44-fz', tenders: 3 },
      { value: 'uk-pa-2023', tenders: 1 },
    ]);
    expect(facets.classification).toEqual(
      expect.arrayContaining([{ value: 'OKPD2:21.20.10', scheme: 'OKPD2', id: '21.20.10', tenders: 2 }]),
    );
    expect(facets.status).toEqual(
      expect.arrayContaining([
        { value: 'active', tenders: 2 },
        { value: 'cancelled', tenders: 1 },
      ]),
    );
    const all = await json(await fetch(`${server.url}/v1/tenders/facets`, { headers: bearer(key) }));
    expect(all.total).toBeGreaterThan(5000);
    expect(all.law.map((f: { value: string }) => f.value)).toEqual(
      expect.arrayContaining(['44-fz', '223-fz', 'eu-2014-24']),
    );
  });
});

describe('MCP search_tenders and tender_facets', () => {
  it('take query and the same filters, and answer what REST answers', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/`), { requestInit: { headers: bearer(key) } }),
    );
    try {
      const args = { query: 'medicines', source, status: 'active', value_min: 100000, sort: 'value_desc', limit: 5 };
      const result = await client.callTool({ name: 'search_tenders', arguments: args });
      expect(result.isError).toBeFalsy();
      const rest = await list({
        q: 'medicines',
        source,
        status: 'active',
        value_min: '100000',
        sort: 'value_desc',
        limit: '5',
      });
      expect(result.structuredContent).toEqual(rest);
      expect(ids(rest)).toEqual(['med-ru', 'med-gb']);
      const facets = await client.callTool({ name: 'tender_facets', arguments: { query: 'лекарства', source } });
      expect(facets.structuredContent).toMatchObject({ total: 4 });
      const refused = await client.callTool({ name: 'search_tenders', arguments: { query: 'x', sort: 'cheapest' } });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('the part of a search the index finds (selective searches at a million tenders)', () => {
  it('rewrites each thesaurus term once: every lexeme of a concept appears once, a phrase concept is not widened', async () => {
    const { rows } = await server.services.db.query<{ cars: string; maintenance: string }>(
      `SELECT tender_query('passenger cars Manchester')::text AS cars, tender_query('ремонт автомобилей')::text AS maintenance`,
    );
    const lexemes = rows[0].cars.match(/'[^']+'/g)!;
    expect(lexemes.length).toBe(new Set(lexemes).size);
    expect(rows[0].cars).toContain("'vehicl'");
    // «ремонт автомобилей» is vehicle maintenance, not every repair of every vehicle
    expect(rows[0].maintenance).not.toContain("'overhaul'");
    expect(rows[0].maintenance).toContain("'автосервис'");
  });

  it('reads the share of each lexeme from the planner statistics, prefixes summed, unknown ones at a floor', async () => {
    const { rows } = await server.services.db.query<{ f: { default: number; lexemes: Record<string, number> } }>(
      `SELECT tender_search_frequencies($1::tsquery) AS f`,
      ["'поставк' & '#okpd2:21':* & 'zzzunknown'"],
    );
    const { f } = rows[0];
    expect(Object.keys(f.lexemes).sort()).toEqual(['#okpd2:21:*', 'zzzunknown', 'поставк']);
    expect(f.default).toBeGreaterThan(0);
    expect(f.lexemes.zzzunknown).toBe(f.default);
    for (const share of Object.values(f.lexemes)) expect(share).toBeLessThanOrEqual(1);
  });

  it('parses and prints tsqueries as PostgreSQL does: quotes, prefixes, phrases and negations kept', () => {
    for (const text of [
      "'a' & ( 'b' | 'c' )",
      "'it''s':* & !'x'",
      "( 'school' <-> 'textbook' ) & 'cork'",
      "'a' | 'b' & 'c'",
    ]) {
      expect(tsqueryText(parseTsquery(text)!).replace(/[()\s]/g, '')).toBe(text.replace(/[()\s]/g, ''));
    }
    expect(parseTsquery('')).toBeUndefined();
  });

  it('leaves a common filter and negations out of the index, to be tested on the rows; keeps the rare parts', () => {
    const query = parseTsquery("'томск' & ( 'школ' | 'school' ) & '@ru' & !'ремонт'")!;
    const parts = query.kind === 'and' ? query.operands : [query];
    const frequencies = { default: 0.001, lexemes: { томск: 0.04, школ: 0.1, school: 0.03, '@ru': 0.45, ремонт: 0.1 } };
    const chosen = indexQuery(parts, frequencies, 1_000_000, 2000)!;
    expect(chosen.exact).toBe(false);
    expect(chosen.index).toContain("'томск'");
    expect(chosen.index).not.toContain('ремонт');
    // A small query goes to the index whole: nothing left to test on the rows.
    expect(
      indexQuery([parseTsquery("'a'")!, parseTsquery("'b'")!], { default: 0.001, lexemes: {} }, 5000, 2000),
    ).toEqual({ index: "'a' & 'b'", exact: true });
    expect(indexQuery([parseTsquery("!'a'")!], frequencies, 1_000_000, 2000)).toBeUndefined();
  });
});
