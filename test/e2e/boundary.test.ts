// The boundary's one rule for text, unknown fields and methods, on both servers: bad input is a 400 problem that names
// the field, never a 500 and never a change.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, uniqueId, type TestServer } from '../helpers.ts';

let main: TestServer;
let data: TestServer;
let marketplaceKey: string;

beforeAll(async () => {
  [main, data] = await Promise.all([startTestServer(), startTestServer({ kind: 'data' })]);
  const created = await post(`${main.url}/admin/marketplaces`, { name: 'Boundary shop', mode: 'sandbox' }, admin());
  marketplaceKey = (await json(created)).secret_key;
});
afterAll(async () => {
  await Promise.all([main?.stop(), data?.stop()]);
});

const admin = () => ({ Authorization: `Bearer ${main.adminToken}` });
const shop = () => ({ 'X-Svc-Key': marketplaceKey });

async function expectNamed(response: Response, path: string, message: RegExp = /control characters|lone surrogate/) {
  const body = await json(response);
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.code).toBe('validation_failed');
  expect(body.errors).toContainEqual({ path, message: expect.stringMatching(message) });
}

/** A raw request, for methods fetch refuses to send (TRACE, CONNECT) or bytes it would clean up. */
function raw(url: string, method: string, path: string): Promise<{ status: number; allow?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request({ host: target.hostname, port: target.port, method, path }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, allow: res.headers.allow, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('text that enters', () => {
  it('refuses NUL, other C0 controls and lone surrogates in a JSON body, naming the field', async () => {
    await expectNamed(
      await post(`${main.url}/admin/marketplaces`, { name: 'a\u0000b', mode: 'sandbox' }, admin()),
      'name',
    );
    await expectNamed(
      await post(`${main.url}/admin/marketplaces`, { name: 'a\u001bb', mode: 'sandbox' }, admin()),
      'name',
    );
    await expectNamed(
      await post(`${main.url}/admin/marketplaces`, '{"name":"a\\ud800b","mode":"sandbox"}', admin()),
      'name',
    );
    await expectNamed(
      await post(
        `${main.url}/admin/marketplaces`,
        { name: 'ok', mode: 'sandbox', allowed_origins: ['https://a.example', 'https://b\u0000.example'] },
        admin(),
      ),
      'allowed_origins.1',
    );
    await expectNamed(
      await post(`${main.url}/admin/marketplaces`, { name: 'ok', mode: 'sandbox', 'x\u0000': 1 }, admin()),
      '"x\\u0000"',
      /field name/,
    );
  });

  it('lets tab, line feed, carriage return and paired surrogates through', async () => {
    const response = await post(
      `${main.url}/admin/marketplaces`,
      { name: 'Shop\twith\r\nlines 🛒', mode: 'sandbox' },
      admin(),
    );
    expect(response.status).toBe(201);
    expect((await json(response)).name).toBe('Shop\twith\r\nlines 🛒');
  });

  it('refuses them in the query and the path', async () => {
    await expectNamed(await fetch(`${main.url}/api/mkt/deals?external_id=a%00b`, { headers: shop() }), 'external_id');
    await expectNamed(await fetch(`${main.url}/api/mkt/deals/a%00b`, { headers: shop() }), 'path');
    await expectNamed(await fetch(`${main.url}/no/such%01path`), 'path');
    await expectNamed(await fetch(`${data.url}/v1/tenders?q=a%00b`), 'q');
  });

  it('refuses them in forms, before the form is acted on', async () => {
    const response = await fetch(`${main.url}/cabinet/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'email=a%00b%40example.com&password=x',
      redirect: 'manual',
    });
    expect(response.status).toBe(400);
  });

  it('never answers them with a 500, with or without credentials', async () => {
    const paths = [
      ['GET', `${main.url}/sso/authorize?client_id=a%00&redirect_uri=x&state=s`],
      ['POST', `${main.url}/sso/token`],
      ['POST', `${main.url}/api/escrow/yookassa/notifications`],
      ['POST', `${main.url}/api/mkt/widget/deals`],
    ] as const;
    for (const [method, url] of paths) {
      const response = await fetch(url, {
        method,
        headers: method === 'POST' ? { 'Content-Type': 'application/json' } : {},
        body:
          method === 'POST'
            ? JSON.stringify({
                query: 'a\u0000b',
                client_id: 'a\u0000',
                code: 'x\u0000',
                public_key: 'pk_\u0000',
                object: { id: '\u0000' },
              })
            : undefined,
      });
      expect(response.status, url).toBe(400);
      expect((await json(response)).code, url).toBe('validation_failed');
    }
  });
});

describe('unknown fields', () => {
  it('refuses an unknown body field, naming it, and changes nothing', async () => {
    const name = uniqueId('colour-shop');
    const response = await post(`${main.url}/admin/marketplaces`, { name, mode: 'sandbox', colour: 'red' }, admin());
    await expectNamed(response, 'colour', /not a field/);
    const { rows } = await main.services.db.query('SELECT 1 FROM marketplaces WHERE name = $1', [name]);
    expect(rows).toHaveLength(0);
  });

  it('refuses an unknown query parameter, naming it', async () => {
    await expectNamed(await fetch(`${main.url}/api/mkt/ping?verbose=1`, { headers: shop() }), 'verbose', /not a field/);
    await expectNamed(
      await fetch(`${main.url}/api/mkt/deals?external_id=x&extrnal=y`, { headers: shop() }),
      'extrnal',
      /not a field/,
    );
  });

  it('says so in the OpenAPI document', async () => {
    const document = await json(await fetch(`${main.url}/api/openapi.json`));
    const schema = document.paths['/admin/marketplaces'].post.requestBody.content['application/json'].schema;
    expect(schema.additionalProperties).toBe(false);
  });
});

describe.each([
  ['main', () => main],
  ['data', () => data],
])('methods on the %s server', (_name, server) => {
  it.each(['TRACE', 'QUERY', 'PUT', 'PROPFIND'])(
    'answers %s on a path that exists with 405 and Allow',
    async (method) => {
      const answer = await raw(server().url, method, '/healthz');
      expect(answer.status).toBe(405);
      expect(answer.allow).toContain('GET');
      expect(JSON.parse(answer.body).code).toBe('method_not_allowed');
    },
  );
});
