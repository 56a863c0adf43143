// The data API's REST contract over real HTTP: every /v1 endpoint with its shapes, bounds and errors, full-text
// search (Russian morphology, English, scores), and authentication.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { bearer, dataKey, seedTenders, withSampleData } from '../doubles/data-setup.ts';
import { saveSource } from '../../src/data-api/sync.ts';

let server: TestServer;
let key: string;
const source = uniqueId('src').toLowerCase();
const token = `zx${uniqueId('').replace(/\W/g, '')}`; // a word no other tender has

beforeAll(async () => {
  server = await startTestServer({ kind: 'data' });
  await withSampleData(server.services.db);
  await seedTenders(server.services.db, source, [
    {
      sourceId: 'a',
      title: `Поставка ${token} для нужд больницы`,
      description: 'Медицинские изделия.',
      valueAmount: 1500000,
      valueCurrency: 'RUB',
      buyerName: 'ГБУЗ «Больница № 1»',
      buyerId: '7701234567',
      classification: [{ scheme: 'OKPD2', id: '32.50.13.190', description: 'Инструменты' }],
    },
    {
      sourceId: 'b',
      title: `Ремонт дороги`,
      description: `Работы по ремонту, в описании упомянут ${token}.`,
      country: 'KZ',
    },
    {
      sourceId: 'c',
      title: `Supply of ${token} laptops`,
      description: 'Computers for schools.',
      country: 'GB',
      valueCurrency: 'GBP',
    },
  ]);
  key = (await dataKey(server.services.db, 'pro')).key;
});
afterAll(() => server?.stop());

