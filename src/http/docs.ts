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

/** Darker shades of Swagger UI's colours where its own fall short of WCAG AA contrast (4.5:1) against white. */
const OVERRIDES = `.swagger-ui .info .title small, .swagger-ui .info .title small.version-stamp { background-color: #4b5563; }
.swagger-ui .info a, .swagger-ui .info .url { color: #1d5fa8; }
.swagger-ui .btn.authorize { color: #166534; border-color: #166534; }
.swagger-ui .btn.authorize svg { fill: #166534; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #166534; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1d5fa8; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #9a4a00; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0f6b5a; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b42318; }
.swagger-ui .microlight span[style*="211, 99, 99"], .swagger-ui .highlight-code span[style*="211, 99, 99"] { color: #ff9e9e !important; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #4b5563; }
`;

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
<link rel="stylesheet" href="/docs/overrides.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>`;
  // Swagger UI's own markup fails WCAG in three ways, mended here: the servers' select has no name, each operation's
  // path is a link inside the button that opens it (a control nested in a control: the link only repeats the deep
  // link the button already sets), and some colours are too faint (overrides.css).
  const init = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(openapiPath)}, dom_id: '#swagger-ui', deepLinking: true });
new MutationObserver(() => {
  const servers = document.getElementById('servers');
  if (servers && !servers.hasAttribute('aria-label')) servers.setAttribute('aria-label', 'Server');
  for (const link of document.querySelectorAll('.opblock-summary-control a.nostyle')) link.replaceWith(...link.childNodes);
}).observe(document.getElementById('swagger-ui'), { childList: true, subtree: true });
`;

  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  router.get('/docs/overrides.css', (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = OVERRIDES;
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
