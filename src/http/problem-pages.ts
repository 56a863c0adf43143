// GET /problems/{code}: the page each problem's `type` URI points at. HTML for people (no script, so the app's CSP
// holds), the same entry as JSON for `Accept: application/json`; an unknown code is a 404 problem.
import type Router from '@koa/router';
import { createRouter } from './api.ts';
import { STATUS_CODES } from 'node:http';
import { problem } from './problem.ts';
import { problemType, type ProblemType } from './problem-catalog.ts';
import { escapeHtml } from './html.ts';

export function problemPagesRouter(baseUrl: string): Router {
  const router = createRouter();
  router.get('/problems/:code', (ctx) => {
    const code = ctx.params.code;
    const entry = problemType(code);
    if (!entry) throw problem('not_found', `There is no problem type ${JSON.stringify(code)}.`);
    ctx.vary('Accept');
    ctx.set('Cache-Control', 'public, max-age=3600');
    if (ctx.accepts('html', 'json') === 'json') {
      ctx.body = { type: `${baseUrl}/problems/${code}`, code, ...entry };
    } else {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = problemPage(code, entry);
    }
  });
  return router;
}

function problemPage(code: string, entry: ProblemType): string {
  const statuses = entry.statuses.map((status) => `${status} ${STATUS_CODES[status] ?? ''}`.trim()).join(', ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(entry.title)} (${escapeHtml(code)})</title>
<style>
body{font:1rem/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
dt{font-weight:600;margin-top:1rem}dd{margin:0}code{font-size:.95em;background:#f1f1f1;padding:0 .2em}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(entry.title)}</h1>
<p>Problem type <code>${escapeHtml(code)}</code>: an error answered as RFC 9457 <code>application/problem+json</code>
whose <code>code</code> member is <code>${escapeHtml(code)}</code>; its <code>detail</code> says what happened to that request.</p>
<dl>
<dt>HTTP status</dt>
<dd>${escapeHtml(statuses)}</dd>
<dt>What it means</dt>
<dd>${prose(entry.meaning)}</dd>
<dt>What to do next</dt>
<dd>${prose(entry.action)}</dd>
</dl>
</main>
</body>
</html>
`;
}

/** Escaped text whose `backticked` words become <code>. */
function prose(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}
