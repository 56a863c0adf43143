// The monthly quota is exact under concurrency: one account, two keys, 1100 concurrent requests on the free tariff,
// exactly 1000 pass; the rest get 429 quota_exceeded with Retry-After, and RateLimit headers count down. A request
// refused by validation or failing on our side costs nothing, and gives its unit back exactly once.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import { bearer, dataKey } from '../doubles/data-setup.ts';
import { checkAndCount } from '../../src/data-api/quota.ts';
import { uniqueEmail } from '../helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ kind: 'data' });
});
afterAll(() => server?.stop());

describe('the monthly quota', () => {
  it('lets exactly 1000 of 1100 concurrent requests through two keys of one free account', async () => {
    const email = uniqueEmail('quota');
    const first = await dataKey(server.services.db, 'free', email);
    const second = await dataKey(server.services.db, 'free', email);
    expect(second.account_id).toBe(first.account_id);
    const responses = await Promise.all(
      Array.from({ length: 1100 }, async (_, i) => {
        const response = await fetch(`${server.url}/v1/corpora`, { headers: bearer(i % 2 ? first.key : second.key) });
        return { status: response.status, headers: response.headers, text: await response.text() };
      }),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1000);
    expect(statuses.filter((s) => s === 429)).toHaveLength(100);
    const refused = responses.find((r) => r.status === 429)!;
    const body = JSON.parse(refused.text);
    expect(body).toMatchObject({ status: 429, code: 'quota_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"monthly";r=0;t=\d+$/);

    const usage = await server.services.db.query('SELECT used FROM data_usage WHERE account_id = $1', [
      first.account_id,
    ]);
    expect(usage.rows).toEqual([{ used: 1000 }]);
    // Spent means spent for every key of the account, /v1/me included.
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(first.key) })).status).toBe(429);
  });

  it('counts down in the RateLimit header and renews with the calendar month (UTC)', async () => {
    const { key } = await dataKey(server.services.db, 'free');
    const one = await fetch(`${server.url}/v1/corpora`, { headers: bearer(key) });
    const two = await fetch(`${server.url}/v1/corpora`, { headers: bearer(key) });
    const policy = one.headers.get('ratelimit-policy')!;
    expect(policy).toMatch(/^"monthly";q=1000;w=(2419200|2505600|2592000|2678400)$/); // 28 to 31 days
    expect(one.headers.get('ratelimit')).toMatch(/^"monthly";r=999;t=\d+$/);
    expect(two.headers.get('ratelimit')).toMatch(/^"monthly";r=998;t=\d+$/);
    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2));
    const renewed = await checkAndCount(server.services.db, key, 1, nextMonth);
    expect(renewed).toMatchObject({ used: 1, allowed: true, quota: 1000 });
  });

  it('honours a quota set for the account over its tariff', async () => {
    const { key, account_id } = await dataKey(server.services.db, 'enterprise');
    await server.services.db.query('UPDATE data_accounts SET monthly_quota = 2 WHERE id = $1', [account_id]);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${server.url}/v1/me`, { headers: bearer(key) })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe('what costs nothing', () => {
  const me = async (key: string) => json(await fetch(`${server.url}/v1/me`, { headers: bearer(key) }));

  it('a request refused by validation or failing on our side leaves used unchanged; a normal one counts', async () => {
    const { key } = await dataKey(server.services.db, 'free');
    const before = (await me(key)).used; // /v1/me counts itself
    const invalid = [
      await fetch(`${server.url}/v1/tenders?limit=1000`, { headers: bearer(key) }),
      await fetch(`${server.url}/v1/tenders?qq=misspelt`, { headers: bearer(key) }),
      await post(`${server.url}/v1/practice/search`, { query: 'неустойка', top_k: 500 }, bearer(key)),
    ];
    for (const response of invalid) {
      expect(response.status).toBe(400);
      expect((await json(response)).code).toBe('validation_failed');
      // The answer already shows the unit given back.
      expect(response.headers.get('ratelimit')).toMatch(new RegExp(`^"monthly";r=${1000 - before};t=\\d+$`));
    }

    // A failure on our side: the corpora query breaks as a lost table would.
    const db = server.services.db;
    const query = db.query.bind(db);
    const broken = vi
      .spyOn(db, 'query')
      .mockImplementation((text: unknown, ...rest: unknown[]) =>
        typeof text === 'string' && text.includes('FROM knowledge_corpora c')
          ? Promise.reject(new Error('relation "knowledge_corpora" does not exist'))
          : (query as (...args: unknown[]) => unknown)(text, ...rest),
      );
    try {
      const failed = await fetch(`${server.url}/v1/corpora`, { headers: bearer(key) });
      expect(failed.status).toBe(500);
      expect(await failed.text()).not.toContain('knowledge_corpora');
    } finally {
      broken.mockRestore();
    }
    expect((await me(key)).used).toBe(before + 1);

    // What is not a validation failure or ours counts: an unknown tender, an unknown corpus, a normal answer.
    expect((await fetch(`${server.url}/v1/tenders/nothing:here`, { headers: bearer(key) })).status).toBe(404);
    expect(
      (await post(`${server.url}/v1/knowledge/search`, { query: 'x', corpus_keys: ['nope'] }, bearer(key))).status,
    ).toBe(400);
    expect((await fetch(`${server.url}/v1/corpora`, { headers: bearer(key) })).status).toBe(200);
    expect((await me(key)).used).toBe(before + 5);
  });

  it('gives each refused request its unit back exactly once, under concurrency: then N left let exactly N through', async () => {
    const { key, account_id } = await dataKey(server.services.db, 'enterprise');
    await server.services.db.query('UPDATE data_accounts SET monthly_quota = 5 WHERE id = $1', [account_id]);
    // Twenty at once against five units: each either is refused by validation (400) or finds the units held by the
    // others for the moment (429); none costs anything.
    const refused = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${server.url}/v1/tenders?limit=0`, { headers: bearer(key) }).then((r) => r.status),
      ),
    );
    expect(refused.filter((status) => status !== 400 && status !== 429)).toEqual([]);
    expect(refused).toContain(400);
    const usage = await server.services.db.query(
      'SELECT coalesce(sum(used), 0)::int AS used FROM data_usage WHERE account_id = $1',
      [account_id],
    );
    expect(usage.rows[0].used).toBe(0);

    const statuses = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${server.url}/v1/corpora`, { headers: bearer(key) }).then((r) => r.status),
      ),
    );
    expect(statuses.sort()).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
