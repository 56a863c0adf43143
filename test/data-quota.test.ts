// The monthly quota is exact under concurrency: one account, two keys, 1100 concurrent requests on the free tariff,
// exactly 1000 pass; the rest get 429 quota_exceeded with Retry-After, and RateLimit headers count down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.ts';
import { bearer, dataKey } from './doubles/data-setup.ts';
import { checkAndCount } from '../src/data-api/quota.ts';
import { uniqueEmail } from './helpers.ts';

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

    const usage = await server.services.db.query('SELECT used FROM data_usage WHERE account_id = $1', [first.account_id]);
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
