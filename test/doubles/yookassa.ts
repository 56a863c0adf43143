// A local stand-in for YooKassa API v3 payments, in the tests only, faithful to its documented rules:
// HTTP Basic auth (shopId:secretKey), an Idempotence-Key (at most 64 characters) on every POST whose first answer is
// replayed for the same key (a different request under a used key is refused), errors as
// `{type: "error", id, code, description, parameter}`, two-stage payments (capture=false: pending →
// waiting_for_capture → succeeded | canceled), capture only from waiting_for_capture, cancel only from
// waiting_for_capture (YooKassa's reference: "cancels a payment in waiting_for_capture"), and notifications
// `{type: "notification", event, object}` when a payment changes without our asking.
// Test helpers: pay(id), expire(id), failNext(n, status), the request log, and a checkout page for browsers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

type Status = 'pending' | 'waiting_for_capture' | 'succeeded' | 'canceled';
type Event = 'payment.waiting_for_capture' | 'payment.succeeded' | 'payment.canceled';

export interface Money {
  value: string;
  currency: string;
}

export interface DoublePayment {
  id: string;
  status: Status;
  paid: boolean;
  amount: Money;
  description?: string;
  recipient: { account_id: string; gateway_id: string };
  payment_method?: Record<string, unknown>;
  created_at: string;
  captured_at?: string;
  expires_at?: string;
  confirmation?: { type: 'redirect'; confirmation_url: string };
  test: boolean;
  refundable: boolean;
  metadata: Record<string, string>;
  cancellation_details?: { party: 'merchant' | 'yoo_money' | 'payment_network'; reason: string };
}

export interface LoggedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface SentNotification {
  event: Event;
  paymentId: string;
  /** The receiver's HTTP status, or 0 when it could not be reached. */
  status: number;
}

interface Answer {
  status: number;
  body: unknown;
}

const HOLD_SECONDS = 7 * 24 * 3600;
const MONEY = /^\d{1,17}(\.\d{1,2})?$/;

export class YooKassaDouble {
  readonly requests: LoggedRequest[] = [];
  readonly payments = new Map<string, DoublePayment>();
  readonly notifications: SentNotification[] = [];
  /** Where pay() and expire() POST notifications (YooKassa's "URL for notifications"). */
  notificationUrl: string | undefined;
  /** The server's address; the API is at `${url}/v3`. */
  url = '';
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private readonly answersByKey = new Map<string, { fingerprint: string; answer: Answer }>();
  private readonly returnUrls = new Map<string, string>();
  private readonly autoCapture = new Map<string, boolean>();
  private failures: number[] = [];

  constructor(
    readonly shopId = '100500',
    readonly secretKey = 'test_secret_key',
  ) {}

  get apiUrl(): string {
    return `${this.url}/v3`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next `count` API calls answer `status` (500 by default, or 429) without doing anything. */
  failNext(count: number, status = 500): void {
    this.failures.push(...Array.from({ length: count }, () => status));
  }

  /** The buyer pays: pending → waiting_for_capture (succeeded when created with capture=true), then a notification. */
  async pay(id: string): Promise<SentNotification> {
    const payment = this.mustFind(id, 'pending');
    const capture = this.autoCapture.get(id) === true;
    Object.assign(payment, {
      status: capture ? 'succeeded' : 'waiting_for_capture',
      paid: true,
      refundable: capture,
      payment_method: { type: 'bank_card', id: randomUUID(), saved: false, title: 'Bank card *4444', card: { last4: '4444' } },
    });
    delete payment.confirmation;
    if (capture) payment.captured_at = new Date().toISOString();
    else payment.expires_at = new Date(Date.now() + HOLD_SECONDS * 1000).toISOString();
    return this.notify(capture ? 'payment.succeeded' : 'payment.waiting_for_capture', payment);
  }

  /** Time runs out: an unpaid payment (expired_on_confirmation) or a hold (expired_on_capture) is cancelled. */
  async expire(id: string): Promise<SentNotification> {
    const payment = this.mustFind(id);
    if (payment.status !== 'pending' && payment.status !== 'waiting_for_capture') throw new Error(`${id} is ${payment.status}`);
    const reason = payment.status === 'pending' ? 'expired_on_confirmation' : 'expired_on_capture';
    this.cancelled(payment, { party: 'yoo_money', reason });
    return this.notify('payment.canceled', payment);
  }

  /** Sends a notification the way YooKassa does: the whole object, unsigned. */
  async notify(event: Event, payment: DoublePayment): Promise<SentNotification> {
    let status = 0;
    if (this.notificationUrl) {
      try {
        const response = await fetch(this.notificationUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'notification', event, object: payment }),
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        await response.arrayBuffer();
      } catch {
        status = 0;
      }
    }
    const sent = { event, paymentId: payment.id, status };
    this.notifications.push(sent);
    return sent;
  }

