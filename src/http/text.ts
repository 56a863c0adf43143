// The one rule for text that enters the service: no NUL, no other C0 control except tab, line feed and carriage
// return, no lone UTF-16 surrogate. PostgreSQL refuses NUL in text, and controls and broken surrogates only ever come
// from bugs or attacks; refusing them at the door means nothing behind it (a workflow, a log line, a page) meets them.
// The HTTP layer applies it to the path, the query, the headers, every JSON body and every form (app.ts, body.ts,
// readForm); the MCP endpoint applies it to the JSON-RPC messages it reads itself (data-api/mcp-http.ts).
// Beside it, the depth rule: nothing that enters nests deeper than MAX_DEPTH, checked on the raw JSON text before it is
// parsed (jsonDepthError) and once more on the parsed value, in the text rule's own walk. Every walk here is a loop with
// a stack of its own, linear in the size of what it reads: no input can exhaust the call stack or cost the square of
// its size, and a refusal names at most MAX_TEXT_ERRORS strings.
import type { Middleware } from 'koa';
import { z } from 'zod';
import { Problem, problem, type FieldError } from './problem.ts';

const FORBIDDEN =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

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

/** How deep a JSON body, a form or an MCP message may nest (arrays and objects within each other); deeper is 400. */
export const MAX_DEPTH = 32;
/** The most refused strings one answer names: a body full of bad text costs no more to refuse than one with a few. */
export const MAX_TEXT_ERRORS = 20;
/** A field name in a reported path is cut to this many characters. */
const PATH_KEY_CHARS = 64;

/** A field name as a path names it: itself, or quoted when it breaks the text rule; cut when long. */
function pathKey(key: string): string {
  const named = badTextReason(key) ? JSON.stringify(key) : key;
  return named.length > PATH_KEY_CHARS ? `${named.slice(0, PATH_KEY_CHARS)}…` : named;
}

const tooDeepMessage = (max: number) =>
  `nests arrays and objects deeper than ${max} levels; at most ${max} are allowed`;

/** An open array or object of the walk: where it sits in its parent, and which of its items comes next. */
interface Frame {
  container: Record<string, unknown> | unknown[];
  /** An object's keys; undefined for an array. */
  keys: string[] | undefined;
  next: number;
  /** Its key in its parent, as a path names it. */
  named: string;
}

const frameOf = (container: object, named: string): Frame => ({
  container: container as Frame['container'],
  keys: Array.isArray(container) ? undefined : Object.keys(container),
  next: 0,
  named,
});

/** The path of an item: the open containers' names below the root, then the item's own. */
function pathAt(stack: Frame[], named: string): string {
  let path = '';
  for (let level = 1; level < stack.length; level++) path += `${stack[level].named}.`;
  return path + named;
}

/**
 * One depth-first walk of a parsed value without recursion: a stack of the open containers (one frame per array or
 * object, nothing per item), so it costs one visit per item and a path is spelt out only for what it reports. Stops
 * at the first container deeper than `maxDepth` (`deep`), or once `maxErrors` strings broke the text rule (`errors`,
 * in document order; none are looked for when `maxErrors` is 0).
 */
function walk(value: unknown, maxDepth: number, maxErrors: number): { deep?: FieldError; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (typeof value === 'string') {
    const reason = maxErrors > 0 ? badTextReason(value) : undefined;
    return { errors: reason ? [{ path: '', message: reason }] : [] };
  }
  if (value === null || typeof value !== 'object') return { errors };
  if (maxDepth < 1) return { deep: { path: '', message: tooDeepMessage(maxDepth) }, errors };
  const stack: Frame[] = [frameOf(value, '')];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const index = top.next++;
    let item: unknown;
    let named: string;
    if (top.keys) {
      if (index >= top.keys.length) {
        stack.pop();
        continue;
      }
      const key = top.keys[index];
      const keyReason = maxErrors > 0 ? badTextReason(key) : undefined;
      if (keyReason) {
        // A refused field name is reported in its place; what it holds is not walked into.
        errors.push({ path: pathAt(stack, pathKey(key)), message: `has a field name that ${keyReason}` });
        if (errors.length >= maxErrors) break;
        continue;
      }
      item = (top.container as Record<string, unknown>)[key];
      named = key.length > PATH_KEY_CHARS ? pathKey(key) : key;
    } else {
      if (index >= (top.container as unknown[]).length) {
        stack.pop();
        continue;
      }
      item = (top.container as unknown[])[index];
      named = String(index);
    }
    if (typeof item === 'string') {
      if (maxErrors === 0) continue;
      const reason = badTextReason(item);
      if (!reason) continue;
      errors.push({ path: pathAt(stack, named), message: reason });
      if (errors.length >= maxErrors) break;
    } else if (item !== null && typeof item === 'object') {
      if (stack.length >= maxDepth)
        return { deep: { path: pathAt(stack, named), message: tooDeepMessage(maxDepth) }, errors };
      stack.push(frameOf(item, named));
    }
  }
  return { errors };
}

/**
 * Every string in a parsed JSON value or form, keys included, that breaks the rule; paths as zod writes them (a.0.b),
 * in document order, at most `maxErrors` of them. Linear in the size of the value, at any depth (see walk).
 */
