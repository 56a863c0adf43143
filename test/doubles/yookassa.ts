// A local stand-in for YooKassa API v3, in the tests only, faithful to its documented rules:
// HTTP Basic auth (shopId:secretKey), an Idempotence-Key (at most 64 characters) on every POST whose first answer is
// replayed for the same key (a different request under a used key is refused), errors as
// `{type: "error", id, code, description, parameter}`, and notifications `{type: "notification", event, object}` when
// a payment or a payout changes without our asking.
//
// Payments: two-stage (capture=false: pending → waiting_for_capture → succeeded | canceled), capture only from
// waiting_for_capture, cancel only from waiting_for_capture (YooKassa's reference: "cancels a payment in
// waiting_for_capture"), or captured at once (capture=true: pending → succeeded).
//
// Safe deals (https://yookassa.ru/developers/solutions-for-platforms/safe-deal/integration/deals): a deal
// (POST /v3/deals, type safe_deal, fee_moment payment_succeeded | deal_closed) keeps a `balance` (the money in it) and a
// `payout_balance` (what may still be paid out to the seller). A payment made with `deal: {id, settlements}` adds, once
// it succeeds, the settlements' sum to the payout balance and to the balance the whole payment (deal_closed: the
// platform's fee waits in the deal until it closes) or only the settlements (payment_succeeded: the fee leaves at
// once). A refund in the deal (POST /v3/refunds with deal.refund_settlements) is possible only before any payout of the
// deal; its settlements come out of the payout balance and the whole refund out of the balance; with
// payment_succeeded it returns only the seller's part (amount = settlements). A payout (POST /v3/payouts with
// deal.id) takes its amount out of both balances at once, and gives it back if it is cancelled. The deal closes by
// itself once nothing is left to pay out and no payout is pending (the remaining fee goes to the shop), or once a
// refund empties it. YooKassa takes its acquiring commission out of the platform's fee; the double takes none.
//
// Payout limits (https://yookassa.ru/developers/solutions-for-platforms/safe-deal/integration/payouts): to one card
// (one payout_token) from 1 to 150,000 ₽ a payout, at most 20 payouts a day and 1,500,000 ₽ a month; to a YooMoney
// wallet 600,000 ₽ a month. YooKassa accepts such a payout and cancels it (declined payouts: cancellation_details.reason
// one_time_limit_exceeded or periodic_limit_exceeded); the double does the same, counting days and months in Moscow
// time. A payout of more than the deal's payout balance, or out of a closed deal, is refused with 400.
//
// Test helpers: pay(id), expire(id), failNext(n, status), crashAfterApplying(n, how), holdPayouts(), settlePayout(id,
// outcome), declineNextPayout(reason), deals(), payoutsCreatedWith(key), payoutsFor(payoutId), the request log, the
// notifications sent, and a checkout page for browsers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomUUID } from 'node:crypto';

type Status = 'pending' | 'waiting_for_capture' | 'succeeded' | 'canceled';
export type PaymentEvent = 'payment.waiting_for_capture' | 'payment.succeeded' | 'payment.canceled';
export type PayoutEvent = 'payout.succeeded' | 'payout.canceled';
type Event = PaymentEvent | PayoutEvent;

export interface Money {
  value: string;
  currency: string;
}

export interface Settlement {
  type: 'payout';
  amount: Money;
}

export interface DoublePayment {
  id: string;
  status: Status;
  paid: boolean;
  amount: Money;
  /** What was refunded of a succeeded payment; YooKassa keeps such a payment `succeeded`. */
  refunded_amount?: Money;
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
  deal?: { id: string; settlements: Settlement[] };
  cancellation_details?: { party: 'merchant' | 'yoo_money' | 'payment_network'; reason: string };
}

export interface DoubleDeal {
  id: string;
  type: 'safe_deal';
  fee_moment: 'payment_succeeded' | 'deal_closed';
  description?: string;
  balance: Money;
  payout_balance: Money;
  status: 'opened' | 'closed';
  created_at: string;
  expires_at: string;
  metadata: Record<string, string>;
  test: boolean;
}

export interface DoublePayout {
  id: string;
  amount: Money;
  status: 'pending' | 'succeeded' | 'canceled';
  payout_destination:
    | { type: 'bank_card'; card: { first6: string; last4: string; card_type: string; issuer_country: string } }
    | { type: 'yoo_money'; account_number: string };
  description?: string;
  created_at: string;
  deal?: { id: string };
  metadata: Record<string, string>;
  test: boolean;
  cancellation_details?: { party: 'yoo_money' | 'payout_network'; reason: string };
}

export interface DoubleRefund {
  id: string;
  payment_id: string;
  status: 'succeeded';
  created_at: string;
  amount: Money;
  description?: string;
  metadata?: Record<string, string>;
  deal?: { id: string; refund_settlements: Settlement[] };
}

