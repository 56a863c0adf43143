// The OpenAPI documents come from the same zod schemas that validate requests, and /docs renders them locally.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../helpers.ts';

let main: TestServer;
let data: TestServer;

beforeAll(async () => {
  [main, data] = await Promise.all([startTestServer(), startTestServer({ kind: 'data' })]);
});
afterAll(async () => {
  await Promise.all([main?.stop(), data?.stop()]);
});

describe('OpenAPI', () => {
  it('documents the main API as OpenAPI 3.1 from the request schemas', async () => {
    const response = await fetch(`${main.url}/api/openapi.json`);
    expect(response.status).toBe(200);
    const document = await json(response);
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.securitySchemes.marketplaceKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Svc-Key',
    });
    const create = document.paths['/admin/marketplaces'].post;
    const schema = create.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['name']);
    expect(schema.properties.mode).toMatchObject({ enum: ['sandbox', 'live'], default: 'sandbox' });
    expect(create.responses['201'].content['application/json'].schema.properties).toHaveProperty('secret_key');
    expect(create.responses.default).toEqual({ $ref: '#/components/responses/Problem' });
    expect(document.paths['/api/mkt/ping'].get.security).toEqual([{ marketplaceKey: [] }]);
    const mail = document.paths['/admin/mail'].get;
    expect(mail.parameters).toContainEqual(expect.objectContaining({ name: 'limit', in: 'query', required: false }));
    expect(document.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail', 'code']);
  });

  it('says what the server enforces: text patterns, formats, strict objects, the OAuth error shape', async () => {
    for (const server of [main, data]) {
      const document = await json(await fetch(`${server.url}${server === main ? '/api' : '/v1'}/openapi.json`));
      const loose: string[] = [];
      const unpatterned: string[] = [];
      const walk = (node: any, where: string) => {
        if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${where}/${index}`));
        if (!node || typeof node !== 'object') return;
        if (node.type === 'string' && !node.enum && node.const === undefined && !node.format && !node.pattern)
          unpatterned.push(where);
        if (node.type === 'object' && node.additionalProperties !== false && !node.propertyNames) loose.push(where);
        for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
      };
      for (const [path, operations] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          walk(operation.requestBody?.content?.['application/json']?.schema, `${method} ${path} body`);
          for (const parameter of operation.parameters ?? [])
            walk(parameter.schema, `${method} ${path} ${parameter.name}`);
        }
      }
      expect(unpatterned, 'request strings without a pattern, format or enum').toEqual([]);
      expect(loose, 'request objects that take unknown fields without saying which').toEqual([]);
    }
    const document = await json(await fetch(`${main.url}/api/openapi.json`));
    const deal = document.paths['/api/mkt/deals'].post.requestBody.content['application/json'].schema;
    expect(deal.properties.buyer_email).toMatchObject({ format: 'email', maxLength: 254 });
    expect(deal.properties.amount).toMatchObject({ multipleOf: 0.01, maximum: 1e13 });
    const webhook = document.paths['/api/mkt/webhook'].post.requestBody.content['application/json'].schema;
    expect(webhook.properties.url).toMatchObject({ format: 'uri', pattern: expect.stringContaining('https?') });
    for (const path of ['/sso/token', '/sso/oidc/token']) {
      for (const status of ['400', '401']) {
        const shape = document.paths[path].post.responses[status].content['application/problem+json'].schema;
        expect(shape.properties.error.enum, `${path} ${status}`).toContain('invalid_request');
        expect(shape.required, `${path} ${status}`).toEqual(
          expect.arrayContaining(['code', 'error', 'error_description']),
        );
      }
    }
    // A page's 400 can come from the boundary before the page: both types are documented.
    expect(Object.keys(document.paths['/sso/authorize'].get.responses['400'].content).sort()).toEqual([
      'application/problem+json',
      'text/html',
    ]);
    // Every field optional: the body may be left out, as the server allows.
    expect(document.paths['/api/mkt/deals/{deal_id}/escrow'].post.requestBody.required).toBe(false);
  });

  it('documents the data API at /v1/openapi.json on the data server', async () => {
    const document = await json(await fetch(`${data.url}/v1/openapi.json`));
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toBe('svc data API');
    expect(document.components.securitySchemes.dataKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it.each([
    ['main', () => main, '/api/openapi.json'],
    ['data', () => data, '/v1/openapi.json'],
  ])('renders the %s document at /docs from local assets only', async (_name, server, documentPath) => {
    const page = await fetch(`${server().url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source.startsWith('/docs/')).toBe(true);
      const asset = await fetch(`${server().url}${source}`);
      expect(asset.status, source).toBe(200);
    }
    expect(html).not.toMatch(/<script>[^<]/); // no inline script, so the CSP can forbid them
    const init = await (await fetch(`${server().url}/docs/init.js`)).text();
    expect(init).toContain(JSON.stringify(documentPath));
    const bundle = await fetch(`${server().url}/docs/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).toContain('javascript');
    expect(Number(bundle.headers.get('content-length') ?? (await bundle.arrayBuffer()).byteLength)).toBeGreaterThan(
      100_000,
    );
  });

  it('answers unknown docs assets with 404', async () => {
    expect((await fetch(`${main.url}/docs/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${main.url}/docs/index.html`)).status).toBe(404);
  });
});
