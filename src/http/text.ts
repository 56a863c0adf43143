// The one rule for text that enters the service: no NUL, no other C0 control except tab, line feed and carriage
// return, no lone UTF-16 surrogate. PostgreSQL refuses NUL in text, and controls and broken surrogates only ever come
// from bugs or attacks; refusing them at the door means nothing behind it (a workflow, a log line, a page) meets them.
// The HTTP layer applies it to the path, the query, the headers, every JSON body and every form (app.ts, body.ts,
// readForm); the MCP endpoint applies it to the JSON-RPC messages it reads itself (data-api/mcp-http.ts).
import type { Middleware } from 'koa';
import { z } from 'zod';
import { Problem, type FieldError } from './problem.ts';

const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why the string may not enter, or undefined when it may. */
export function badTextReason(value: string): string | undefined {
  const match = FORBIDDEN.exec(value);
  if (!match) return undefined;
  const code = match[0].charCodeAt(0);
  const name = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return code >= 0xd800
    ? `must be valid Unicode text; it holds a lone surrogate (${name}) at position ${match.index}`
    : `must not contain control characters; it holds ${name} at position ${match.index} (only tab, line feed and carriage return are allowed)`;
}

/** Every string in a parsed JSON value or form, keys included, that breaks the rule; paths as zod writes them (a.0.b). */
export function badTextFields(value: unknown, path: string[] = []): FieldError[] {
  if (typeof value === 'string') {
    const reason = badTextReason(value);
    return reason ? [{ path: path.join('.'), message: reason }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => badTextFields(item, [...path, String(index)]));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const keyReason = badTextReason(key);
    const named = [...path, keyReason ? JSON.stringify(key) : key];
    return keyReason ? [{ path: named.join('.'), message: `has a field name that ${keyReason}` }] : badTextFields(item, named);
  });
}

/** Throws 400 validation_failed naming each field whose text breaks the rule. */
export function assertText(value: unknown, where: 'body' | 'query' | 'path' | 'header' | 'form' | 'arguments'): void {
  const errors = badTextFields(value).map((error) => ({ ...error, path: error.path || where }));
  if (errors.length === 0) return;
  const summary = errors.map((error) => `${error.path} ${error.message}`).join('; ');
  throw new Problem(400, 'validation_failed', `The request ${where} is invalid: ${summary}.`, { errors });
}

/** The path, the query and the headers of every request, before any route sees them. */
export function requestText(): Middleware {
  return async (ctx, next) => {
    const segments = ctx.path.split('/').map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment; // not percent-encoding at all: the router treats it as literal text too
      }
    });
    const pathErrors = badTextFields(segments).map(({ message }) => ({ path: 'path', message }));
    if (pathErrors.length > 0) {
      throw new Problem(400, 'validation_failed', `The request path is invalid: it ${pathErrors[0]!.message}.`, { errors: pathErrors });
    }
    assertText(ctx.query, 'query');
    // Node's parser refuses NUL, CR and LF in headers already; the other controls it lets through.
    const headerErrors = Object.entries(ctx.headers).flatMap(([name, value]) =>
      badTextFields(value).map(({ message }) => ({ path: `header.${name}`, message })),
    );
    if (headerErrors.length > 0) {
      const summary = headerErrors.map((error) => `${error.path} ${error.message}`).join('; ');
      throw new Problem(400, 'validation_failed', `The request headers are invalid: ${summary}.`, { errors: headerErrors });
    }
    await next();
  };
}

/**
 * Free text that must say something: at most `max` characters, trimmed, then not empty. The `\S` pattern is what the OpenAPI
 * document shows (api.ts), so a blank value is refused by the schema as it is by the server.
 */
export function nonBlank(max: number) {
  // The length is checked before trimming, as JSON Schema's maxLength counts: padded text too long is refused by both.
  return z.string().max(max, { abort: true }).trim().min(1, { message: 'must not be blank', abort: true }).regex(/\S/, 'must not be blank');
}
