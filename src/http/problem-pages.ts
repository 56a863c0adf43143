// GET /problems/{code}: the page each problem's `type` URI points at. HTML for people (no script, so the app's CSP
// holds), in the reader's language (`?lang=`, the pages' language cookie, then Accept-Language: a Russian reader gets
// the page's words and the title in Russian, the integrator's details in English, marked so); the same entry as JSON
// for `Accept: application/json`; an unknown code is a 404 problem.
import type Router from '@koa/router';
import { createRouter } from './api.ts';
import { STATUS_CODES } from 'node:http';
import { problem } from './problem.ts';
import { problemType, type ProblemType } from './problem-catalog.ts';
import { escapeHtml } from './html.ts';
import { PROBLEM_DETAILS_RU, PROBLEM_TITLES_RU } from './problem-titles.ts';
import { isLang, preferredLang, type Lang } from '../web/i18n.ts';
import { LANG_COOKIE, readCookie } from '../web/session.ts';
import type { Context } from 'koa';

export function problemPagesRouter(baseUrl: string): Router {
  const router = createRouter();
  router.get('/problems/:code', (ctx) => {
    const code = ctx.params.code;
    const entry = problemType(code);
    if (!entry) throw problem('not_found', `There is no problem type ${JSON.stringify(code)}.`);
    ctx.vary('Accept');
    ctx.vary('Accept-Language');
    ctx.vary('Cookie');
    ctx.set('Cache-Control', 'public, max-age=3600');
    if (ctx.accepts('html', 'json') === 'json') {
      ctx.body = { type: `${baseUrl}/problems/${code}`, code, ...entry };
    } else {
      ctx.type = 'text/html; charset=utf-8';
      const lang = readerLang(ctx);
      ctx.set('Content-Language', lang);
      ctx.body = problemPage(code, entry, lang);
    }
  });
  return router;
}

/** `?lang=`, then the language the reader chose on our pages (its cookie), then Accept-Language. */
function readerLang(ctx: Context): Lang {
  const asked = ctx.query.lang;
  if (isLang(asked)) return asked;
  const remembered = readCookie(ctx, LANG_COOKIE);
  return isLang(remembered) ? remembered : preferredLang(ctx.get('Accept-Language'));
}

const WORDS = {
  en: {
    intro: (code: string) =>
      `Problem type <code>${code}</code>: an error answered as RFC 9457 <code>application/problem+json</code>
whose <code>code</code> member is <code>${code}</code>; its <code>detail</code> says what happened to that request.`,
    english: '',
    status: 'HTTP status',
    meaning: 'What it means',
    action: 'What to do next',
  },
  ru: {
    intro: (code: string) =>
      `Тип ошибки <code>${code}</code>: ответ в формате RFC 9457 <code>application/problem+json</code>
с полем <code>code</code>, равным <code>${code}</code>; поле <code>detail</code> объясняет, что случилось с этим запросом.`,
    english: 'Подробности ниже написаны для разработчиков и даны по-английски.',
    status: 'HTTP-статус',
    meaning: 'Что это значит',
    action: 'Что делать дальше',
  },
} as const;

function problemPage(code: string, entry: ProblemType, lang: Lang): string {
  const statuses = entry.statuses.map((status) => `${status} ${STATUS_CODES[status] ?? ''}`.trim()).join(', ');
  const words = WORDS[lang];
  const title = lang === 'ru' ? PROBLEM_TITLES_RU[code as keyof typeof PROBLEM_TITLES_RU] : entry.title;
  // Russian details for the problems people meet on pages; an integrator's stay English, marked so (lang="en" lets a
  // screen reader read them as English).
  const russian = lang === 'ru' ? PROBLEM_DETAILS_RU[code as keyof typeof PROBLEM_DETAILS_RU] : undefined;
  const details = russian ?? entry;
  const detailLang = lang === 'en' || russian ? '' : ' lang="en"';
  const note = lang === 'ru' && !russian ? ` ${words.english}` : '';
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} (${escapeHtml(code)})</title>
<style>
body{font:1rem/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
dt{font-weight:600;margin-top:1rem}dd{margin:0}code{font-size:.95em;background:#f1f1f1;padding:0 .2em}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p>${words.intro(escapeHtml(code))}${note}</p>
<dl>
<dt>${words.status}</dt>
<dd>${escapeHtml(statuses)}</dd>
<dt>${words.meaning}</dt>
<dd${detailLang}>${prose(details.meaning)}</dd>
<dt>${words.action}</dt>
<dd${detailLang}>${prose(details.action)}</dd>
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