export interface LoggedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface SentNotification {
  event: Event;
  /** The payment's id, for payment.* events. */
  paymentId?: string;
  /** The payout's id, for payout.* events. */
  payoutId?: string;
  /** The receiver's HTTP status, or 0 when it could not be reached. */
  status: number;
}

interface Answer {
  status: number;
  body: unknown;
}

/** How the double fails after it applied a POST: it drops the connection, or answers 500 (the result is unknown). */
export type Crash = 'drop' | 500;

const HOLD_SECONDS = 7 * 24 * 3600;
/** The safe deal's lifetime the double's shop agreed with YooKassa (src/escrow/yookassa-safe-deal.ts). */
const DEAL_LIFETIME_DAYS = 90;
const MONEY = /^\d{1,17}(\.\d{1,2})?$/;
const CARD_PAYOUT_MIN = 100n;
const CARD_PAYOUT_MAX = 150_000_00n;
const CARD_PAYOUTS_PER_DAY = 20;
const CARD_PAYOUTS_PER_MONTH = 1_500_000_00n;
const WALLET_PAYOUTS_PER_MONTH = 600_000_00n;
/** Moscow time, in which the double counts a card's payouts per day and per month. */
const MOSCOW_OFFSET_MS = 3 * 3600 * 1000;

export class YooKassaDouble {
  readonly requests: LoggedRequest[] = [];
  readonly payments = new Map<string, DoublePayment>();
  readonly dealsById = new Map<string, DoubleDeal>();
  readonly payouts = new Map<string, DoublePayout>();
  readonly refunds = new Map<string, DoubleRefund>();
  readonly notifications: SentNotification[] = [];
  /** Where pay(), expire() and settlePayout() POST notifications (YooKassa's "URL for notifications"). */
  notificationUrl: string | undefined;
  /** The server's address; the API is at `${url}/v3`. */
  url = '';
  /** The double's clock, for payout limits per day and month; a test may move it. */
  now: () => Date = () => new Date();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private readonly answersByKey = new Map<string, { fingerprint: string; answer: Answer }>();
  private readonly returnUrls = new Map<string, string>();
  private readonly autoCapture = new Map<string, boolean>();
  /** Each payout's Idempotence-Key, and where a card payout went (its payout_token), for the limits. */
  private readonly payoutKeys = new Map<string, string>();
  private readonly payoutTargets = new Map<string, string>();
  private failures: number[] = [];
  private crashes: Crash[] = [];
  private payoutsPending = false;
  private declines: string[] = [];

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

  /**
   * The next `count` POSTs are applied (and their answers kept under their Idempotence-Key), but the client never gets
   * the answer: the connection drops, or a 500 comes instead. A retry with the same key gets the first answer.
   */
  crashAfterApplying(count = 1, how: Crash = 'drop'): void {
    this.crashes.push(...Array.from({ length: count }, () => how));
  }

  /** New payouts stay `pending` until settlePayout() (YooKassa's card payouts settle at once or later); off again with false. */
  holdPayouts(on = true): void {
    this.payoutsPending = on;
  }

  /** The next payout is declined at once: `canceled` with party payout_network (the card's bank) and `reason`. */
  declineNextPayout(reason = 'rejected_by_payee'): void {
    this.declines.push(reason);
  }

  /** A pending payout settles; a cancelled one gives its money back to the deal. Sends payout.succeeded or payout.canceled. */
  async settlePayout(
    id: string,
    outcome: 'succeeded' | 'canceled',
    reason = 'general_decline',
  ): Promise<SentNotification> {
    const payout = this.payouts.get(id);
    if (!payout) throw new Error(`The double has no payout ${id}`);
    if (payout.status !== 'pending') throw new Error(`Payout ${id} is ${payout.status}, not pending`);
    const deal = payout.deal ? this.dealsById.get(payout.deal.id) : undefined;
    if (outcome === 'succeeded') {
      payout.status = 'succeeded';
    } else {
      Object.assign(payout, { status: 'canceled', cancellation_details: { party: 'payout_network', reason } });
      if (deal) this.adjust(deal, kopecks(payout.amount.value), kopecks(payout.amount.value));
    }
    if (deal) this.closeWhenDone(deal);
    return this.notify(outcome === 'succeeded' ? 'payout.succeeded' : 'payout.canceled', payout);
  }

  /** Every deal as it stands: its status, balance and payout balance. */
  deals(): { id: string; status: DoubleDeal['status']; balance: string; payoutBalance: string }[] {
    return [...this.dealsById.values()].map((deal) => ({
      id: deal.id,
      status: deal.status,
      balance: deal.balance.value,
      payoutBalance: deal.payout_balance.value,
    }));
  }

  /** How many payouts were created under one Idempotence-Key (replays of the key make none). */
  payoutsCreatedWith(key: string): number {
    return [...this.payoutKeys.values()].filter((used) => used === key).length;
  }

