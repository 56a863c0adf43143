// TRUST_PROXY: which client address the per-address limits see. Without it X-Forwarded-For is ignored (a client
// cannot pick its own bucket); with N it is read N entries from the right, so a client-supplied left part is ignored.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.ts';
import { Api } from '../../src/http/api.ts';
import { createApp } from '../../src/http/app.ts';
import { listen, type RunningServer } from '../../src/http/server.ts';
import { createLogger } from '../../src/log.ts';
import { json, post, startTestServer, uniqueLoopback, type TestServer } from '../helpers.ts';

// The widget creation counts every attempt against the address before it reads the body, so an empty body (400)
// still spends one of the two allowed attempts, and the third from the same address is 429.
const LIMIT = { WIDGET_CREATE_LIMIT_PER_ADDRESS: '2' };
const createDeal = (server: TestServer, forwardedFor: string) =>
  post(`${server.url}/api/mkt/widget/deals`, {}, { 'X-Forwarded-For': forwardedFor });

/** The same, from a chosen loopback address as the TCP peer; the answer's status. */
const createDealFrom = (server: TestServer, localAddress: string, forwardedFor: string) =>
  new Promise<number>((resolve, reject) => {
    const request = http.request(`${server.url}/api/mkt/widget/deals`, {
      method: 'POST',
      localAddress,
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': forwardedFor },
    });
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    request.on('error', reject);
    request.end('{}');
  });

describe('the TRUST_PROXY setting', () => {
  it('defaults to 0 and takes a hop count', () => {
    expect(parseConfig({}).TRUST_PROXY).toBe(0);
    expect(parseConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
  });

  it.each(['true', '-1', '1.5', 'nginx'])('stops start-up naming TRUST_PROXY when it is %j', (value) => {
    expect(() => parseConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
    expect(() => parseConfig({ TRUST_PROXY: value })).toThrow(
      /^Invalid configuration:\n {2}TRUST_PROXY: must be the number of reverse proxies/,
    );
  });
});

describe('without TRUST_PROXY', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: LIMIT });
  });
  afterAll(() => server?.stop());

  it('ignores X-Forwarded-For: forged addresses all count against the TCP peer', async () => {
    // A peer address of this test's own: the limits count in the database every test shares.
    const peer = uniqueLoopback();
    expect(await createDealFrom(server, peer, '203.0.113.1')).toBe(400);
    expect(await createDealFrom(server, peer, '203.0.113.2')).toBe(400);
    expect(await createDealFrom(server, peer, '203.0.113.3')).toBe(429);
  });
});

describe('with TRUST_PROXY=1', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { ...LIMIT, TRUST_PROXY: '1' } });
  });
  afterAll(() => server?.stop());

  it('limits the right-most forwarded address and ignores what the client put to its left', async () => {
    expect((await createDeal(server, '198.51.100.7')).status).toBe(400);
    expect((await createDeal(server, '198.51.100.7')).status).toBe(400);
    // The client sent "X-Forwarded-For: 203.0.113.9"; the proxy appended the address it saw.
    const spoofed = await createDeal(server, '203.0.113.9, 198.51.100.7');
    expect(spoofed.status).toBe(429);
    expect((await json(spoofed)).code).toBe('rate_limited');
    // Another client behind the same proxy has its own budget.
    expect((await createDeal(server, '198.51.100.8')).status).toBe(400);
  });
});

describe('the client address behind N proxies', () => {
  let servers: Record<number, RunningServer>;
  // A bare app whose one route echoes ctx.ip, so the hop arithmetic is visible directly.
  const echoIp = (proxyHops: number) => {
    const api = new Api({ title: 'ip', version: '1', description: '', securitySchemes: {} });
    api.route({
      method: 'get',
      path: '/ip',
      operationId: 'ip',
      summary: 'The client address',
      tags: [],
      responses: { 200: { description: 'ok' } },
      handler: (ctx) => {
        ctx.body = { ip: ctx.ip };
      },
    });
    const app = createApp({
      name: 'test',
      baseUrl: 'http://x',
      logger: createLogger('silent'),
      api,
      openapiPath: '/openapi.json',
      health: [],
      proxyHops,
    });
    return listen(app, '127.0.0.1', 0);
  };
  beforeAll(async () => {
    servers = { 0: await echoIp(0), 2: await echoIp(2) };
  });
  afterAll(() => Promise.all(Object.values(servers ?? {}).map((server) => server.stop())));

  const ipSeenBy = async (hops: number, forwardedFor?: string) =>
    (
      await json(
        await fetch(`${servers[hops].url}/ip`, { headers: forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {} }),
      )
    ).ip;

  it('takes the second entry from the right with two proxies, and the TCP peer without the header or the setting', async () => {
    // Client → outer proxy (appends 192.0.2.10, the client) → inner proxy (appends 10.0.0.5, the outer proxy) → us.
    expect(await ipSeenBy(2, '203.0.113.9, 192.0.2.10, 10.0.0.5')).toBe('192.0.2.10');
    expect(await ipSeenBy(2)).toMatch(/127\.0\.0\.1$/);
    expect(await ipSeenBy(0, '203.0.113.9, 192.0.2.10, 10.0.0.5')).toMatch(/127\.0\.0\.1$/);
  });
});
