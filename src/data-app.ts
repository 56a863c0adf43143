// The data server: the read-only data API under /v1 and its MCP twin. Its OpenAPI document is /v1/openapi.json.
import type Koa from 'koa';
import { Api } from './http/api.ts';
import { createApp } from './http/app.ts';
import { healthChecks, type Services } from './services.ts';

export function createDataApp(services: Services): Koa {
  const api = new Api({
    title: 'svc data API',
    version: '1.0.0',
    description:
      'Read-only tenders (Russia and worldwide), supervisory court practice and knowledge corpora. ' +
      'Every request counts against the monthly quota of the key’s account.',
    securitySchemes: { dataKey: { type: 'http', scheme: 'bearer', description: 'A svc_mcp_ key' } },
  });
  return createApp({
    name: 'data',
    baseUrl: services.config.MCP_URL,
    logger: services.logger,
    api,
    openapiPath: '/v1/openapi.json',
    health: healthChecks(services),
  });
}
