// The data server: the read-only data API under /v1 and its MCP twin at /mcp/. Its OpenAPI document is /v1/openapi.json.
import type Koa from 'koa';
import { Api } from './http/api.ts';
import { createApp } from './http/app.ts';
import { healthChecks, type Services } from './services.ts';
import { dataRoutes } from './data-api/routes.ts';
import { resourceMetadataRoutes } from './data-api/resource-metadata.ts';
import { mcpEndpoint } from './data-api/mcp-http.ts';

export function createDataApp(services: Services): Koa {
  const api = new Api({
    title: 'svc data API',
    version: '1.0.0',
    description:
      'Read-only tenders (Russia and worldwide), supervisory court practice and knowledge corpora. ' +
      'Every request counts against the monthly quota of the key’s account (RateLimit-Policy and RateLimit headers), ' +
      'except one refused by validation (400 validation_failed) or failing on our side (5xx); the same key serves the ' +
      'MCP endpoint /mcp/, where only tools/call the protocol layer accepts counts.',
    securitySchemes: { dataKey: { type: 'http', scheme: 'bearer', description: 'A svc_mcp_ key' } },
  });
  dataRoutes(api, services);
  resourceMetadataRoutes(api, services);
  const app = createApp({
    name: 'data',
    baseUrl: services.config.MCP_URL,
    logger: services.logger,
    api,
    openapiPath: '/v1/openapi.json',
    health: healthChecks(services),
    proxyHops: services.config.TRUST_PROXY,
  });
  // After the routers: /mcp matches no route, so the routers pass it on.
  app.use(mcpEndpoint(services));
  return app;
}
