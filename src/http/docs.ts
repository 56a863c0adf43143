// /docs: the OpenAPI document rendered by Swagger UI, served from our own origin (no CDN), with no inline script.
import type Router from '@koa/router';
import { createRouter } from './api.ts';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { escapeHtml } from './html.ts';

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

export function docsRouter(openapiPath: string, title: string): Router {
  const router = createRouter();
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>`;
  const init = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(openapiPath)}, dom_id: '#swagger-ui', deepLinking: true });\n`;

  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = init;
  });
  router.get('/docs/:asset', (ctx, next) => {
    const type = ASSETS[ctx.params.asset];
    if (!type) return next();
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(path.join(swaggerDir, ctx.params.asset));
  });
  return router;
}
