// Request bodies with limits: oversize is 413, a wrong type 415, malformed JSON 400. Nothing is parsed twice.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { Problem } from './problem.ts';
import { assertText } from './text.ts';

export const JSON_LIMIT_BYTES = 1024 * 1024;

export async function readRawBody(ctx: Context, limitBytes: number): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length'));
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge(limitBytes);
  try {
    return await getRawBody(ctx.req, { limit: limitBytes });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw tooLarge(limitBytes);
    if (type === 'request.aborted') throw new Problem(400, 'request_aborted', 'The client closed the request early.');
    throw error;
  }
}

/** The JSON body, or `{}` when the request has none (so `POST` with no body means "all defaults"). */
export async function readJsonBody(ctx: Context, limitBytes = JSON_LIMIT_BYTES): Promise<unknown> {
  const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return {};
  if (!ctx.is('application/json', '+json')) {
    throw new Problem(415, 'unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
  }
  const raw = await readRawBody(ctx, limitBytes);
  if (raw.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new Problem(400, 'invalid_json', `The body is not valid JSON: ${(error as Error).message}`);
  }
  assertText(parsed, 'body');
  return parsed;
}

function tooLarge(limitBytes: number): Problem {
  return new Problem(413, 'payload_too_large', `The body is larger than the limit of ${limitBytes} bytes.`);
}
