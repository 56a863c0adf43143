// multipart/form-data bodies (RFC 7578), what a browser form with files sends. The body is read whole under a byte
// limit like every body here (body.ts), then split at its boundary. Written out rather than taken from Node's fetch
// (Response.formData): Node 20's parser refuses a file that merely contains the boundary text, which RFC 2046 allows
// (only CRLF "--" boundary ends a part), so evidence such as a saved e-mail could not be uploaded.
import type { Context } from 'koa';
import { Problem, problem } from './problem.ts';
import { readRawBody } from './body.ts';

export interface FormFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** Each field's values in the order sent; a part with a filename is a file, any other part a text value. */
export interface MultipartForm {
  fields: Map<string, string[]>;
  files: Map<string, FormFile[]>;
}

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

/** Reads the body as multipart/form-data: 415 for another type, 413 above `limitBytes`, 400 bad_request when malformed. */
export async function readMultipart(
  ctx: Context,
  limits: { limitBytes: number; maxParts: number },
): Promise<MultipartForm> {
  if (!ctx.is('multipart/form-data')) throw problem('unsupported_media_type', 'Send the form as multipart/form-data.');
  const boundary = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(ctx.get('Content-Type'));
  if (!boundary) throw malformed('its Content-Type names no boundary');
  const raw = await readRawBody(ctx, limits.limitBytes);
  return parseMultipart(raw, boundary[1] ?? boundary[2], limits.maxParts);
}

export function parseMultipart(raw: Buffer, boundary: string, maxParts: number): MultipartForm {
  const form: MultipartForm = { fields: new Map(), files: new Map() };
  // Every delimiter is CRLF "--" boundary; the first may open the body, so the body is read as if a CRLF preceded it.
  const body = Buffer.concat([CRLF, raw]);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let at = body.indexOf(delimiter);
  if (at < 0) throw malformed('the boundary never occurs');
  for (let parts = 0; ; parts++) {
    let start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString('latin1') === '--') return form; // the close delimiter; an epilogue is ignored
    while (body[start] === 0x20 || body[start] === 0x09) start++; // transport padding
    if (!body.subarray(start, start + 2).equals(CRLF)) throw malformed('a boundary line does not end with CRLF');
    if (parts === maxParts) throw problem('bad_request', `The form has more than ${maxParts} parts.`);
    const next = body.indexOf(delimiter, start + 2);
    if (next < 0) throw malformed('it ends before its closing boundary');
    addPart(form, body.subarray(start + 2, next));
    at = next;
  }
}

function addPart(form: MultipartForm, part: Buffer): void {
  // A part without headers starts with the blank line at once.
  const headerEnd = part.subarray(0, 2).equals(CRLF) ? -2 : part.indexOf(HEADERS_END);
  if (headerEnd === -1) throw malformed('a part has no blank line after its headers');
  const headers = new Map<string, string>();
  for (const line of headerEnd < 0 ? [] : part.subarray(0, headerEnd).toString('utf8').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed('a part header has no name');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const content = part.subarray(headerEnd + 4);
  const disposition = headers.get('content-disposition') ?? '';
  if (!/^form-data\s*(;|$)/i.test(disposition)) throw malformed('a part is not form-data');
  const params = dispositionParams(disposition);
  const name = params.get('name');
  if (name === undefined) throw malformed('a part has no field name');
  const filename = params.get('filename');
  if (filename === undefined) {
    const values = form.fields.get(name);
    if (values) values.push(content.toString('utf8'));
    else form.fields.set(name, [content.toString('utf8')]);
    return;
  }
  // A file input left empty still sends a part, with an empty name and no bytes: no file was chosen.
  if (filename === '' && content.length === 0) return;
  const contentType = headers.get('content-type') || 'application/octet-stream';
  const file = { name: filename, contentType, bytes: Buffer.from(content) };
  const files = form.files.get(name);
  if (files) files.push(file);
  else form.files.set(name, [file]);
}

/**
 * The parameters of a Content-Disposition header. Browsers send names as raw UTF-8 in quotes and write `"`, CR and
 * LF in them as %22, %0D and %0A (the HTML standard), so exactly those are decoded; backslash escapes are undone.
 */
function dispositionParams(header: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const match of header.matchAll(/;\s*([\w!#$%&'*+.^`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g)) {
    const value = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3];
    params.set(match[1].toLowerCase(), value.replace(/%22/g, '"').replace(/%0D/gi, '\r').replace(/%0A/gi, '\n'));
  }
  return params;
}

function malformed(why: string): Problem {
  return problem('bad_request', `The body is not valid multipart/form-data: ${why}.`);
}
