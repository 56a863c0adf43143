// Request bodies with limits: oversize is 413, a wrong type 415, malformed JSON 400, nesting deeper than MAX_DEPTH 400
// validation_failed (checked on the raw text, before JSON.parse). Nothing is parsed twice, and nothing here costs more
// than a pass or two over the bytes read.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { Problem, problem } from './problem.ts';
import { assertText, jsonDepthError, tooDeepProblem } from './text.ts';

/**
 * What a JSON route declares when its schema admits more than SMALL_BODY_LIMIT_BYTES (an SSO client's 20 redirect URIs
 * of 2,000 characters), or when the sender is not ours (YooKassa's notifications, a payment object of a few KiB).
 */
export const LARGE_BODY_LIMIT_BYTES = 256 * 1024;
/**
 * A JSON route's limit unless it declares another (api.ts `bodyLimitBytes`), and the limit of urlencoded forms and MCP
 * messages: sign-in, tokens and every other small request fit many times over (the largest text field is 5,000 characters).
 */
export const SMALL_BODY_LIMIT_BYTES = 64 * 1024;
/** An urlencoded form (what browsers send, and the OAuth token endpoint's request). */
export const FORM_LIMIT_BYTES = SMALL_BODY_LIMIT_BYTES;

/**
 * The body's bytes, at most `limitBytes` (413 beyond). A route that declares a limit (api.ts sets
 * `ctx.state.bodyLimitBytes`) caps every read of its body at that too, so the document never promises more.
 */
export async function readRawBody(ctx: Context, limitBytes: number): Promise<Buffer> {
  const declaredLimit = ctx.state.bodyLimitBytes as number | undefined;
  const limit = declaredLimit !== undefined ? Math.min(limitBytes, declaredLimit) : limitBytes;
  const declared = Number(ctx.get('Content-Length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  try {
    return await getRawBody(ctx.req, { limit });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw tooLarge(limit);
    if (type === 'request.aborted') throw problem('request_aborted', 'The client closed the request early.');
    throw error;
  }
}

/** The JSON body, or `{}` when the request has none (so `POST` with no body means "all defaults"). */
export async function readJsonBody(ctx: Context, limitBytes = SMALL_BODY_LIMIT_BYTES): Promise<unknown> {
  const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return {};
  if (!ctx.is('application/json', '+json')) {
    throw problem('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
  }
  const raw = await readRawBody(ctx, limitBytes);
  if (raw.length === 0) return {};
  return parseJsonText(raw.toString('utf8'));
}

/**
 * A JSON body's text parsed after the depth rule (on the text: the parser never meets a deep value) and the text rule. Throws
 * 400 validation_failed for nesting or text, 400 invalid_json for anything JSON.parse refuses.
 */
export function parseJsonText(text: string): unknown {
  const deep = jsonDepthError(text);
  if (deep) throw tooDeepProblem(deep, 'body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw problem('invalid_json', `The body is not valid JSON: ${(error as Error).message}`);
  }
  assertText(parsed, 'body');
  return parsed;
}

/**
 * An urlencoded form body; an empty body is an empty form. 415 for another type, 413 above `limitBytes`, 400
 * validation_failed for text the text rule refuses (a field named alone when it comes once, by its position too when
 * repeated: tags.1). Such a form is flat (no nesting to limit); it is read in one pass, however many fields repeat.
 */
export async function readUrlencodedForm(ctx: Context, limitBytes = FORM_LIMIT_BYTES): Promise<URLSearchParams> {
  const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return new URLSearchParams();
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw problem('unsupported_media_type', 'Send the form urlencoded.');
  const form = new URLSearchParams((await readRawBody(ctx, limitBytes)).toString('utf8'));
  const values = new Map<string, string[]>();
  for (const [key, value] of form) {
    const list = values.get(key);
    if (list) list.push(value);
    else values.set(key, [value]);
  }
  assertText(Object.fromEntries([...values].map(([key, list]) => [key, list.length === 1 ? list[0] : list])), 'form');
  return form;
}

function tooLarge(limitBytes: number): Problem {
  return problem('payload_too_large', `The body is larger than the limit of ${limitBytes} bytes.`);
}
