// What every route of both servers shares: problem details, limits, headers, health, metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/dev/ports.ts';
import { json, post, startTestServer, type TestServer, UUID_PATTERN } from '../helpers.ts';

let main: TestServer;
let data: TestServer;

beforeAll(async () => {
  [main, data] = await Promise.all([startTestServer(), startTestServer({ kind: 'data' })]);
});
afterAll(async () => {
  await Promise.all([main?.stop(), data?.stop()]);
});

function expectProblem(response: Response, body: any, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(body).toMatchObject({ status, code, title: expect.any(String), detail: expect.any(String) });
  expect(body.type).toMatch(new RegExp(`/problems/${code}$`));
}

describe.each([
  ['main', () => main],
  ['data', () => data],
])('the %s server', (_name, server) => {
  it('answers /healthz with 200 once PostgreSQL and Temporal answer', async () => {
    const response = await fetch(`${server().url}/healthz`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ ok: true });
  });

  it('answers an unknown path with a 404 problem', async () => {
    const response = await fetch(`${server().url}/no/such/path`);
    expectProblem(response, await json(response), 404, 'not_found');
  });

  it('answers a wrong method with a 405 problem and an Allow header', async () => {
    const response = await fetch(`${server().url}/healthz`, { method: 'DELETE' });
    expectProblem(response, await json(response), 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toContain('GET');
  });

  it('sends security headers and a request id, echoing a sane incoming one', async () => {
    const generated = await fetch(`${server().url}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(UUID_PATTERN);
    expect(generated.headers.get('x-content-type-options')).toBe('nosniff');
    expect(generated.headers.get('x-frame-options')).toBe('DENY');
    expect(generated.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(generated.headers.get('strict-transport-security')).toBeNull(); // plain http in tests
    const echoed = await fetch(`${server().url}/healthz`, { headers: { 'X-Request-Id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await fetch(`${server().url}/healthz`, { headers: { 'X-Request-Id': '<script>' } });
    expect(replaced.headers.get('x-request-id')).not.toBe('<script>');
  });

  it('exposes Prometheus metrics with request counts by route template', async () => {
    await fetch(`${server().url}/healthz`);
    const response = await fetch(`${server().url}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/healthz",status="200",server="(main|data)"\} \d+/);
    expect(text).toContain('process_cpu_seconds_total');
  });
});

describe('request bodies', () => {
  const endpoint = () => `${main.url}/admin/marketplaces`;
  const admin = () => ({ Authorization: `Bearer ${main.adminToken}` });

  it('answers malformed JSON with a 400 problem', async () => {
    const response = await post(endpoint(), '{"name": ', admin());
    expectProblem(response, await json(response), 400, 'invalid_json');
  });

  it('answers a non-JSON body with 415', async () => {
    const response = await fetch(endpoint(), {
      method: 'POST',
      headers: { ...admin(), 'Content-Type': 'text/plain' },
      body: 'name=x',
    });
    expectProblem(response, await json(response), 415, 'unsupported_media_type');
  });

  it('answers a body over the 1 MiB JSON limit with 413', async () => {
    const response = await post(endpoint(), JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }), admin());
    expectProblem(response, await json(response), 413, 'payload_too_large');
  });

  it('lists every invalid field on validation_failed', async () => {
    const response = await post(
      endpoint(),
      { name: '', mode: 'production', allowed_origins: ['https://a.example/path'] },
      admin(),
    );
    const body = await json(response);
    expectProblem(response, body, 400, 'validation_failed');
    expect(body.errors.map((error: { path: string }) => error.path).sort()).toEqual([
      'allowed_origins.0',
      'mode',
      'name',
    ]);
  });

  it('never answers with internals', async () => {
    const response = await post(endpoint(), { name: 'x'.repeat(5000) }, admin());
    const text = await response.text();
    expect(text).not.toMatch(/at .*\.ts:\d+|SELECT|INSERT|stack/i);
  });
});

describe('/healthz before the dependencies answer', () => {
  it('is 503 naming Temporal while Temporal does not answer', async () => {
    const server = await startTestServer({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` } });
    try {
      const response = await fetch(`${server.url}/healthz`);
      const body = await json(response);
      expectProblem(response, body, 503, 'not_ready');
      expect(body.detail).toContain('Temporal');
      expect(body.detail).not.toContain('PostgreSQL');
      expect(response.headers.get('retry-after')).toBe('1');
    } finally {
      await server.stop();
    }
  });

  it('is 503 naming PostgreSQL while PostgreSQL does not answer', async () => {
    const port = await freePort();
    const config = (await import('../helpers.ts')).testConfig();
    const { createServices } = await import('../../src/services.ts');
    const { createLogger } = await import('../../src/log.ts');
    const { createMainApp } = await import('../../src/main-app.ts');
    const { listen } = await import('../../src/http/server.ts');
    const services = createServices(
      { ...config, DATABASE_URL: `postgres://x:y@127.0.0.1:${port}/svc` },
      createLogger('silent'),
    );
    const server = await listen(createMainApp(services), '127.0.0.1', 0);
    try {
      const response = await fetch(`${server.url}/healthz`);
      const body = await json(response);
      expectProblem(response, body, 503, 'not_ready');
      expect(body.detail).toContain('PostgreSQL');
    } finally {
      await server.stop();
      await services.close();
    }
  });
});
