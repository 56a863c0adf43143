// Every problem code the code base emits has a /problems/{code} page, and the pages answer on both servers.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemCodes, problemType } from '../../src/http/problem-catalog.ts';
import { json, startTestServer, type TestServer } from '../helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where problems are raised: the servers, and the workflows and activities whose failures the API answers with. */
const SCANNED = ['src', 'workflows', 'activities'];

/**
 * Places where a problem's code is a variable, and how the scan still sees every code: a helper whose call sites pass
 * the code as a literal, or a table read separately.
 */
const FORWARDING: Record<string, { helper?: string }> = {
  'src/http/problem.ts: code': {}, // problem() itself
  'src/sso/codes.ts: problemCode': { helper: 'grantProblem' },
  'src/sso/oauth-problem.ts: problem.code': {}, // asOAuthProblem keeps the code of a problem made elsewhere
  'src/sso/registration.ts: error.code': {}, // asRegistrationProblem too
  'src/deals/commands.ts: type': {}, // failure types of the workflow and its activities, each raised with refuse()
  'workflows/deals/deal-entity.ts: refused.code': {}, // the deal rules' refusals, read from REFUSALS
};
/** The deal rules' refusals ({ code: '…', message }), which the workflow raises and the pages explain. */
const REFUSALS = 'src/deals/rules.ts';
/** Subclasses of Problem: their constructors take the code first, so `new` of them is scanned like problem(). */
const PROBLEM_CLASSES = ['OAuthProblem'];

interface Emission {
  code: string;
  /** The status the call site picks (`{ status }`), when it picks one. */
  status?: number;
  where: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Comment lines are blanked (a comment naming problem(code, …) raises nothing); the rest keeps its place. */
const uncommented = (text: string) => text.replace(/^\s*(?:\/\/|\/\*\*?|\*).*$/gm, '');
const sources = SCANNED.flatMap((dir) => sourceFiles(path.join(ROOT, dir))).map((file) => ({
  file: path.relative(ROOT, file).split(path.sep).join('/'),
  text: uncommented(readFileSync(file, 'utf8')),
}));
const helpers = Object.values(FORWARDING).flatMap((site) => (site.helper ? [site.helper] : []));
/**
 * What makes a problem in a file: problem(), `new …Problem(`, the helpers, and refuse() where the file imports it from
 * src/temporal/refusal.ts (the SSO authorize step has a refuse() of its own, for OAuth error redirects).
 */
function makers(text: string, { withHelpers }: { withHelpers: boolean }): string {
  const refuse = /import \{[^}]*\brefuse\b[^}]*\} from '[./]*(?:src\/)?temporal\/refusal\.ts'/.test(text)
    ? ['\\brefuse']
    : [];
  return [
    '\\bproblem',
    'new\\s+\\w*Problem',
    ...refuse,
    ...(withHelpers ? helpers.map((helper) => `\\b${helper}`) : []),
  ].join('|');
}

