// One HTTP attempt of a webhook, and when to try again. No redirects are followed (3xx is a failure), the first KiB of
// the answer's body is kept for the administrators' webhook log (never logged), and pinned addresses make the connection
// go to the IPs that passed the SSRF check while TLS still verifies the URL's host name. Connections are kept alive
// between attempts to the same endpoint and the same checked addresses, as a deal's webhooks mostly go to one endpoint.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { pinnedLookup, type CheckedAddress } from './ssrf.ts';

/** The default of WEBHOOK_TIMEOUT_SECONDS: how long one attempt waits for the answer's status line. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
export const MAX_RETRY_DELAY_MS = 12 * 3600 * 1000;
/** The first bytes of an answer the webhook log keeps, and how long they are waited for after the status line. */
export const RESPONSE_EXCERPT_BYTES = 1024;
const RESPONSE_EXCERPT_WAIT_MS = 2000;
/**
 * An answer is read to its end, so that its connection can carry the next attempt, only when its body ends within this
 * many bytes (and within the excerpt's wait): a larger one would cost more to read than a new connection does.
 */
const RESPONSE_DRAIN_BYTES = 64 * 1024;
/**
 * How long a connection waits in the pool for the next attempt. Node's and Apache's servers close an idle connection
 * after 5 s, the shortest timeout in common use, so we close ours first: a request then seldom meets a connection the
 * server is closing at that moment. A server that announces a shorter `Keep-Alive: timeout=` gets a second less than it.
 */
const IDLE_CONNECTION_MS = 4000;
/** Idle connections kept per endpoint: enough for a burst of one marketplace's deals, no more held open at its server. */
const MAX_IDLE_CONNECTIONS = 8;
/** An endpoint's agent unused this long is dropped (its connections have idled out; it kept only TLS sessions). */
const AGENT_UNUSED_MS = 60_000;

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

interface PooledAgent {
  key: string;
  agent: http.Agent;
  /** Attempts on the wire through it: an agent is never dropped under them. */
  attempts: number;
  usedAt: number;
}

/**
 * One agent per origin and set of checked addresses, so a pooled connection only ever carries a request to the host it
 * was opened for, at an address that passed the check for this very attempt: when DNS moves the name, the new addresses
 * get an agent (and connections) of their own. The map's order is that of last use (an entry is put back at the end),
 * so the agents to drop are at its front.
 */
const agents = new Map<string, PooledAgent>();

function takeAgent(url: URL, pinned: CheckedAddress[]): PooledAgent {
  const now = performance.now();
  for (const [key, pooled] of agents) {
    if (now - pooled.usedAt < AGENT_UNUSED_MS) break;
    if (pooled.attempts === 0) {
      agents.delete(key);
      pooled.agent.destroy();
    }
  }
  // Sorted: a resolver that rotates its answers (round-robin DNS) names the same addresses in another order.
  const key = `${url.origin} ${pinned
    .map(({ address }) => address)
    .sort()
    .join(' ')}`;
  const pooled = agents.get(key) ?? {
    key,
    agent: new (url.protocol === 'https:' ? https.Agent : http.Agent)({
      keepAlive: true,
      maxFreeSockets: MAX_IDLE_CONNECTIONS,
      timeout: IDLE_CONNECTION_MS,
      // Every connection of this agent goes to these addresses and no others.
      lookup: pinnedLookup(pinned),
    }),
    attempts: 0,
    usedAt: now,
  };
  pooled.attempts += 1;
  used(pooled);
  return pooled;
}

function used(pooled: PooledAgent): void {
  pooled.usedAt = performance.now();
  agents.delete(pooled.key);
  agents.set(pooled.key, pooled);
}

export async function postWebhook(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  options: { pinned: CheckedAddress[]; timeoutMs?: number },
): Promise<AttemptResult> {
  const pooled = takeAgent(url, options.pinned);
  try {
    return await send(url, headers, body, options.pinned, options.timeoutMs ?? WEBHOOK_TIMEOUT_MS, pooled.agent);
  } finally {
    pooled.attempts -= 1;
    used(pooled);
  }
}

function send(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  pinned: CheckedAddress[],
  timeoutMs: number,
  agent: http.Agent,
): Promise<AttemptResult> {
  const started = performance.now();
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
    let request: http.ClientRequest;
    const timer = setTimeout(() => request.destroy(new TimeoutError()), timeoutMs);
    const post = (through: http.Agent | false) => {
      request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(body.length) },
        agent: through,
        lookup: pinnedLookup(pinned), // the pooled agent has its own; this one is for the connection of a retry
      });
      let socket: Socket | undefined;
      let bytesBefore = 0;
      let answered = false;
      request.on('socket', (assigned) => {
        socket = assigned;
        bytesBefore = assigned.bytesRead;
      });
      request.on('response', (response) => {
        // The status line decides, and the duration is its. Of the body the first bytes are kept for the log; a small
        // body is read to its end so the connection returns to the pool, anything else drops the connection.
        answered = true;
        clearTimeout(timer);
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const retryAfter = response.headers['retry-after'] ?? null;
        const result = done(status, ok ? null : `HTTP ${status}`, retryAfter);
        // A body said to be large is cut as soon as its excerpt is in, with no wait for bytes it will not keep.
        const small = !(Number(response.headers['content-length']) > RESPONSE_DRAIN_BYTES);
        const chunks: Buffer[] = [];
        let length = 0;
        let finished = false;
        const finish = (ended: boolean) => {
          if (finished) return;
          finished = true;
          clearTimeout(excerptTimer);
          if (!ended) response.destroy();
          resolve({ ...result, responseExcerpt: excerpt(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES)) });
        };
        const excerptTimer = setTimeout(() => finish(false), RESPONSE_EXCERPT_WAIT_MS);
        response.on('data', (chunk: Buffer) => {
          if (length < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
          length += chunk.length;
          if (small ? length > RESPONSE_DRAIN_BYTES : length >= RESPONSE_EXCERPT_BYTES) finish(false);
        });
        response.on('end', () => finish(true));
        response.on('error', () => finish(false));
        response.on('close', () => finish(false));
      });
      request.on('error', (error) => {
        if (answered) return; // the answer's own handlers end the attempt
        // A pooled connection the server closed while it idled fails the request before any answer. It never got to
        // the receiver's handler (or it did and answered nothing: the webhook's id makes a second copy harmless), so
        // it is no failure of the receiver's: the request goes once more, on a new connection.
        if (through && request.reusedSocket && socket?.bytesRead === bytesBefore && isConnectionClosed(error)) {
          post(false);
          return;
        }
        clearTimeout(timer);
        resolve(
          done(null, error instanceof TimeoutError ? `no answer within ${timeoutMs / 1000} s` : networkReason(error)),
        );
      });
      request.end(body);
    };
    post(agent);
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

/** ECONNRESET (Node's "socket hang up" too) or EPIPE: the other side had closed the connection. */
function isConnectionClosed(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** The error code and Node's message (host and port at most, never the path, query or headers). */
function networkReason(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return (code ? `${code}: ${error.message}` : error.message || 'network error').slice(0, 200);
}