  /** Requests to one path, oldest first. */
  requestsTo(method: string, path: string): LoggedRequest[] {
    return this.requests.filter((request) => request.method === method && request.path === path);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://double').pathname;
    const method = req.method ?? 'GET';
    this.requests.push({ method, path, headers: req.headers, body: parseJson(raw) ?? raw });
    const answer = path.startsWith('/checkout/') ? await this.checkout(method, path, res) : this.api(req, method, path, raw);
    if (!answer) return;
    res.writeHead(answer.status, { 'Content-Type': 'application/json;charset=UTF-8' });
    res.end(JSON.stringify(answer.body));
  }

  private api(req: http.IncomingMessage, method: string, path: string, raw: string): Answer {
    const failure = this.failures.shift();
    if (failure !== undefined) {
      return error(failure, failure === 429 ? 'too_many_requests' : 'internal_server_error', 'Injected failure; the result is unknown.');
    }
    if (!this.authorized(req.headers.authorization)) {
      return error(401, 'invalid_credentials', 'Authentication error: wrong shopId or secret key.');
    }
    const match = /^\/v3\/payments(?:\/([^/]+)(?:\/(capture|cancel))?)?$/.exec(path);
    if (!match) return error(404, 'not_found', `No such resource ${path}.`);
    const [, id, action] = match;
    if (method === 'GET' && id && !action) {
      const payment = this.payments.get(id);
      return payment ? { status: 200, body: payment } : unknownPayment();
    }
    if (method !== 'POST' || (id && !action) || (!id && action)) return error(405, 'invalid_request', `${method} is not allowed here.`);
    return this.idempotent(req, path, raw, (body) => (!id ? this.create(body) : action === 'capture' ? this.capture(id, body) : this.cancel(id)));
  }

