// One HTTP attempt of a webhook, and when to try again. No redirects are followed (3xx is a failure), only the first
// KiB of the answer's body is read (for the administrators' webhook log; never logged), and pinned addresses make the connection go to the IPs that passed the
// SSRF check while TLS still verifies the URL's host name.
import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, type CheckedAddress } from './ssrf.ts';

/** The default of WEBHOOK_TIMEOUT_SECONDS: how long one attempt waits for the answer's status line. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
export const MAX_RETRY_DELAY_MS = 12 * 3600 * 1000;
/** The first bytes of an answer the webhook log keeps, and how long they are waited for after the status line. */
export const RESPONSE_EXCERPT_BYTES = 1024;
const RESPONSE_EXCERPT_WAIT_MS = 2000;

export interface AttemptResult {
  /** null when no answer came (network error, timeout). */
  httpStatus: number | null;
  retryAfter: string | null;
  /** A short reason without secrets or the answer's body; null on 2xx. */
  error: string | null;
  durationMs: number;
  /** The first bytes of the answer's body as text (control characters dropped); null when no answer came. */
  responseExcerpt: string | null;
}

export function postWebhook(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  options: { pinned: CheckedAddress[]; timeoutMs?: number },
): Promise<AttemptResult> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const done = (
    httpStatus: number | null,
    error: string | null,
    retryAfter: string | null = null,
    responseExcerpt: string | null = null,
  ): AttemptResult => ({
    httpStatus,
    retryAfter,
    error,
    durationMs: Math.round(performance.now() - started),
    responseExcerpt,
  });
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(body.length) },
      agent: false, // no pooled socket may carry us to an address other than the pinned ones
      lookup: pinnedLookup(options.pinned),
    });
    const timer = setTimeout(() => request.destroy(new TimeoutError()), timeoutMs);
    request.on('response', (response) => {
      // The status line decides; of the body only the first bytes are read, briefly, for the log, then the socket is
      // dropped. The duration is the status line's.
      clearTimeout(timer);
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const retryAfter = response.headers['retry-after'] ?? null;
      const answered = done(status, ok ? null : `HTTP ${status}`, retryAfter);
      const chunks: Buffer[] = [];
      let length = 0;
      const finish = () => {
        clearTimeout(excerptTimer);
        response.destroy();
        resolve({ ...answered, responseExcerpt: excerpt(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES)) });
      };
      const excerptTimer = setTimeout(finish, RESPONSE_EXCERPT_WAIT_MS);
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (length >= RESPONSE_EXCERPT_BYTES) finish();
      });
      response.on('end', finish);
      response.on('error', finish);
    });
    request.on('error', (error) => {
      clearTimeout(timer);
      resolve(
        done(null, error instanceof TimeoutError ? `no answer within ${timeoutMs / 1000} s` : networkReason(error)),
      );
    });
    request.end(body);
  });
}

/** WEBHOOK_RETRY_BASE_SECONDS × 2^(attempt−1), ±20% jitter, at most 12 h; a 429/503 Retry-After wins. */
export function retryDelayMs(
  attempt: number,
  baseSeconds: number,
  result?: Pick<AttemptResult, 'httpStatus' | 'retryAfter'>,
): number {
  if (result && (result.httpStatus === 429 || result.httpStatus === 503) && result.retryAfter) {
    const asked = parseRetryAfter(result.retryAfter, Date.now());
    if (asked !== undefined) return Math.min(Math.max(asked, 1000), MAX_RETRY_DELAY_MS);
  }
  const exponent = Math.min(Math.max(attempt - 1, 0), 30); // beyond 2^30 the cap applies anyway
  const jitter = 0.8 + Math.random() * 0.4;
  return Math.min(Math.round(baseSeconds * 1000 * 2 ** exponent * jitter), MAX_RETRY_DELAY_MS);
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now; undefined when unreadable. */
export function parseRetryAfter(value: string, now: number): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = /[a-z]/i.test(text) ? Date.parse(text) : NaN; // HTTP dates name a day and a month
  return Number.isNaN(date) ? undefined : Math.max(date - now, 0);
}

/** Text fit for the log and PostgreSQL: a character cut at the end and control characters (NUL included) dropped. */
function excerpt(bytes: Buffer): string {
  return bytes
    .toString('utf8')
    .replace(/\uFFFD$/, '')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '');
}

class TimeoutError extends Error {}

/** The error code and Node's message (host and port at most, never the path, query or headers). */
function networkReason(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return (code ? `${code}: ${error.message}` : error.message || 'network error').slice(0, 200);
}