/** The text of a call's arguments, from just after its `(` to its `)`; quotes and template text are skipped whole. */
function argumentsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (char === "'" || char === '"' || char === '`') {
      for (i++; i < text.length && text[i] !== char; i++) if (text[i] === '\\') i++;
    } else if (char === '(') depth++;
    else if (char === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** Codes as the code emits them: literals given to problem(), refuse(), `new …Problem(` or a forwarding helper, and REFUSALS. */
function emittedCodes(): Emission[] {
  const emissions: Emission[] = [];
  for (const { file, text } of sources) {
    const literalCall = new RegExp(`(?:${makers(text, { withHelpers: true })})\\(\\s*'([a-z][a-z0-9_]*)'`, 'g');
    for (const match of text.matchAll(literalCall)) {
      const args = argumentsAt(text, match.index + match[0].indexOf('('));
      const status = /\bstatus:\s*(\d{3})\b/.exec(args)?.[1];
      emissions.push({ code: match[1], ...(status ? { status: Number(status) } : {}), where: file });
    }
    if (file === REFUSALS)
      for (const [, code] of text.matchAll(/\bcode: '([a-z][a-z0-9_]*)'/g)) emissions.push({ code: code, where: file });
  }
  return emissions;
}

describe('the problem catalog', () => {
  const emissions = emittedCodes();

  it('finds the codes the contract requires, so the scan itself works', () => {
    const codes = emissions.map((e) => e.code);
    for (const code of [
      'code_already_used',
      'code_expired',
      'redirect_uri_mismatch',
      'invalid_code',
      'invalid_client',
      'deal_not_approved',
      'quota_exceeded',
      'validation_failed',
      'unauthorized',
      'not_found',
    ]) {
      expect(codes, code).toContain(code);
    }
  });

  it('has an entry for every code the source emits, listing any status a call site picks', () => {
    const undocumented = emissions.filter((e) => !problemType(e.code)).map((e) => `${e.code} (${e.where})`);
    expect(undocumented, 'add these codes to src/http/problem-catalog.ts').toEqual([]);
    const wrongStatus = emissions
      .filter((e) => e.status !== undefined && !problemType(e.code)!.statuses.includes(e.status))
      .map((e) => `${e.code} ${e.status} (${e.where})`);
    expect(wrongStatus, 'add the status to the entry').toEqual([]);
  });

  it('lists for each code the statuses it is raised with: the first by default, each other one picked somewhere', () => {
    const restated = emissions.filter((e) => e.status !== undefined && e.status === problemType(e.code)?.statuses[0]);
    expect(
      restated.map((e) => `${e.code} ${e.status} (${e.where})`),
      'the first status is the default: leave `status` out',
    ).toEqual([]);
    const picked = new Set(emissions.map((e) => `${e.code} ${e.status}`));
    const unraised = problemCodes().flatMap((code) =>
      problemType(code)!
        .statuses.slice(1)
        .filter((status) => !picked.has(`${code} ${status}`))
        .map((status) => `${code} ${status}`),
    );
    expect(unraised, 'no call site picks these statuses: remove them from the entry').toEqual([]);
  });

  it('documents no code that nothing emits any more', () => {
    const emitted = new Set(emissions.map((e) => e.code));
    expect(problemCodes().filter((code) => !emitted.has(code))).toEqual([]);
  });

  it('knows every place a code is a variable, so no code escapes the scan', () => {
    const variableCode = (text: string) =>
      new RegExp(`(?:${makers(text, { withHelpers: false })})\\(\\s*([A-Za-z_$][\\w$.]*)`, 'g');
    const variableCodes = new Set(
      sources.flatMap(({ file, text }) => [...text.matchAll(variableCode(text))].map((m) => `${file}: ${m[1]}`)),
    );
    expect([...variableCodes].sort()).toEqual(Object.keys(FORWARDING).sort());
    for (const helper of helpers) {
      const calls = sources.flatMap(({ file, text }) =>
        [...text.matchAll(new RegExp(`\\b${helper}\\(([\\s\\S]{0,80})`, 'g'))].map((m) => `${file}: ${helper}(${m[1]}`),
      );
      const withLiteral = calls.filter((call) => /\(\s*'[a-z][a-z0-9_]*'/.test(call));
      expect(withLiteral, `${helper} must be called with a literal code`).toEqual(calls);
    }
    const subclasses = sources.flatMap(({ text }) =>
      [...text.matchAll(/class\s+(\w+)(?:<[^>]*>)?\s+extends\s+Problem\b/g)].map((m) => m[1]),
    );
    expect(subclasses).toEqual(PROBLEM_CLASSES);
  });
});

describe('GET /problems/{code}', () => {
  let main: TestServer;
  let data: TestServer;
  beforeAll(async () => {
    [main, data] = await Promise.all([startTestServer(), startTestServer({ kind: 'data' })]);
  });
  afterAll(() => Promise.all([main?.stop(), data?.stop()]));

  it('serves an accessible HTML page without scripts', async () => {
    const response = await fetch(`${main.url}/problems/quota_exceeded`, { headers: { Accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<title>The monthly quota is used up (quota_exceeded)</title>');
    expect(html).toContain('<h1>The monthly quota is used up</h1>');
    expect(html).toContain('429 Too Many Requests');
    expect(html).toContain('What to do next');
    expect(html).not.toMatch(/<script|\son\w+=/i);
  });

  it.each([
    ['Accept-Language', { 'Accept-Language': 'ru-RU,ru;q=0.9,en;q=0.5' }, ''],
    ['the language cookie', { 'Accept-Language': 'en', Cookie: 'svc_lang=ru' }, ''],
    ['?lang=ru', { 'Accept-Language': 'en' }, '?lang=ru'],
  ])('answers a Russian reader (%s) in Russian, a problem people meet wholly so', async (_how, headers, query) => {
    const response = await fetch(`${main.url}/problems/deal_closed${query}`, {
      headers: { Accept: 'text/html', ...headers },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-language')).toBe('ru');
    expect(response.headers.get('vary')).toMatch(/Accept-Language/);
    const html = await response.text();
    expect(html).toContain('<html lang="ru">');
    expect(html).toContain('<h1>Сделка закрыта</h1>');
    expect(html).toContain('<dt>Что делать дальше</dt>');
    expect(html).toContain('<dd>Сделка оплачена, деньги возвращены или она отменена: больше она не меняется.</dd>');
    expect(html).not.toMatch(/<dd lang="en">/);
    expect(html).not.toContain('What to do next');
  });

  it("keeps an integrator's details in English on a Russian page, marked as English", async () => {
    const response = await fetch(`${main.url}/problems/validation_failed`, {
      headers: { Accept: 'text/html', 'Accept-Language': 'ru' },
    });
    const html = await response.text();
    expect(html).toContain('<h1>Запрос не прошёл проверку</h1>');
    expect(html).toContain('Подробности ниже написаны для разработчиков и даны по-английски.');
    expect(html).toMatch(/<dd lang="en">A field of the body/);
  });

  it('keeps English for an English reader whatever the page was before', async () => {
    const response = await fetch(`${main.url}/problems/deal_closed`, {
      headers: { Accept: 'text/html', 'Accept-Language': 'en-GB,en;q=0.9,ru;q=0.3' },
    });
    const html = await response.text();
    expect(html).toContain('<h1>The deal is closed</h1>');
    expect(html).not.toMatch(/[а-яё]/i);
  });

  it.each([
    ['main', () => main],
    ['data', () => data],
  ])('answers JSON on the %s server, with the type URI errors carry', async (_name, server) => {
    const response = await fetch(`${server().url}/problems/validation_failed`, {
      headers: { Accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(response.headers.get('vary')).toContain('Accept');
    const body = await json(response);
    expect(body).toMatchObject({
      code: 'validation_failed',
      statuses: [400],
      title: expect.any(String),
      meaning: expect.any(String),
      action: expect.any(String),
    });

    // The `type` of a real error is this very page.
    const error = await fetch(`${server().url}/no/such/path`);
    const problem = await json(error);
    expect(body.type).toBe(problem.type.replace(/\/not_found$/, '/validation_failed'));
  });

  it.each(['no_such_code', 'constructor'])('answers an unknown code (%s) with a 404 problem', async (code) => {
    const response = await fetch(`${main.url}/problems/${code}`, { headers: { Accept: 'text/html' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await json(response)).toMatchObject({
      status: 404,
      code: 'not_found',
      detail: `There is no problem type "${code}".`,
    });
  });
});
