// The widget's abuse limits (per public key, per client address), its script (bundled, small, loadable from other
// origins, type-checked against the DOM) and the development demo storefront.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, uniqueEmail, uniqueId, uniqueLoopback, type TestServer } from '../helpers.ts';

const admin = (server: TestServer) => ({ Authorization: `Bearer ${server.adminToken}` });

/** POST from a chosen loopback address, so one test can be several clients. */
function postFrom(
  localAddress: string,
  url: string,
  body: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', localAddress, headers: { 'Content-Type': 'application/json' } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe('abuse limits on widget creation', () => {
  // Two main server instances over the same database, as behind a load balancer: the limits count together.
  let one: TestServer;
  let two: TestServer;
  beforeAll(async () => {
    const env = {
      WIDGET_CREATE_LIMIT_PER_KEY: '3',
      WIDGET_CREATE_LIMIT_PER_ADDRESS: '6',
      WIDGET_FIND_LIMIT_PER_ADDRESS: '2',
      WIDGET_CREATE_WINDOW_SECONDS: '600',
    };
    [one, two] = await Promise.all([startTestServer({ env }), startTestServer({ env })]);
  });
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
  });

  it('limits creations per public key and per client address across instances, with Retry-After', async () => {
    const shop = async (name: string) => json(await post(`${one.url}/admin/marketplaces`, { name }, admin(one)));
    const [a, b] = await Promise.all([shop('Limited A'), shop('Limited B')]);
    const url = (server: TestServer) => `${server.url}/api/mkt/widget/deals`;
    const deal = (publicKey: string) => ({
      public_key: publicKey,
      external_id: uniqueId('order'),
      buyer_email: uniqueEmail('buyer'),
    });
    const client = uniqueLoopback();

    expect((await postFrom(client, url(one), deal(a.public_key))).status).toBe(201);
    expect((await postFrom(client, url(two), deal(a.public_key))).status).toBe(201);
    expect((await postFrom(client, url(one), deal(a.public_key))).status).toBe(201);
    const keyLimited = await postFrom(client, url(two), deal(a.public_key));
    expect(keyLimited.status).toBe(429);
    expect(Number(keyLimited.headers['retry-after'])).toBeGreaterThan(500);

    // Another key from the same address goes on until the address has made 6 attempts (the refused one counts).
    expect((await postFrom(client, url(two), deal(b.public_key))).status).toBe(201);
    expect((await postFrom(client, url(one), deal(b.public_key))).status).toBe(201);
    const addressLimited = await postFrom(client, url(two), deal(b.public_key));
    expect(addressLimited.status).toBe(429);
    expect(addressLimited.headers['retry-after']).toBeDefined();
    // Another client address is not held back by this one.
    expect((await postFrom(uniqueLoopback(), url(one), deal(b.public_key))).status).toBe(201);
  });

  it('limits lookups (page loads) per client address in windows of their own, which never use up the creations', async () => {
    const marketplace = await json(await post(`${one.url}/admin/marketplaces`, { name: 'Looked up' }, admin(one)));
    const order = {
      public_key: marketplace.public_key,
      external_id: uniqueId('order'),
      buyer_email: uniqueEmail('buyer'),
    };
    const lookup = (client: string, server: TestServer) =>
      postFrom(client, `${server.url}/api/mkt/widget/deals/lookup`, order);
    const client = uniqueLoopback();
    expect((await lookup(client, one)).status).toBe(204);
    expect((await lookup(client, two)).status).toBe(204);
    const limited = await lookup(client, one);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(500);
    // The same address still creates (and another address still looks up): the windows are apart.
    expect((await postFrom(client, `${two.url}/api/mkt/widget/deals`, order)).status).toBe(201);
    expect((await lookup(uniqueLoopback(), two)).status).toBe(200);
  });

  it('lets exactly the limit through when a burst of creations lands on both instances at once', async () => {
    const marketplace = await json(await post(`${one.url}/admin/marketplaces`, { name: 'Burst' }, admin(one)));
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postFrom(uniqueLoopback(), `${(i % 2 ? one : two).url}/api/mkt/widget/deals`, {
          public_key: marketplace.public_key,
          external_id: uniqueId('order'),
          buyer_email: uniqueEmail('buyer'),
        }).then((response) => response.status),
      ),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(7);
  });
});

describe('the widget script and pages', () => {
  let server: TestServer;
  let demoServer: TestServer;
  let productionServer: TestServer;
  let demo: { marketplace: { id: string; public_key: string } };

  beforeAll(async () => {
    server = await startTestServer();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-widget-demo-'));
    [demoServer, productionServer] = await Promise.all([
      startTestServer({ env: { DATA_DIR: dataDir } }),
      startTestServer({ env: { DATA_DIR: dataDir, NODE_ENV: 'production' } }),
    ]);
    const created = await json(
      await post(`${demoServer.url}/admin/marketplaces`, { name: 'Demo marketplace' }, admin(demoServer)),
    );
    demo = { marketplace: { id: created.id, public_key: created.public_key } };
    writeFileSync(
      path.join(dataDir, 'demo-credentials.json'),
      JSON.stringify({
        admin_token: 'x',
        marketplace: { ...demo.marketplace, name: 'Demo marketplace', mode: 'sandbox', secret_key: created.secret_key },
      }),
    );
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), demoServer?.stop(), productionServer?.stop()]);
  });

  it('serves /widget/marketplace.js bundled and small, loadable from any origin, cached by ETag', async () => {
    const response = await fetch(`${server.url}/widget/marketplace.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/javascript');
    expect(response.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    const code = await response.text();
    expect(code).toContain('SvcWidget');
    expect(code).toContain('aris-deal-widget');
    expect(code.length).toBeLessThan(30_000);
    expect(code).not.toMatch(/^\s*import /m); // one classic script, no modules left
    // node:http, as fetch adds Cache-Control: no-cache to conditional requests
    const status = await new Promise((resolve, reject) =>
      http
        .get(
          `${server.url}/widget/marketplace.js`,
          { headers: { 'If-None-Match': response.headers.get('etag')! } },
          (again) => {
            again.resume();
            resolve(again.statusCode);
          },
        )
        .on('error', reject),
    );
    expect(status).toBe(304);
  });

  it('type-checks the browser script against the DOM', async () => {
    const tsc = path.resolve('node_modules/typescript/bin/tsc');
    await expect(
      promisify(execFile)(process.execPath, [tsc, '-p', 'src/widget/client/tsconfig.json']),
    ).resolves.toBeDefined();
  }, 60_000);

  it('serves the demo storefront in development only, with the demo public key', async () => {
    const page = await fetch(`${demoServer.url}/widget/demo?mode=compact&theme=dark&locale=en`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain(`data-public-key="${demo.marketplace.public_key}"`);
    expect(text).toContain('data-mode="compact"');
    expect(text).toContain('<script src="/widget/marketplace.js"></script>');
    expect((await fetch(`${productionServer.url}/widget/demo`)).status).toBe(404);
    expect((await fetch(`${server.url}/widget/demo`)).status).toBe(404); // no demo credentials in its DATA_DIR
  });
});