  /** The payouts whose metadata names our payout id. */
  payoutsFor(payoutId: string): DoublePayout[] {
    return [...this.payouts.values()].filter((payout) => payout.metadata.payout_id === payoutId);
  }

  /** The buyer pays: pending → waiting_for_capture (succeeded when created with capture=true), then a notification. */
  async pay(id: string): Promise<SentNotification> {
    const payment = this.mustFind(id, 'pending');
    const capture = this.autoCapture.get(id) === true;
    Object.assign(payment, {
      status: capture ? 'succeeded' : 'waiting_for_capture',
      paid: true,
      refundable: capture,
      payment_method: {
        type: 'bank_card',
        id: randomUUID(),
        saved: false,
        title: 'Bank card *4444',
        card: { last4: '4444' },
      },
    });
    delete payment.confirmation;
    if (capture) {
      payment.captured_at = this.now().toISOString();
      this.intoDeal(payment);
    } else {
      payment.expires_at = new Date(this.now().getTime() + HOLD_SECONDS * 1000).toISOString();
    }
    return this.notify(capture ? 'payment.succeeded' : 'payment.waiting_for_capture', payment);
  }

  /** Time runs out: an unpaid payment (expired_on_confirmation) or a hold (expired_on_capture) is cancelled. */
  async expire(id: string): Promise<SentNotification> {
    const payment = this.mustFind(id);
    if (payment.status !== 'pending' && payment.status !== 'waiting_for_capture')
      throw new Error(`${id} is ${payment.status}`);
    const reason = payment.status === 'pending' ? 'expired_on_confirmation' : 'expired_on_capture';
    this.cancelled(payment, { party: 'yoo_money', reason });
    return this.notify('payment.canceled', payment);
  }