export function badTextFields(value: unknown, maxErrors = MAX_TEXT_ERRORS): FieldError[] {
  return walk(value, Infinity, maxErrors).errors;
}

/**
 * Where a parsed value first nests deeper than `max` levels (a container inside `max` others), or undefined. It never
 * goes below level `max + 1`: the guard for values that did not come through jsonDepthError.
 */
export function tooDeep(value: unknown, max = MAX_DEPTH): FieldError | undefined {
  return walk(value, max, 0).deep;
}

/** Both rules in one walk: the first container deeper than MAX_DEPTH, else the first MAX_TEXT_ERRORS refused strings. */
export function depthAndText(value: unknown): { deep?: FieldError; errors: FieldError[] } {
  return walk(value, MAX_DEPTH, MAX_TEXT_ERRORS);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Where JSON text first nests deeper than `max` levels, or undefined: read before JSON.parse, so neither the parser
 * nor any walk after it ever meets a deep value. One linear pass that counts brackets outside strings (it does not
 * check the rest of the grammar: JSON.parse does that next) and keeps, for the `max` open containers, only an array's
 * index or the bounds of an object's current field name, to say where.
 */
export function jsonDepthError(text: string, max = MAX_DEPTH): FieldError | undefined {
  // One entry per open container: an array's index, or an object's current key as [start, end) in the text.
  const kinds: boolean[] = []; // true: an object
  const indexes: number[] = [];
  const keyStarts: number[] = [];
  const keyEnds: number[] = [];
  const expectKey: boolean[] = [];
  let depth = 0;
  const length = text.length;
  for (let at = 0; at < length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const start = at + 1;
      for (at = start; at < length; at++) {
        const inner = text.charCodeAt(at);
        if (inner === BACKSLASH) at++;
        else if (inner === QUOTE) break;
      }
      if (depth > 0 && kinds[depth - 1] && expectKey[depth - 1]) {
        keyStarts[depth - 1] = start;
        keyEnds[depth - 1] = at;
        expectKey[depth - 1] = false;
      }
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (depth === max) {
        const keys: string[] = [];
        for (let level = 0; level < depth; level++) {
          keys.push(
            kinds[level] ? pathKey(jsonKey(text.slice(keyStarts[level], keyEnds[level]))) : String(indexes[level]),
          );
        }
        return { path: keys.join('.'), message: tooDeepMessage(max) };
      }
      kinds[depth] = code === OPEN_OBJECT;
      indexes[depth] = 0;
      keyStarts[depth] = 0;
      keyEnds[depth] = 0;
      expectKey[depth] = true;
      depth++;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      if (depth > 0) depth--; // unbalanced text is JSON.parse's to refuse
    } else if (code === COMMA && depth > 0) {
      indexes[depth - 1]++;
      expectKey[depth - 1] = true;
    }
  }
  return undefined;
}

/** A field name's text between its quotes, unescaped when it can be. */
function jsonKey(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** The 400 validation_failed for a value nested too deep. */
export function tooDeepProblem(error: FieldError, where: Where): Problem {
  const named = { ...error, path: error.path || where };
  return problem('validation_failed', `The request ${where} is invalid: ${named.path} ${named.message}.`, {
    errors: [named],
  });
}

/** Where a request's text came from, as a refusal names it. */
type Where = 'body' | 'query' | 'path' | 'header' | 'form' | 'arguments';

/**
 * Throws 400 validation_failed for a value nested deeper than MAX_DEPTH (before any schema walks it), or naming each
 * field whose text breaks the rule (the first MAX_TEXT_ERRORS).
 */
export function assertText(value: unknown, where: Where): void {
  // One walk for both rules: it stops at the first container too deep, which no JSON body reaches (jsonDepthError).
  const found = depthAndText(value);
  if (found.deep) throw tooDeepProblem(found.deep, where);
  const errors = found.errors.map((error) => ({ ...error, path: error.path || where }));
  if (errors.length === 0) return;
  const summary = errors.map((error) => `${error.path} ${error.message}`).join('; ');
  const more = errors.length === MAX_TEXT_ERRORS ? ` (the first ${MAX_TEXT_ERRORS} named)` : '';
  throw problem('validation_failed', `The request ${where} is invalid: ${summary}${more}.`, { errors });
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
      throw problem('validation_failed', `The request path is invalid: it ${pathErrors[0].message}.`, {
        errors: pathErrors,
      });
    }
    assertText(ctx.query, 'query');
    // Node's parser refuses NUL, CR and LF in headers already; the other controls it lets through.
    const headerErrors = Object.entries(ctx.headers).flatMap(([name, value]) =>
      badTextFields(value).map(({ message }) => ({ path: `header.${name}`, message })),
    );
    if (headerErrors.length > 0) {
      const summary = headerErrors.map((error) => `${error.path} ${error.message}`).join('; ');
      throw problem('validation_failed', `The request headers are invalid: ${summary}.`, { errors: headerErrors });
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
  return z
    .string()
    .max(max, { abort: true })
    .trim()
    .min(1, { message: 'must not be blank', abort: true })
    .regex(/\S/, 'must not be blank');
}