const get = (path: string, headers: Record<string, string> = bearer(key)) => fetch(`${server.url}${path}`, { headers });
const ok = async (path: string) => {
  const response = await get(path);
  expect(response.status, await response.clone().text()).toBe(200);
  return json(response);
};
const expectProblem = async (response: Response, status: number, code: string) => {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const body = await json(response);
  expect(body).toMatchObject({
    status,
    code,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  return body;
};

describe('authentication', () => {
  it('answers 401 with a Bearer challenge without a key, with a wrong key, and with another kind of key', async () => {
    for (const headers of [{}, bearer('svc_mcp_wrong'), bearer('mk_not_a_data_key')]) {
      const response = await get('/v1/tenders', headers);
      await expectProblem(response, 401, 'unauthorized');
      expect(response.headers.get('www-authenticate')).toMatch(
        /^Bearer .*resource_metadata="http[^"]+\/\.well-known\/oauth-protected-resource\/v1"/,
      );
    }
  });

  it('puts RateLimit headers on every answer, errors included', async () => {
    for (const path of ['/v1/tenders', '/v1/tenders/nope:nope', '/v1/tenders?limit=1000']) {
      const response = await get(path);
      expect(response.headers.get('ratelimit-policy')).toBe(
        '"monthly";q=50000;w=' + response.headers.get('ratelimit-policy')!.split('w=')[1],
      );
      expect(response.headers.get('ratelimit')).toMatch(/^"monthly";r=\d+;t=\d+$/);
    }
  });
});

describe('GET /v1/tenders', () => {
  it('lists the latest tenders with the contract shape and defaults', async () => {
    const body = await ok('/v1/tenders');
    expect(body).toMatchObject({
      limit: 20,
      offset: 0,
      total: expect.any(Number),
      total_relation: expect.stringMatching(/^(eq|gte)$/),
    });
    expect(body.items).toHaveLength(20);
    const tender = body.items[0];
    expect(Object.keys(tender).sort()).toEqual(
      [
        'buyer',
        'classification',
        'country',
        'deadline_at',
        'description',
        'id',
        'law',
        'published_at',
        'sample',
        'source',
        'status',
        'title',
        'url',
        'value',
      ].sort(),
    );
    const dates = body.items.map((t: { published_at: string }) => t.published_at);
    expect([...dates].sort().reverse()).toEqual(dates);
  });

  it('finds «поставка» when asked for «поставки» (Russian morphology) and its translation «supply», with scores in 0..1', async () => {
    const body = await ok(`/v1/tenders?q=${encodeURIComponent(`поставки ${token}`)}`);
    expect(body.items.map((t: { id: string }) => t.id).sort()).toEqual([`${source}:a`, `${source}:c`]);
    expect(body.items[0].score).toBeGreaterThan(0);
    expect(body.items[0].score).toBeLessThanOrEqual(1);
    const broad = await ok(`/v1/tenders?q=${encodeURIComponent('поставки')}&limit=50`);
    expect(broad.items.length).toBe(50);
    for (const item of broad.items)
      expect(`${item.title} ${item.description}`.toLowerCase()).toMatch(/поставк|suppl|deliver/);
  });

  it('ranks a title match above a description match and stems English too', async () => {
    const body = await ok(`/v1/tenders?q=${token}`);
    expect(body.total).toBe(3);
    expect(body.items.at(-1).id).toBe(`${source}:b`); // only in the description: weight B
    const english = await ok(`/v1/tenders?q=${encodeURIComponent(`laptop ${token}`)}`);
    expect(english.items.map((t: { id: string }) => t.id)).toEqual([`${source}:c`]);
  });

  it('filters by country in any case and by min_score', async () => {
    const kz = await ok(`/v1/tenders?q=${token}&country=kz`);
    expect(kz.items.map((t: { id: string }) => t.id)).toEqual([`${source}:b`]);
    const all = await ok(`/v1/tenders?q=${token}`);
    const threshold = all.items[1].score;
    const strong = await ok(`/v1/tenders?q=${token}&min_score=${threshold}`);
    expect(strong.items.length).toBeLessThan(all.items.length);
    expect(strong.total).toBe(strong.items.length);
    for (const item of strong.items) expect(item.score).toBeGreaterThanOrEqual(threshold);
    const countries = await ok('/v1/tenders?country=GB&limit=100');
    for (const item of countries.items) expect(item.country).toBe('GB');
  });

  it('pages with limit and offset; past the end is an empty page with the total', async () => {
    const first = await ok(`/v1/tenders?q=${token}&limit=2`);
    const second = await ok(`/v1/tenders?q=${token}&limit=2&offset=2`);
    expect(first.items).toHaveLength(2);
    expect(second.items).toHaveLength(1);
    const beyond = await ok(`/v1/tenders?q=${token}&offset=50`);
    expect(beyond).toMatchObject({ items: [], total: 3, offset: 50 });
  });

  it('says total is a lower bound when a very common word matches more than it ranks', async () => {
    const body = await ok('/v1/tenders?q=tenders'); // in every English sample description
    expect(body).toMatchObject({ total_relation: 'gte', total: 2000 });
  });

  it('refuses out-of-range parameters with 400 validation_failed', async () => {
    for (const query of [
      'limit=0',
      'limit=101',
      'offset=-1',
      'min_score=1.5',
      'min_score=-0.1',
      'country=RUS',
      'limit=abc',
      `q=${'x'.repeat(501)}`,
    ]) {
      const body = await expectProblem(await get(`/v1/tenders?${query}`), 400, 'validation_failed');
      expect(body.errors[0]).toMatchObject({ path: query.split('=')[0], message: expect.any(String) });
    }
  });
});

describe('GET /v1/tenders/{id}', () => {
  it('gives the card with the source record', async () => {
    const card = await ok(`/v1/tenders/${encodeURIComponent(`${source}:a`)}`);
    expect(card).toMatchObject({
      id: `${source}:a`,
      source,
      country: 'RU',
      buyer: { name: 'ГБУЗ «Больница № 1»', id: '7701234567' },
      value: { amount: 1500000, currency: 'RUB' },
      classification: [{ scheme: 'OKPD2', id: '32.50.13.190', description: 'Инструменты' }],
      source_record: { test: true },
      sample: false,
      ocid: null,
      updated_at: expect.any(String),
    });
  });

  it('answers 404 not_found for an unknown tender', async () => {
    await expectProblem(await get('/v1/tenders/nothing:here'), 404, 'not_found');
  });
});

describe('facets, countries, sources, corpora', () => {
  it('counts facets, for all tenders or one country', async () => {
    const all = await ok('/v1/tenders/facets');
    expect(all.total).toBeGreaterThanOrEqual(5000);
    expect(all.country.find((f: { value: string }) => f.value === 'RU').tenders).toBeGreaterThan(1000);
    expect(all.classification.length).toBeGreaterThan(5);
    expect(all.classification[0]).toMatchObject({
      scheme: expect.any(String),
      id: expect.any(String),
      value: expect.any(String),
    });
    const gb = await ok('/v1/tenders/facets?country=gb');
    expect(gb.country).toEqual([{ value: 'GB', tenders: gb.total }]);
    expect(gb.currency.map((f: { value: string }) => f.value)).toContain('GBP');
    await expectProblem(await get('/v1/tenders/facets?country=XYZ'), 400, 'validation_failed');
  });

  it('lists at least six countries, Russia among them, with names', async () => {
    const body = await ok('/v1/tenders/countries');
    expect(body.items.length).toBeGreaterThanOrEqual(6);
    expect(body.items.find((c: { code: string }) => c.code === 'RU')).toMatchObject({
      name: 'Russia',
      name_ru: 'Россия',
      tenders: expect.any(Number),
    });
  });

  it('lists sources with status, last sync and records', async () => {
    await saveSource(server.services.db, {
      key: 'eis-44fz',
      name: 'EIS (zakupki.gov.ru): 44-FZ notices',
      kind: 'eis',
      country: 'RU',
      url: undefined,
      intervalSeconds: 3600,
    });
    const body = await ok('/v1/sources');
    const sample = body.items.find((s: { key: string }) => s.key === 'sample');
    expect(sample).toMatchObject({
      name: expect.stringContaining('Sample'),
      status: 'ok',
      records: 5000,
      country: null,
    });
    expect(Date.parse(sample.last_sync_at)).toBeGreaterThan(0);
    expect(body.items.find((s: { key: string }) => s.key === 'eis-44fz')).toMatchObject({
      status: 'disabled',
      country: 'RU',
    });
  });

  it('lists at least two corpora with document counts', async () => {
    const body = await ok('/v1/corpora');
    expect(body.items.length).toBeGreaterThanOrEqual(2);
    for (const corpus of body.items)
      expect(corpus).toMatchObject({
        key: expect.any(String),
        title: expect.any(String),
        documents: expect.any(Number),
      });
  });
});

describe('POST /v1/practice/search and /v1/knowledge/search', () => {
  const search = (path: string, body: unknown) => post(`${server.url}${path}`, body, bearer(key));

  it('finds court decisions by word forms, top_k bounded', async () => {
    const response = await search('/v1/practice/search', {
      query: 'односторонний отказ от исполнения контракта',
      top_k: 5,
    });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.items).toHaveLength(5);
    expect(body.items[0]).toMatchObject({
      id: expect.any(String),
      title: expect.any(String),
      court: expect.any(String),
      case_number: expect.any(String),
      decided_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      snippet: expect.stringContaining('**'),
      url: expect.any(String),
    });
    const scores = body.items.map((i: { score: number }) => i.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect((await json(await search('/v1/practice/search', { query: 'неустойки' }))).items.length).toBe(10);
  });

  it('searches knowledge in chosen corpora and refuses an unknown one', async () => {
    const body = await json(
      await search('/v1/knowledge/search', { query: 'CPV codes', corpus_keys: ['ocds-ted-guide'] }),
    );
    expect(body.items.length).toBeGreaterThan(0);
    for (const item of body.items) expect(item.corpus_key).toBe('ocds-ted-guide');
    const russian = await json(await search('/v1/knowledge/search', { query: 'обеспечение заявки' }));
    expect(russian.items[0].corpus_key).toBe('44-fz-guide');
    const problem = await expectProblem(
      await search('/v1/knowledge/search', { query: 'x', corpus_keys: ['no-such-corpus'] }),
      400,
      'unknown_corpus',
    );
    expect(problem.detail).toContain('no-such-corpus');
  });

  it('validates bodies: query required, top_k 1..50, JSON only', async () => {
    for (const body of [
      {},
      { query: '' },
      { query: 'x', top_k: 0 },
      { query: 'x', top_k: 51 },
      { query: 'x', top_k: 2.5 },
    ]) {
      await expectProblem(await search('/v1/practice/search', body), 400, 'validation_failed');
    }
    await expectProblem(
      await search('/v1/knowledge/search', { query: 'x', corpus_keys: 'a' }),
      400,
      'validation_failed',
    );
    await expectProblem(await search('/v1/practice/search', '{"query":'), 400, 'invalid_json');
    const text = await fetch(`${server.url}/v1/practice/search`, {
      method: 'POST',
      headers: { ...bearer(key), 'Content-Type': 'text/plain' },
      body: 'query',
    });
    await expectProblem(text, 415, 'unsupported_media_type');
  });
});

describe('GET /v1/me', () => {
  it('reports the tariff, quota, usage and the tools', async () => {
    const own = await dataKey(server.services.db, 'free');
    const first = await json(await get('/v1/me', bearer(own.key)));
    expect(first).toMatchObject({
      account_id: own.account_id,
      tariff: 'free',
      monthly_quota: 1000,
      used: 1,
      remaining: 999,
    });
    expect(new Date(first.resets_at).getUTCDate()).toBe(1);
    expect(first.tools).toEqual([
      'search_tenders',
      'get_tender',
      'tender_facets',
      'tender_countries',
      'list_sources',
      'search_practice',
      'search_knowledge',
      'list_corpora',
    ]);
    const second = await json(await get('/v1/me', bearer(own.key)));
    expect(second).toMatchObject({ used: 2, remaining: 998 });
    const unlimited = await dataKey(server.services.db, 'enterprise');
    const response = await get('/v1/me', bearer(unlimited.key));
    expect(await json(response)).toMatchObject({ tariff: 'enterprise', monthly_quota: null, remaining: null, used: 1 });
    expect(response.headers.get('ratelimit-policy')).toBeNull();
  });
});

describe('the OpenAPI document', () => {
  it('documents every /v1 endpoint', async () => {
    const document = await json(await fetch(`${server.url}/v1/openapi.json`));
    for (const path of [
      '/v1/tenders',
      '/v1/tenders/{id}',
      '/v1/tenders/facets',
      '/v1/tenders/countries',
      '/v1/sources',
      '/v1/practice/search',
      '/v1/knowledge/search',
      '/v1/corpora',
      '/v1/me',
    ]) {
      expect(document.paths[path], path).toBeDefined();
    }
  });
});