  /** The first answer under a key is the answer for that key; a different request under it is refused. */
  private idempotent(req: http.IncomingMessage, path: string, raw: string, operation: (body: Record<string, unknown>) => Answer): Answer {
    const key = req.headers['idempotence-key'];
    if (typeof key !== 'string' || key.length === 0) {
      return error(400, 'invalid_request', 'Idempotence key header is missing.', 'Idempotence-Key');
    }
    if (key.length > 64) return error(400, 'invalid_request', 'Idempotence key is longer than 64 characters.', 'Idempotence-Key');
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) {
      return error(415, 'invalid_request', 'Content-Type must be application/json.');
    }
    const body = raw === '' ? {} : parseJson(raw);
    if (!isObject(body)) return error(400, 'invalid_request', 'The request body is not a JSON object.');
    const fingerprint = `${path} ${JSON.stringify(body)}`;
    const stored = this.answersByKey.get(key);
    if (stored) {
      if (stored.fingerprint !== fingerprint) {
        return error(400, 'invalid_request', 'Idempotence key duplicated: it was used for another request.', 'Idempotence-Key');
      }
      return stored.answer;
    }
    const answer = operation(body);
    this.answersByKey.set(key, { fingerprint, answer: structuredClone(answer) });
    return answer;
  }

  private create(body: Record<string, unknown>): Answer {
    const amount = parseMoney(body.amount);
    if ('status' in amount) return amount;
    const confirmation = body.confirmation;
    if (!isObject(confirmation) || confirmation.type !== 'redirect') {
      return error(400, 'invalid_request', 'This double supports confirmation type redirect only.', 'confirmation.type');
    }
    if (typeof confirmation.return_url !== 'string' || !URL.canParse(confirmation.return_url)) {
      return error(400, 'invalid_request', 'return_url is required for redirect confirmation.', 'confirmation.return_url');
    }
    if (body.capture !== undefined && typeof body.capture !== 'boolean') return error(400, 'invalid_request', 'capture must be a boolean.', 'capture');
    const description = body.description;
    if (description !== undefined && (typeof description !== 'string' || [...description].length > 128)) {
      return error(400, 'invalid_request', 'description must be a string of at most 128 characters.', 'description');
    }
    const metadata = body.metadata ?? {};
    if (!isMetadata(metadata)) {
      return error(400, 'invalid_request', 'metadata: at most 16 string values, keys up to 32 and values up to 512 characters.', 'metadata');
    }
    const id = randomUUID();
    const payment: DoublePayment = {
      id,
      status: 'pending',
      paid: false,
      amount,
      ...(description ? { description } : {}),
      recipient: { account_id: this.shopId, gateway_id: '2000001' },
      created_at: new Date().toISOString(),
      confirmation: { type: 'redirect', confirmation_url: `${this.url}/checkout/payments/${id}` },
      test: true,
      refundable: false,
      metadata,
    };
    this.payments.set(id, payment);
    this.returnUrls.set(id, confirmation.return_url);
    this.autoCapture.set(id, body.capture === true);
    return { status: 200, body: structuredClone(payment) };
  }

  private capture(id: string, body: Record<string, unknown>): Answer {
    const payment = this.payments.get(id);
    if (!payment) return unknownPayment();
    if (payment.status !== 'waiting_for_capture') return wrongStatus(payment, 'capture');
    let captured = payment.amount;
    if (body.amount !== undefined) {
      const amount = parseMoney(body.amount);
      if ('status' in amount) return amount;
      if (amount.currency !== payment.amount.currency) return error(400, 'invalid_request', 'Currency differs from the payment.', 'amount.currency');
      if (Number(amount.value) > Number(payment.amount.value)) {
        return error(400, 'invalid_request', 'The amount is more than was authorized.', 'amount.value');
      }
      captured = amount;
    }
    Object.assign(payment, { status: 'succeeded', paid: true, refundable: true, amount: captured, captured_at: new Date().toISOString() });
    delete payment.expires_at;
    return { status: 200, body: structuredClone(payment) };
  }

  private cancel(id: string): Answer {
    const payment = this.payments.get(id);
    if (!payment) return unknownPayment();
    if (payment.status !== 'waiting_for_capture') return wrongStatus(payment, 'cancel');
    this.cancelled(payment, { party: 'merchant', reason: 'canceled_by_merchant' });
    return { status: 200, body: structuredClone(payment) };
  }

  private cancelled(payment: DoublePayment, details: NonNullable<DoublePayment['cancellation_details']>): void {
    Object.assign(payment, { status: 'canceled', paid: false, refundable: false, cancellation_details: details });
    delete payment.expires_at;
    delete payment.confirmation;
  }

  /** The payment page confirmation_url points at: a button that pays, then back to return_url. */
  private async checkout(method: string, path: string, res: http.ServerResponse): Promise<Answer | undefined> {
    const match = /^\/checkout\/payments\/([^/]+)(\/pay)?$/.exec(path);
    const payment = match ? this.payments.get(match[1]!) : undefined;
    if (!match || !payment) return error(404, 'not_found', 'No such payment page.');
    if (method === 'GET' && !match[2]) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>YooKassa double</title><form method="post" action="${path}/pay">` +
        `<button>Pay ${payment.amount.value} ${payment.amount.currency}</button></form>`);
      return undefined;
    }
    if (method === 'POST' && match[2]) {
      if (payment.status === 'pending') await this.pay(payment.id);
      res.writeHead(303, { Location: this.returnUrls.get(payment.id)! });
      res.end();
      return undefined;
    }
    return error(405, 'invalid_request', `${method} is not allowed here.`);
  }

  private authorized(header: string | undefined): boolean {
    const [scheme, encoded] = (header ?? '').split(' ');
    return scheme === 'Basic' && Buffer.from(encoded ?? '', 'base64').toString('utf8') === `${this.shopId}:${this.secretKey}`;
  }

  private mustFind(id: string, status?: Status): DoublePayment {
    const payment = this.payments.get(id);
    if (!payment) throw new Error(`The double has no payment ${id}`);
    if (status && payment.status !== status) throw new Error(`Payment ${id} is ${payment.status}, not ${status}`);
    return payment;
  }
}

export function startYooKassaDouble(options: { shopId?: string; secretKey?: string } = {}): Promise<YooKassaDouble> {
  return new YooKassaDouble(options.shopId, options.secretKey).start();
}

function error(status: number, code: string, description: string, parameter?: string): Answer {
  return { status, body: { type: 'error', id: randomUUID(), code, description, ...(parameter ? { parameter } : {}) } };
}

function unknownPayment(): Answer {
  return error(404, 'not_found', "Incorrect payment_id. Payment doesn't exist or access denied.", 'payment_id');
}

function wrongStatus(payment: DoublePayment, action: string): Answer {
  return error(400, 'invalid_request', `Cannot ${action} a payment in status ${payment.status}; it must be waiting_for_capture.`, 'payment_id');
}

/** YooKassa's money is `{value: "100.00", currency: "RUB"}`: the value a decimal string, not a number. */
function parseMoney(value: unknown): Money | Answer {
  if (!isObject(value) || typeof value.value !== 'string' || !MONEY.test(value.value) || Number(value.value) <= 0) {
    return error(400, 'invalid_request', 'The amount must be a positive decimal string such as "100.00".', 'amount.value');
  }
  if (typeof value.currency !== 'string' || !/^[A-Z]{3}$/.test(value.currency)) {
    return error(400, 'invalid_request', 'The currency must be an ISO 4217 code.', 'amount.currency');
  }
  return { value: value.value, currency: value.currency };
}

function isMetadata(value: unknown): value is Record<string, string> {
  if (!isObject(value)) return false;
  const entries = Object.entries(value);
  return entries.length <= 16 && entries.every(([key, item]) => key.length <= 32 && typeof item === 'string' && item.length <= 512);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