  /** Sends a notification the way YooKassa does: the whole object, unsigned. */
  async notify(event: Event, object: DoublePayment | DoublePayout): Promise<SentNotification> {
    let status = 0;
    if (this.notificationUrl) {
      try {
        const response = await fetch(this.notificationUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'notification', event, object }),
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        await response.arrayBuffer();
      } catch {
        status = 0;
      }
    }
    const sent: SentNotification = event.startsWith('payout.')
      ? { event, payoutId: object.id, status }
      : { event, paymentId: object.id, status };
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
    const url = new URL(req.url ?? '/', 'http://double');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    this.requests.push({ method, path, headers: req.headers, body: parseJson(raw) ?? raw });
    if (path.startsWith('/checkout/')) {
      const page = await this.checkout(method, path, res);
      if (page) this.send(res, page);
      return;
    }
    const failure = this.failures.shift();
    if (failure !== undefined) {
      this.send(
        res,
        error(
          failure,
          failure === 429 ? 'too_many_requests' : 'internal_server_error',
          'Injected failure; the result is unknown.',
        ),
      );
      return;
    }
    const crash = method === 'POST' ? this.crashes.shift() : undefined;
    const answer = this.api(req, method, url, raw);
    if (crash === 'drop') {
      // Applied, and the answer kept under its key; the client sees the connection close without an answer.
      res.destroy();
      return;
    }
    this.send(
      res,
      crash === 500
        ? error(500, 'internal_server_error', 'Injected failure after the request was applied; the result is unknown.')
        : answer,
    );
  }

  private send(res: http.ServerResponse, answer: Answer): void {
    res.writeHead(answer.status, { 'Content-Type': 'application/json;charset=UTF-8' });
    res.end(JSON.stringify(answer.body));
  }

  private api(req: http.IncomingMessage, method: string, url: URL, raw: string): Answer {
    if (!this.authorized(req.headers.authorization)) {
      return error(401, 'invalid_credentials', 'Authentication error: wrong shopId or secret key.');
    }
    const path = url.pathname;
    const payments = /^\/v3\/payments(?:\/([^/]+)(?:\/(capture|cancel))?)?$/.exec(path);
    if (payments) {
      const [, id, action] = payments;
      if (method === 'GET' && id && !action) {
        const payment = this.payments.get(id);
        return payment ? { status: 200, body: payment } : unknownPayment();
      }
      if (method !== 'POST' || (id && !action) || (!id && action)) return notAllowed(method);
      return this.idempotent(req, path, raw, (body) =>
        !id ? this.create(body) : action === 'capture' ? this.capture(id, body) : this.cancel(id),
      );
    }
    const other = /^\/v3\/(deals|payouts|refunds)(?:\/([^/]+))?$/.exec(path);
    if (!other) return error(404, 'not_found', `No such resource ${path}.`);
    const [, resource, id] = other;
    if (method === 'GET' && id) {
      const found =
        resource === 'deals'
          ? this.dealsById.get(id)
          : resource === 'payouts'
            ? this.payouts.get(id)
            : this.refunds.get(id);
      return found
        ? { status: 200, body: found }
        : error(
            404,
            'not_found',
            `No such ${resource.slice(0, -1)} ${id}, or access denied.`,
            `${resource.slice(0, -1)}_id`,
          );
    }
    if (method === 'GET' && resource === 'refunds') return this.listRefunds(url.searchParams);
    if (method !== 'POST' || id) return notAllowed(method);
    return this.idempotent(req, path, raw, (body, key) =>
      resource === 'deals'
        ? this.createDeal(body)
        : resource === 'payouts'
          ? this.createPayout(body, key)
          : this.createRefund(body),
    );
  }

  /** The first answer under a key is the answer for that key; a different request under it is refused. */
  private idempotent(
    req: http.IncomingMessage,
    path: string,
    raw: string,
    operation: (body: Record<string, unknown>, key: string) => Answer,
  ): Answer {
    const key = req.headers['idempotence-key'];
    if (typeof key !== 'string' || key.length === 0) {
      return error(400, 'invalid_request', 'Idempotence key header is missing.', 'Idempotence-Key');
    }
    if (key.length > 64)
      return error(400, 'invalid_request', 'Idempotence key is longer than 64 characters.', 'Idempotence-Key');
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) {
      return error(415, 'invalid_request', 'Content-Type must be application/json.');
    }
    const body = raw === '' ? {} : parseJson(raw);
    if (!isObject(body)) return error(400, 'invalid_request', 'The request body is not a JSON object.');
    const fingerprint = `${path} ${JSON.stringify(body)}`;
    const stored = this.answersByKey.get(key);
    if (stored) {
      if (stored.fingerprint !== fingerprint) {
        return error(
          400,
          'invalid_request',
          'Idempotence key duplicated: it was used for another request.',
          'Idempotence-Key',
        );
      }
      return stored.answer;
    }
    const answer = operation(body, key);
    this.answersByKey.set(key, { fingerprint, answer: structuredClone(answer) });
    return answer;
  }

  private create(body: Record<string, unknown>): Answer {
    const amount = parseMoney(body.amount);
    if ('status' in amount) return amount;
    const confirmation = body.confirmation;
    if (!isObject(confirmation) || confirmation.type !== 'redirect') {
      return error(
        400,
        'invalid_request',
        'This double supports confirmation type redirect only.',
        'confirmation.type',
      );
    }
    if (typeof confirmation.return_url !== 'string' || !URL.canParse(confirmation.return_url)) {
      return error(
        400,
        'invalid_request',
        'return_url is required for redirect confirmation.',
        'confirmation.return_url',
      );
    }
    if (body.capture !== undefined && typeof body.capture !== 'boolean')
      return error(400, 'invalid_request', 'capture must be a boolean.', 'capture');
    const description = body.description;
    if (description !== undefined && (typeof description !== 'string' || [...description].length > 128)) {
      return error(400, 'invalid_request', 'description must be a string of at most 128 characters.', 'description');
    }
    const metadata = body.metadata ?? {};
    if (!isMetadata(metadata)) {
      return error(
        400,
        'invalid_request',
        'metadata: at most 16 string values, keys up to 32 and values up to 512 characters.',
        'metadata',
      );
    }
    let deal: DoublePayment['deal'];
    if (body.deal !== undefined) {
      const parsed = this.paymentDeal(body.deal, amount);
      if ('status' in parsed) return parsed;
      deal = parsed;
    }
    const id = randomUUID();
    const payment: DoublePayment = {
      id,
      status: 'pending',
      paid: false,
      amount,
      ...(description ? { description } : {}),
      recipient: { account_id: this.shopId, gateway_id: '2000001' },
      created_at: this.now().toISOString(),
      confirmation: { type: 'redirect', confirmation_url: `${this.url}/checkout/payments/${id}` },
      test: true,
      refundable: false,
      metadata,
      ...(deal ? { deal } : {}),
    };
    this.payments.set(id, payment);
    this.returnUrls.set(id, confirmation.return_url);
    this.autoCapture.set(id, body.capture === true);
    return { status: 200, body: structuredClone(payment) };
  }

  /** A payment's `deal`: an open deal of ours, and settlements (payouts to the seller) that fit in the payment. */
  private paymentDeal(value: unknown, amount: Money): NonNullable<DoublePayment['deal']> | Answer {
    if (!isObject(value) || typeof value.id !== 'string')
      return error(400, 'invalid_request', 'deal.id is required.', 'deal.id');
    const deal = this.dealsById.get(value.id);
    if (!deal) return error(400, 'invalid_request', `There is no deal ${value.id}.`, 'deal.id');
    if (deal.status !== 'opened') return error(400, 'invalid_request', `Deal ${deal.id} is closed.`, 'deal.id');
    const settlements = parseSettlements(value.settlements, 'deal.settlements', amount.currency);
    if ('status' in settlements) return settlements;
    if (sumOf(settlements) > kopecks(amount.value)) {
      return error(
        400,
        'invalid_request',
        'The settlements to the seller are more than the payment.',
        'deal.settlements',
      );
    }
    return { id: deal.id, settlements };
  }

  private capture(id: string, body: Record<string, unknown>): Answer {
    const payment = this.payments.get(id);
    if (!payment) return unknownPayment();
    if (payment.status !== 'waiting_for_capture') return wrongStatus(payment, 'capture');
    let captured = payment.amount;
    if (body.amount !== undefined) {
      const amount = parseMoney(body.amount);
      if ('status' in amount) return amount;
      if (amount.currency !== payment.amount.currency)
        return error(400, 'invalid_request', 'Currency differs from the payment.', 'amount.currency');
      if (Number(amount.value) > Number(payment.amount.value)) {
        return error(400, 'invalid_request', 'The amount is more than was authorized.', 'amount.value');
      }
      captured = amount;
    }
    Object.assign(payment, {
      status: 'succeeded',
      paid: true,
      refundable: true,
      amount: captured,
      captured_at: this.now().toISOString(),
    });
    delete payment.expires_at;
    this.intoDeal(payment);
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

  private createDeal(body: Record<string, unknown>): Answer {
    if (body.type !== 'safe_deal') return error(400, 'invalid_request', 'type must be safe_deal.', 'type');
    if (body.fee_moment !== 'payment_succeeded' && body.fee_moment !== 'deal_closed') {
      return error(400, 'invalid_request', 'fee_moment must be payment_succeeded or deal_closed.', 'fee_moment');
    }
    const description = body.description;
    if (description !== undefined && (typeof description !== 'string' || [...description].length > 128)) {
      return error(400, 'invalid_request', 'description must be a string of at most 128 characters.', 'description');
    }
    const metadata = body.metadata ?? {};
    if (!isMetadata(metadata)) {
      return error(
        400,
        'invalid_request',
        'metadata: at most 16 string values, keys up to 32 and values up to 512 characters.',
        'metadata',
      );
    }
    const now = this.now();
    const deal: DoubleDeal = {
      id: `dl-${randomUUID()}`,
      type: 'safe_deal',
      fee_moment: body.fee_moment,
      ...(description ? { description } : {}),
      balance: { value: '0.00', currency: 'RUB' },
      payout_balance: { value: '0.00', currency: 'RUB' },
      status: 'opened',
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + DEAL_LIFETIME_DAYS * 24 * 3600 * 1000).toISOString(),
      metadata,
      test: true,
    };
    this.dealsById.set(deal.id, deal);
    return { status: 200, body: structuredClone(deal) };
  }

  /** A deal's payment succeeded: its money is in the deal (the fee too, unless it leaves at payment). */
  private intoDeal(payment: DoublePayment): void {
    const deal = payment.deal ? this.dealsById.get(payment.deal.id) : undefined;
    if (!deal) return;
    const sellerPart = sumOf(payment.deal!.settlements);
    const inDeal = deal.fee_moment === 'deal_closed' ? kopecks(payment.amount.value) : sellerPart;
    deal.balance.currency = payment.amount.currency;
    deal.payout_balance.currency = payment.amount.currency;
    this.adjust(deal, inDeal, sellerPart);
  }

  private createPayout(body: Record<string, unknown>, key: string): Answer {
    const amount = parseMoney(body.amount);
    if ('status' in amount) return amount;
    const target = this.payoutTarget(body);
    if ('status' in target) return target;
    const description = body.description;
    if (description !== undefined && (typeof description !== 'string' || [...description].length > 128)) {
      return error(400, 'invalid_request', 'description must be a string of at most 128 characters.', 'description');
    }
    const metadata = body.metadata ?? {};
    if (!isMetadata(metadata)) {
      return error(
        400,
        'invalid_request',
        'metadata: at most 16 string values, keys up to 32 and values up to 512 characters.',
        'metadata',
      );
    }
    if (!isObject(body.deal) || typeof body.deal.id !== 'string') {
      return error(400, 'invalid_request', 'This shop pays out in safe deals only: deal.id is required.', 'deal.id');
    }
    const deal = this.dealsById.get(body.deal.id);
    if (!deal) return error(400, 'invalid_request', `There is no deal ${body.deal.id}.`, 'deal.id');
    if (deal.status !== 'opened') return error(400, 'invalid_request', `Deal ${deal.id} is closed.`, 'deal.id');
    if (amount.currency !== deal.payout_balance.currency)
      return error(400, 'invalid_request', 'Currency differs from the deal.', 'amount.currency');
    const value = kopecks(amount.value);
    if (value > kopecks(deal.payout_balance.value)) {
      return error(
        400,
        'invalid_request',
        `The payout is more than the deal's payout_balance of ${deal.payout_balance.value}.`,
        'amount.value',
      );
    }
    const payout: DoublePayout = {
      id: `po-${randomUUID()}`,
      amount,
      status: this.payoutsPending ? 'pending' : 'succeeded',
      payout_destination: target.destination,
      ...(description ? { description } : {}),
      created_at: this.now().toISOString(),
      deal: { id: deal.id },
      metadata,
      test: true,
    };
    const declined = this.limitExceeded(target.key, value) ?? this.declines.shift();
    if (declined) {
      payout.status = 'canceled';
      payout.cancellation_details = {
        party: declined.endsWith('limit_exceeded') ? 'yoo_money' : 'payout_network',
        reason: declined,
      };
    } else {
      this.adjust(deal, -value, -value);
    }
    this.payouts.set(payout.id, payout);
    this.payoutKeys.set(payout.id, key);
    this.payoutTargets.set(payout.id, target.key);
    this.closeWhenDone(deal);
    return { status: 200, body: structuredClone(payout) };
  }

  /** Where a payout goes: a card synonym (payout_token) or a YooMoney wallet; the key the limits are counted by. */
  private payoutTarget(
    body: Record<string, unknown>,
  ): { key: string; destination: DoublePayout['payout_destination'] } | Answer {
    const data = body.payout_destination_data;
    if (typeof body.payout_token === 'string' && data === undefined) {
      if (body.payout_token.length === 0)
        return error(400, 'invalid_request', 'payout_token is empty.', 'payout_token');
      const digest = createHash('sha256').update(body.payout_token).digest();
      const last4 = String(digest.readUInt16BE(0) % 10_000).padStart(4, '0');
      return {
        key: `card:${body.payout_token}`,
        destination: {
          type: 'bank_card',
          card: { first6: '555555', last4, card_type: 'MasterCard', issuer_country: 'RU' },
        },
      };
    }
    if (body.payout_token === undefined && isObject(data) && data.type === 'yoo_money') {
      if (typeof data.account_number !== 'string' || !/^\d{11,33}$/.test(data.account_number)) {
        return error(
          400,
          'invalid_request',
          'account_number must be a YooMoney wallet number.',
          'payout_destination_data.account_number',
        );
      }
      return {
        key: `wallet:${data.account_number}`,
        destination: { type: 'yoo_money', account_number: data.account_number },
      };
    }
    return error(
      400,
      'invalid_request',
      'Give either payout_token (a card) or payout_destination_data of type yoo_money.',
      'payout_destination_data',
    );
  }

  /** YooKassa's payout limits, as the reason of the cancelled payout, or undefined when the payout fits. */
  private limitExceeded(target: string, value: bigint): string | undefined {
    const now = this.now();
    const day = moscow(now).slice(0, 10);
    const month = day.slice(0, 7);
    const earlier = [...this.payouts.values()].filter(
      (payout) => payout.status !== 'canceled' && this.payoutTargets.get(payout.id) === target,
    );
    const thisMonth = earlier.filter((payout) => moscow(new Date(payout.created_at)).startsWith(month));
    const monthSum = sumOf(thisMonth.map((payout) => ({ type: 'payout' as const, amount: payout.amount })));
    if (target.startsWith('wallet:')) {
      return monthSum + value > WALLET_PAYOUTS_PER_MONTH ? 'periodic_limit_exceeded' : undefined;
    }
    if (value < CARD_PAYOUT_MIN || value > CARD_PAYOUT_MAX) return 'one_time_limit_exceeded';
    const today = thisMonth.filter((payout) => moscow(new Date(payout.created_at)).startsWith(day));
    if (today.length >= CARD_PAYOUTS_PER_DAY || monthSum + value > CARD_PAYOUTS_PER_MONTH)
      return 'periodic_limit_exceeded';
    return undefined;
  }

  private createRefund(body: Record<string, unknown>): Answer {
    if (typeof body.payment_id !== 'string')
      return error(400, 'invalid_request', 'payment_id is required.', 'payment_id');
    const payment = this.payments.get(body.payment_id);
    if (!payment) return unknownPayment();
    const amount = parseMoney(body.amount);
    if ('status' in amount) return amount;
    if (amount.currency !== payment.amount.currency)
      return error(400, 'invalid_request', 'Currency differs from the payment.', 'amount.currency');
    if (payment.status !== 'succeeded') {
      return error(
        400,
        'invalid_request',
        `Only a succeeded payment can be refunded; this one is ${payment.status}.`,
        'payment_id',
      );
    }
    const description = body.description;
    if (description !== undefined && (typeof description !== 'string' || [...description].length > 250)) {
      return error(400, 'invalid_request', 'description must be a string of at most 250 characters.', 'description');
    }
    const metadata = body.metadata;
    if (metadata !== undefined && !isMetadata(metadata)) {
      return error(
        400,
        'invalid_request',
        'metadata: at most 16 string values, keys up to 32 and values up to 512 characters.',
        'metadata',
      );
    }
    const value = kopecks(amount.value);
    const refunded = kopecks(payment.refunded_amount?.value ?? '0');
    if (value > kopecks(payment.amount.value) - refunded) {
      return error(400, 'invalid_request', 'The refund is more than is left of the payment to refund.', 'amount.value');
    }
    let deal: DoubleRefund['deal'];
    if (payment.deal) {
      const checked = this.refundInDeal(payment, body.deal, value);
      if ('status' in checked) return checked;
      deal = checked;
    } else if (body.deal !== undefined) {
      return error(400, 'invalid_request', 'The payment is not in a deal.', 'deal');
    }
    const refund: DoubleRefund = {
      id: randomUUID(),
      payment_id: payment.id,
      status: 'succeeded',
      created_at: this.now().toISOString(),
      amount,
      ...(description ? { description } : {}),
      ...(metadata ? { metadata } : {}),
      ...(deal ? { deal } : {}),
    };
    this.refunds.set(refund.id, refund);
    payment.refunded_amount = { value: rubles(refunded + value), currency: payment.amount.currency };
    payment.refundable = refunded + value < kopecks(payment.amount.value);
    if (deal) {
      const inDeal = this.dealsById.get(deal.id)!;
      this.adjust(inDeal, -value, -sumOf(deal.refund_settlements));
      this.closeWhenDone(inDeal);
    }
    return { status: 200, body: structuredClone(refund) };
  }

  /** A refund inside a safe deal: before any payout, its settlements out of the payout balance, the fee by the fee moment. */
  private refundInDeal(
    payment: DoublePayment,
    value: unknown,
    amount: bigint,
  ): NonNullable<DoubleRefund['deal']> | Answer {
    const deal = this.dealsById.get(payment.deal!.id)!;
    if (!isObject(value))
      return error(400, 'invalid_request', 'A refund of a payment in a deal needs deal.refund_settlements.', 'deal');
    const settlements = parseSettlements(value.refund_settlements, 'deal.refund_settlements', payment.amount.currency);
    if ('status' in settlements) return settlements;
    if (deal.status !== 'opened') return error(400, 'invalid_request', `Deal ${deal.id} is closed.`, 'deal');
    const paidOut = [...this.payouts.values()].some(
      (payout) => payout.deal?.id === deal.id && payout.status !== 'canceled',
    );
    if (paidOut)
      return error(
        400,
        'invalid_request',
        `Deal ${deal.id} has a payout; a refund in a deal is possible only before a payout.`,
        'deal',
      );
    const fromSeller = sumOf(settlements);
    if (fromSeller > amount)
      return error(400, 'invalid_request', 'refund_settlements are more than the refund.', 'deal.refund_settlements');
    if (fromSeller > kopecks(deal.payout_balance.value)) {
      return error(
        400,
        'invalid_request',
        `refund_settlements are more than the deal's payout_balance of ${deal.payout_balance.value}.`,
        'deal.refund_settlements',
      );
    }
    const fromFee = amount - fromSeller;
    if (deal.fee_moment === 'payment_succeeded' && fromFee > 0n) {
      return error(
        400,
        'invalid_request',
        'With fee_moment payment_succeeded only the seller’s part is refunded: amount must equal refund_settlements.',
        'amount.value',
      );
    }
    if (fromFee > kopecks(deal.balance.value) - kopecks(deal.payout_balance.value)) {
      return error(400, 'invalid_request', 'The refund is more than the deal holds.', 'amount.value');
    }
    return { id: deal.id, refund_settlements: settlements };
  }

  /** GET /v3/refunds: the newest first, filtered by payment_id, `limit` (1–100) a page, `cursor` to the next. */
  private listRefunds(query: URLSearchParams): Answer {
    const limit = Number(query.get('limit') ?? '10');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return error(400, 'invalid_request', 'limit must be 1 to 100.', 'limit');
    const start = Number(query.get('cursor') ?? '0');
    if (!Number.isInteger(start) || start < 0) return error(400, 'invalid_request', 'Unknown cursor.', 'cursor');
    const paymentId = query.get('payment_id');
    const all = [...this.refunds.values()].filter((refund) => !paymentId || refund.payment_id === paymentId).reverse();
    const items = all.slice(start, start + limit);
    return {
      status: 200,
      body: { type: 'list', items, ...(start + limit < all.length ? { next_cursor: String(start + limit) } : {}) },
    };
  }

  /** Moves money in or out of a deal's balance and payout balance (minor units, negative for out). */
  private adjust(deal: DoubleDeal, balance: bigint, payoutBalance: bigint): void {
    deal.balance.value = rubles(kopecks(deal.balance.value) + balance);
    deal.payout_balance.value = rubles(kopecks(deal.payout_balance.value) + payoutBalance);
  }

  /**
   * A deal closes by itself once its payment was paid in and nothing is left to pay out, with no payout pending: after
   * the last payout (the fee left in it goes to the shop), or after a refund of everything.
   */
  private closeWhenDone(deal: DoubleDeal): void {
    if (deal.status !== 'opened' || kopecks(deal.payout_balance.value) > 0n) return;
    const paidIn = [...this.payments.values()].some(
      (payment) => payment.deal?.id === deal.id && payment.status === 'succeeded',
    );
    const pending = [...this.payouts.values()].some(
      (payout) => payout.deal?.id === deal.id && payout.status === 'pending',
    );
    if (!paidIn || pending) return;
    deal.status = 'closed';
    deal.balance.value = '0.00';
  }

  /** The payment page confirmation_url points at: a button that pays, then back to return_url. */
  private async checkout(method: string, path: string, res: http.ServerResponse): Promise<Answer | undefined> {
    const match = /^\/checkout\/payments\/([^/]+)(\/pay)?$/.exec(path);
    const payment = match ? this.payments.get(match[1]) : undefined;
    if (!match || !payment) return error(404, 'not_found', 'No such payment page.');
    if (method === 'GET' && !match[2]) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>YooKassa double</title><form method="post" action="${path}/pay">` +
          `<button>Pay ${payment.amount.value} ${payment.amount.currency}</button></form>`,
      );
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
    return (
      scheme === 'Basic' && Buffer.from(encoded ?? '', 'base64').toString('utf8') === `${this.shopId}:${this.secretKey}`
    );
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

function notAllowed(method: string): Answer {
  return error(405, 'invalid_request', `${method} is not allowed here.`);
}

function unknownPayment(): Answer {
  return error(404, 'not_found', "Incorrect payment_id. Payment doesn't exist or access denied.", 'payment_id');
}

function wrongStatus(payment: DoublePayment, action: string): Answer {
  return error(
    400,
    'invalid_request',
    `Cannot ${action} a payment in status ${payment.status}; it must be waiting_for_capture.`,
    'payment_id',
  );
}

/** YooKassa's money is `{value: "100.00", currency: "RUB"}`: the value a decimal string, not a number. */
function parseMoney(value: unknown, parameter = 'amount'): Money | Answer {
  if (!isObject(value) || typeof value.value !== 'string' || !MONEY.test(value.value) || Number(value.value) <= 0) {
    return error(
      400,
      'invalid_request',
      'The amount must be a positive decimal string such as "100.00".',
      `${parameter}.value`,
    );
  }
  if (typeof value.currency !== 'string' || !/^[A-Z]{3}$/.test(value.currency)) {
    return error(400, 'invalid_request', 'The currency must be an ISO 4217 code.', `${parameter}.currency`);
  }
  return { value: value.value, currency: value.currency };
}

/** `[{type: "payout", amount}]`, one or more, in the payment's currency. */
function parseSettlements(value: unknown, parameter: string, currency: string): Settlement[] | Answer {
  if (!Array.isArray(value) || value.length === 0)
    return error(400, 'invalid_request', `${parameter} must list the settlements.`, parameter);
  const settlements: Settlement[] = [];
  for (const item of value) {
    if (!isObject(item) || item.type !== 'payout')
      return error(400, 'invalid_request', 'A settlement is of type payout.', `${parameter}.type`);
    const amount = parseMoney(item.amount, `${parameter}.amount`);
    if ('status' in amount) return amount;
    if (amount.currency !== currency)
      return error(
        400,
        'invalid_request',
        'A settlement is in the payment’s currency.',
        `${parameter}.amount.currency`,
      );
    settlements.push({ type: 'payout', amount });
  }
  return settlements;
}

function sumOf(settlements: readonly Settlement[]): bigint {
  return settlements.reduce((total, settlement) => total + kopecks(settlement.amount.value), 0n);
}

/** Exact minor units of a YooKassa decimal ("1234.5" or "1234.50"). */
function kopecks(value: string): bigint {
  const [units, decimals = ''] = value.split('.');
  return BigInt(units) * 100n + BigInt(decimals.padEnd(2, '0') || '0');
}

function rubles(minor: bigint): string {
  return `${minor / 100n}.${(minor % 100n).toString().padStart(2, '0')}`;
}

/** The date and time in Moscow as ISO text, for counting a day's and a month's payouts. */
function moscow(date: Date): string {
  return new Date(date.getTime() + MOSCOW_OFFSET_MS).toISOString();
}

function isMetadata(value: unknown): value is Record<string, string> {
  if (!isObject(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length <= 16 &&
    entries.every(([key, item]) => key.length <= 32 && typeof item === 'string' && item.length <= 512)
  );
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
