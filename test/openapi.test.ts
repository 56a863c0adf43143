// The OpenAPI documents come from the same zod schemas that validate requests, and /docs renders them locally.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from './helpers.ts';

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
    expect(document.components.securitySchemes.marketplaceKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Svc-Key' });
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
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
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
    expect(Number(bundle.headers.get('content-length') ?? (await bundle.arrayBuffer()).byteLength)).toBeGreaterThan(100_000);
  });

  it('answers unknown docs assets with 404', async () => {
    expect((await fetch(`${main.url}/docs/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${main.url}/docs/index.html`)).status).toBe(404);
  });
});
