// How full-text search bounds its work (src/data-api/tenders.ts), with small bounds so a few hundred tenders make a
// word "common": the newest-first walk for common words, its fallback to the GIN index when the walk finds too few,
// and the GIN path for everything else. The planner's estimate that picks the path is real (ANALYZE after seeding).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { json, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { bearer, dataKey, seedTenders, withSampleData } from '../doubles/data-setup.ts';
import { searchTenders, type SearchBounds } from '../../src/data-api/tenders.ts';

const BOUNDS: SearchBounds = { candidates: 40, broadShare: 0.05, timeoutMs: 10_000 }; // the walk reads at most 800 tenders
const COMMON = 500; // tenders per seeded word: about 9% of the ~5,300 the database holds
const recentWord = `zr${uniqueId('').replace(/\W/g, '')}`; // only in tenders newer than any other
const oldWord = `zo${uniqueId('').replace(/\W/g, '')}`; // only in tenders older than any other
const rareWord = `zq${uniqueId('').replace(/\W/g, '')}`; // in a handful of tenders

let server: TestServer;
const day = 86_400_000;
/** Inserted oldest first, so the index's physical order (the GIN path) is the opposite of newest first. */
const seeded = (word: string, start: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    sourceId: `${word}-${i}`,
    title: i % 3 === 0 ? `Поставка оборудования № ${i}` : `Поставка оборудования ${word} № ${i}`,
    description: i % 3 === 0 ? `Закупка ${word}.` : 'Описание объекта закупки.',
    country: i % 2 === 0 ? 'RU' : 'KZ',
    publishedAt: new Date(start + i * day).toISOString(),
  }));

beforeAll(async () => {
  server = await startTestServer({ kind: 'data' });
  await withSampleData(server.services.db);
  await seedTenders(server.services.db, uniqueId('search').toLowerCase(), [
    ...seeded(recentWord, Date.parse('2031-01-01'), COMMON),
    ...seeded(oldWord, Date.parse('1991-01-01'), COMMON),
    ...seeded(rareWord, Date.parse('2020-01-01'), 5),
  ]);
});
afterAll(() => server?.stop());

const search = (q: string, extra: { country?: string; min_score?: number } = {}) =>
  searchTenders(server.services.db, { q, limit: 100, offset: 0, ...extra }, BOUNDS);

describe('full-text search bounds', () => {
  it('ranks the newest matches of a common word, and says the total is a lower bound', async () => {
    const result = await search(recentWord);
    expect(result).toMatchObject({ total: BOUNDS.candidates, total_relation: 'gte' });
    const newest = seeded(recentWord, Date.parse('2031-01-01'), COMMON)
      .slice(-BOUNDS.candidates)
      .map((t) => t.publishedAt);
    expect(result.items.map((t) => t.published_at).sort()).toEqual(newest.sort());
    // Ranked by score first: the tenders naming the word in the title lead those naming it in the description.
    const scores = result.items.map((t) => t.score!);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(scores[0]).toBeGreaterThan(scores.at(-1)!);
    expect(result.items[0].title).toContain(recentWord);
    expect(result.items.at(-1)!.title).not.toContain(recentWord);
  });

  it('falls back to the index when a common word is missing from the newest tenders', async () => {
    const result = await search(oldWord);
    expect(result).toMatchObject({ total: BOUNDS.candidates, total_relation: 'gte' });
    for (const item of result.items) expect(`${item.title} ${item.description}`).toContain(oldWord);
  });

  it('finds nothing, exactly, for common words that never meet', async () => {
    expect(await search(`${recentWord} ${oldWord}`)).toMatchObject({ items: [], total: 0, total_relation: 'eq' });
  });

  it('ranks every match of a rare word and counts them exactly', async () => {
    const result = await search(rareWord);
    expect(result).toMatchObject({ total: 5, total_relation: 'eq' });
    expect(result.items).toHaveLength(5);
  });

  it('keeps to the country, and min_score applies to the candidates', async () => {
    const kz = await search(recentWord, { country: 'kz' });
    expect(kz.items.length).toBeGreaterThan(0);
    for (const item of kz.items) expect(item.country).toBe('KZ');
    const threshold = kz.items[0].score!;
    const strong = await search(recentWord, { country: 'KZ', min_score: threshold });
    expect(strong.items.length).toBeLessThan(kz.items.length);
    for (const item of strong.items) expect(item.score).toBeGreaterThanOrEqual(threshold);
  });

  it('stops a search past its time budget with 503 search_timeout, and the next search works', async () => {
    const hurried = { ...BOUNDS, candidates: 2000, timeoutMs: 1 }; // ranking 2000 tenders takes longer than 1 ms
    await expect(
      searchTenders(server.services.db, { q: 'поставка', limit: 20, offset: 0 }, hurried),
    ).rejects.toMatchObject({
      status: 503,
      code: 'search_timeout',
      message: expect.stringContaining('add a rarer word or a country'),
    });
    expect((await search(rareWord)).total).toBe(5);
  });

  it('says so over REST (503 problem) and MCP (an isError result) when SEARCH_TIMEOUT_MS runs out, and charges neither', async () => {
    const hurried = await startTestServer({ kind: 'data', env: { SEARCH_TIMEOUT_MS: '1' } });
    try {
      const { key } = await dataKey(hurried.services.db, 'pro');
      const used = async () =>
        (await json(await fetch(`${hurried.url}/v1/me`, { headers: bearer(key) }))).used as number;
      const before = await used();
      const response = await fetch(`${hurried.url}/v1/tenders?q=${encodeURIComponent('поставка')}`, {
        headers: bearer(key),
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(await json(response)).toMatchObject({
        code: 'search_timeout',
        status: 503,
        detail: expect.stringContaining('Remove the quotes'),
      });

      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${hurried.url}/mcp/`), { requestInit: { headers: bearer(key) } }),
      );
      const result = await client.callTool({ name: 'search_tenders', arguments: { query: 'поставка' } });
      expect(result.isError).toBe(true);
      expect((result.content as Array<{ text: string }>)[0].text).toMatch(/^search_timeout: /);
      await client.close();
      expect(await used()).toBe(before + 1); // the /v1/me that reads it
    } finally {
      await hurried.stop();
    }
  });

  it('answers an empty result for a query of stop words only', async () => {
    expect(await search('и в на')).toMatchObject({ items: [], total: 0, total_relation: 'eq' });
  });
});
