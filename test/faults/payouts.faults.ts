// The faults suite's money scenario: a live marketplace on YooKassa Safe Deal against the YooKassa double, the
// production topology around it (src/dev/cluster.ts). Deals go through documents, the buyer's approval, payment into a
// safe deal (the double's buyer pays on its page), then most are released by the buyer and paid out to the seller's
// card, some are refunded, some refunded in part and then released, two are large enough to be split into payouts;
// meanwhile the double fails calls with 500 and 429, applies POSTs and then loses their answer (crashAfterApplying,
// aimed at payouts), holds payouts pending and settles or cancels them later, declines a few; and the workers are
// SIGKILLed while payout answers are on their way back to them. Every deal must end paid or refunded, with no payout
// made twice and none lost, and the ledger must equal the double's money to the kopeck.
//
// Between the service and the double sits a line of this file's own (AcquirerLine): it forwards every call, counts what
// the double answered, and holds each payout's answer for a moment after the double applied it, so that a worker can
// be killed while a payout it asked for exists at the acquirer but its answer has not reached it: the case that would
// pay twice if the retry were not keyed by the payout's id.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';
import { toMinor } from '../../src/money/amount.ts';
import type { ServiceProcess } from '../../src/dev/cluster.ts';
import { Client, sleep, startFaultCluster, until, type FaultCluster } from './harness.ts';

const DEALS = Number(process.env.FAULTS_DEALS ?? 150);
/** Requests to the service at once, whatever the number of deals being driven. */
const REQUESTS_AT_ONCE = 12;
/** Sellers of the ordinary deals: a card takes at most 20 payouts a day at YooKassa (the double counts them). */
const SELLERS = 10;
const SHOP_ID = '778150';
const SECRET_KEY = 'faults_safe_deal_secret';
/** How long the line holds a payout's answer after the double applied it: the window a worker's death falls into. */
const PAYOUT_ANSWER_DELAY_MS = 1_500;
/** A share of the payouts' first attempts that the double applies and then answers with a dropped connection or a 500. */
const PAYOUT_CRASH_SHARE = 0.25;
/**
 * Pending payouts the double settles at once, before their answer reaches the service: YooKassa's notification then
 * names a payout the service has not recorded yet, which it answers 200 and ignores, so the deal learns the outcome
 * only when it asks the acquirer itself, a minute later. A few: that minute is added to the run.
 */
const SETTLED_BEFORE_KNOWN = 3;
/** A share of notifications YooKassa sends twice. */
const TWICE_SHARE = 0.15;
/**
 * The double's failures are injected per call, as the line forwards it: a share of the calls fail before anything is
 * done (500 or 429, now and then twice in a row), a share of the other POSTs are applied and lose their answer. Queued
 * on a clock instead, they would pile up whenever few calls come (the workers down, the last deals) and then fail
 * every retry of those few. Payouts' calls (retried for as long as it takes) fail more often than the escrow's and the
 * refunds' (five attempts each, then the request is answered 503 acquirer_unavailable and made again).
 */
const PAYOUT_FAILURE_SHARE = 0.15;
const OTHER_FAILURE_SHARE = 0.04;
const OTHER_CRASH_SHARE = 0.03;
const FEE_SCHEDULE = { percent: 7.5, fixed: 10 };
/** Each deal's end is waited for at most this long after the drive starts (the drive takes 2 to 3 minutes). */
const DEAL_DEADLINE_MS = 360_000;
/** Two deals above YooKassa's 150,000 per payout: each is paid out in two. */
const BIG_AMOUNTS = new Map([
  [17, 200_000.55],
  [88, 180_123.45],
]);

/**
 * A small seeded generator (mulberry32) for the amounts and the faults' choices: FAULTS_SEED draws a failing run's again
 * (the timing, and so which call takes which fault, still differs).
 */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = generator(SEED);

type Plan = 'release' | 'refund' | 'partial' | 'big';
/** What happens to each deal once the money is held. */
const planOf = (index: number): Plan =>
  BIG_AMOUNTS.has(index) ? 'big' : index % 7 === 3 ? 'refund' : index % 11 === 5 ? 'partial' : 'release';

/**
 * The service's line to the acquirer: every call forwarded to the double as it came, the double's answer passed back,
 * except that a payout's answer is held PAYOUT_ANSWER_DELAY_MS after the double applied the payout. It counts the
 * double's injected failures by what they answered, and the answers whose caller was gone (a killed worker).
 */
class AcquirerLine {
  url = '';
  /** Payout answers the double gave (the payout exists) that are being held on their way back. */
  heldPayouts = 0;
  readonly seen = {
    calls: 0,
    payoutPosts: 0,
    injected500: 0,
    injected429: 0,
    /** Applied, then answered with a 500 or a dropped connection, by whether it was a payout. */
    crashedPayouts: 0,
    crashedOthers: 0,
    /** Payouts the double made whose answer found its caller gone: a worker killed mid-payout. */
    payoutAnswersLost: 0,
    otherAnswersLost: 0,
    /** Pending payouts settled before the service had their answer, and how their notifications were answered. */
    settledBeforeKnown: [] as Array<{ payoutId: string; notified: number }>,
  };
  private readonly firstAttempts = new Set<string>();
  private readonly server = http.createServer((request, response) => void this.forward(request, response));

  constructor(private readonly yookassa: YooKassaDouble) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async forward(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const payout = request.method === 'POST' && request.url === '/v3/payouts';
    this.seen.calls++;
    let callerGone = false;
    response.on('close', () => (callerGone = !response.writableFinished));
    // What the double does to this call (another call that reaches it first may take the fault instead; the counts
    // below say what really happened).
    const payoutCall = request.url?.startsWith('/v3/payouts') ?? false;
    if (random() < (payoutCall ? PAYOUT_FAILURE_SHARE : OTHER_FAILURE_SHARE))
      this.yookassa.failNext(random() < 0.2 ? 2 : 1, random() < 0.5 ? 500 : 429);
    if (payout) {
      this.seen.payoutPosts++;
      const key = String(request.headers['idempotence-key']);
      // Aimed at payouts: the double applies this POST and loses its answer.
      if (!this.firstAttempts.has(key)) {
        this.firstAttempts.add(key);
        if (random() < PAYOUT_CRASH_SHARE) this.yookassa.crashAfterApplying(1, random() < 0.5 ? 'drop' : 500);
      }
    } else if (request.method === 'POST' && random() < OTHER_CRASH_SHARE) {
      this.yookassa.crashAfterApplying(1, random() < 0.5 ? 'drop' : 500);
    }
    const headers = { ...request.headers };
    delete headers.host;
    const upstream = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer } | undefined>(
      (resolve) => {
        const call = http.request(
          `${this.yookassa.url}${request.url}`,
          { method: request.method, headers },
          (answer) => {
            const parts: Buffer[] = [];
            answer.on('data', (part: Buffer) => parts.push(part));
            answer.on('end', () =>
              resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: Buffer.concat(parts) }),
            );
            answer.on('error', () => resolve(undefined));
          },
        );
        call.on('error', () => resolve(undefined));
        call.end(body);
      },
    );
    if (!upstream) {
      // The double applied the POST and dropped the connection: so does the line.
      if (payout) this.seen.crashedPayouts++;
      else this.seen.crashedOthers++;
      response.destroy();
      return;
    }
    const description =
      upstream.status >= 500 || upstream.status === 429
        ? String(JSON.parse(upstream.body.toString()).description ?? '')
        : '';
    if (description.startsWith('Injected failure after')) {
      if (payout) this.seen.crashedPayouts++;
      else this.seen.crashedOthers++;
    } else if (description.startsWith('Injected failure')) {
      if (upstream.status === 429) this.seen.injected429++;
      else this.seen.injected500++;
    }
    if (payout && upstream.status === 200) {
      const made = JSON.parse(upstream.body.toString()) as {
        id: string;
        status: string;
        metadata: { payout_id: string };
      };
      if (
        made.status === 'pending' &&
        this.yookassa.payouts.get(made.id)?.status === 'pending' &&
        this.seen.settledBeforeKnown.length < SETTLED_BEFORE_KNOWN
      ) {
        const early = { payoutId: made.metadata.payout_id, notified: 0 };
        this.seen.settledBeforeKnown.push(early);
        early.notified = (await this.yookassa.settlePayout(made.id, 'succeeded')).status;
        notified.set(made.id, early.notified);
      }
      this.heldPayouts++;
      await sleep(PAYOUT_ANSWER_DELAY_MS);
      this.heldPayouts--;
    }
    if (callerGone || response.destroyed) {
      if (payout && upstream.status === 200) this.seen.payoutAnswersLost++;
      else this.seen.otherAnswersLost++;
      return;
    }
    response.writeHead(upstream.status, { 'Content-Type': upstream.headers['content-type'] ?? 'application/json' });
    response.end(upstream.body);
  }
}

/** At most `size` calls at once. */
function limiter(size: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    while (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** The status the service last answered a notification of each YooKassa payment or payout with. */
const notified = new Map<string, number>();

const kopecks = (value: number | string) => toMinor(value);
const sumOf = (values: Iterable<bigint>) => [...values].reduce((total, value) => total + value, 0n);
const rubles = (minor: bigint) => `${minor / 100n}.${(minor % 100n).toString().padStart(2, '0')}`;

let yookassa: YooKassaDouble;
let line: AcquirerLine;
let cluster: FaultCluster;

beforeAll(async () => {
  yookassa = await startYooKassaDouble({ shopId: SHOP_ID, secretKey: SECRET_KEY });
  line = await new AcquirerLine(yookassa).start();
  cluster = await startFaultCluster({
    YOOKASSA_API_URL: `${line.url}/v3`,
    YOOKASSA_SHOP_ID: SHOP_ID,
    YOOKASSA_SECRET_KEY: SECRET_KEY,
  });
  // YooKassa's "URL for notifications" in the shop's settings: the service behind its proxy.
  yookassa.notificationUrl = `${cluster.baseUrl}/api/escrow/yookassa/notifications`;
});

afterAll(async () => {
  await cluster?.stop();
  await line?.close();
  await yookassa?.close();
});

interface Kill {
  what: string;
  pids: number[];
  /** Payout answers held on their way to the workers when they died. */
  payoutsInFlight: number;
  downMs: number;
}

describe('money under faults', () => {
  it(
    `${DEALS} live deals paid, released and paid out (or refunded) while the acquirer fails and the workers are SIGKILLed mid-payout: none paid twice or lost, the ledger equals the acquirer`,
    { timeout: 600_000 },
    async () => {
      const started = Date.now();
      const client = new Client(cluster.baseUrl);
      const limit = limiter(REQUESTS_AT_ONCE);
      const call = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
        limit(() => client.call(method, url, body, headers));
      const admin = cluster.admin;
      const run = randomUUID().slice(0, 8);

      // A live marketplace on YooKassa Safe Deal with a fee of 7.5 % + 10.
      const created = await call('POST', '/admin/marketplaces', { name: `faults payouts ${run}`, mode: 'live' }, admin);
      expect(created.status).toBe(201);
      const patched = await call(
        'PATCH',
        `/admin/marketplaces/${created.body.id}`,
        { provider: 'yookassa_safe_deal', fee_schedule: FEE_SCHEDULE },
        admin,
      );
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject({ mode: 'live', provider: 'yookassa_safe_deal' });
      const key = { 'X-Svc-Key': created.body.secret_key as string };

      const buyerEmail = `buyer-payouts-${run}@example.com`;
      const sellerOf = (index: number) =>
        BIG_AMOUNTS.has(index) ? `seller-big-${run}@example.com` : `seller-${index % SELLERS}-${run}@example.com`;
      const amountOf = (index: number) => BIG_AMOUNTS.get(index) ?? (50_000 + Math.floor(random() * 2_000_000)) / 100;
      const externalId = (index: number) => `payouts-${run}-${index}`;

      // Every deal made first (creation is idempotent by external_id): the parties get their invitations with them.
      const ids = await Promise.all(
        Array.from({ length: DEALS }, async (_, index) => {
          const answer = await call(
            'POST',
            '/api/mkt/deals',
            {
              external_id: externalId(index),
              buyer_email: buyerEmail,
              seller_email: sellerOf(index),
              title: `Payouts ${index}`,
              amount: amountOf(index),
            },
            key,
          );
          expect([200, 201], JSON.stringify(answer.body)).toContain(answer.status);
          return answer.body.id as string;
        }),
      );

      /** A person the deals made follows the invitation mail and sets a password: their cabinet headers. */
      const signIn = async (email: string) => {
        const token = await until(
          `the invitation mail to ${email}`,
          60_000,
          async () => {
            const mail = await call('GET', `/admin/mail?to=${encodeURIComponent(email)}`, undefined, admin);
            return mail.body.items
              .map((item: { text: string }) => item.text.match(/\/cabinet\/invite\?token=(\S+)/)?.[1])
              .find(Boolean) as string | undefined;
          },
          500,
        );
        const accepted = await call('POST', '/cabinet/invite/accept', { token, password: 'a strong password' });
        expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
        return { Authorization: `Bearer ${accepted.body.token}` };
      };
      const buyer = await signIn(buyerEmail);
      // Each seller gives the card synonym YooKassa's payout widget returned, in the cabinet.
      const sellers = [...new Set(Array.from({ length: DEALS }, (_, index) => sellerOf(index)))];
      await Promise.all(
        sellers.map(async (email, n) => {
          const seller = await signIn(email);
          const given = await call(
            'PUT',
            '/cabinet/payout-destination',
            { type: 'bank_card', token: `syn_card_${run}_seller_${n}` },
            seller,
          );
          expect(given.status, JSON.stringify(given.body)).toBe(200);
        }),
      );
      const setUpMs = Date.now() - started;

      // ── The faults, while the deals are driven.
      const figures = {
        paymentNotificationsResent: 0,
        payoutNotificationsResent: 0,
        payoutsHeldPending: 0,
        payoutsCancelledPending: 0,
        declinesAsked: 0,
        newDestinations: 0,
        notificationsSentTwice: 0,
        keysRenewed: 0,
      };
      let driving = true;
      // Besides the failures the line injects per call: payouts settle at once, or stay pending in windows of 8 s
      // (settled or cancelled by the drivers), and the card's bank declines four of them.
      const chaos = (async () => {
        let tick = 0;
        while (driving) {
          await sleep(1_000);
          tick++;
          // Payouts settle at once, or stay pending for a while in windows of 8 s (settled or cancelled by the drivers).
          if (tick % 8 === 0) yookassa.holdPayouts((tick / 8) % 2 === 1);
          // Now and then the card's bank declines a payout: it is cancelled at once.
          if (tick % 15 === 0 && figures.declinesAsked < 4) {
            yookassa.declineNextPayout('rejected_by_payee');
            figures.declinesAsked++;
          }
        }
        yookassa.holdPayouts(false);
      })();

      const releasing = new Set<string>();
      const toRelease = Array.from({ length: DEALS }, (_, index) => planOf(index)).filter(
        (plan) => plan !== 'refund',
      ).length;
      const kills: Kill[] = [];
      /** Waits until payouts are on their way back from the double, then SIGKILLs these workers and starts them again. */
      const killMidPayout = async (what: string, workers: ServiceProcess[]) => {
        await until(
          `payout answers in flight for ${what}`,
          60_000,
          () => (line.heldPayouts >= 2 || !driving ? true : undefined),
          20,
        ).catch(() => undefined);
        const payoutsInFlight = line.heldPayouts;
        const pids = workers.map((worker) => worker.pid!);
        const downAt = Date.now();
        await Promise.all(workers.map((worker) => worker.stop('SIGKILL')));
        // One at a time, as the cluster starts them: each bundles the workflows on both cores.
        for (const worker of workers) await worker.start();
        kills.push({ what, pids, payoutsInFlight, downMs: Date.now() - downAt });
      };
      const killing = (async () => {
        await until(
          'a quarter of the releases',
          300_000,
          () => (releasing.size >= toRelease / 4 || !driving ? true : undefined),
          50,
        );
        await killMidPayout('both workers', cluster.workers);
        await until(
          '60 % of the releases',
          300_000,
          () => (releasing.size >= toRelease * 0.6 || !driving ? true : undefined),
          50,
        );
        await killMidPayout(cluster.workers[0].name, [cluster.workers[0]]);
      })();

      /**
       * A money move under an Idempotency-Key, retried as Client.call retries (a refused connection, 502, 503 after its
       * Retry-After) under the same key; except after 503 acquirer_unavailable ("nothing was changed"), which is asked
       * again under a new key: the service answers every retry under the key of a move that failed so with the same
       * 503, for as long as the deal's workflow runs.
       */
      const keyNumbers = new Map<string, number>();
      const keyed = async (
        method: string,
        url: string,
        body: unknown,
        headers: Record<string, string>,
        keyBase: string,
      ) => {
        const deadline = Date.now() + 240_000;
        for (;;) {
          const number = keyNumbers.get(keyBase) ?? 1;
          try {
            const answer = await limit(() =>
              client.once(method, url, body, { ...headers, 'Idempotency-Key': `${keyBase}-${number}` }),
            );
            if (answer.status === 503 && answer.body?.code === 'acquirer_unavailable') {
              keyNumbers.set(keyBase, number + 1);
              figures.keysRenewed++;
            } else if (answer.status !== 502 && answer.status !== 503) {
              return answer;
            }
            if (Date.now() > deadline) throw new Error(`${method} ${url}: still ${answer.status} after 240 s`);
            await sleep(
              answer.status === 503 ? Math.min(Number(answer.headers.get('retry-after') ?? 1), 5) * 1000 : 500,
            );
          } catch (error) {
            if (!(error instanceof TypeError) || Date.now() > deadline) throw error; // fetch's TypeError: no connection
            await sleep(500);
          }
        }
      };

      /** The double's payment and payout of ours, by the ids our records give them (in their metadata). */
      const doublePayment = (paymentId: string) =>
        [...yookassa.payments.values()].find((payment) => payment.metadata.payment_id === paymentId);
      /** YooKassa sends a notification again until it is answered 200; the double sends once, so the drivers resend. */
      const notifyAgain = async (
        event: 'payment.succeeded' | 'payout.succeeded' | 'payout.canceled',
        object: Parameters<YooKassaDouble['notify']>[1],
      ) => {
        if (notified.get(object.id) === 200) return;
        const sent = await yookassa.notify(event, object);
        notified.set(object.id, sent.status);
        return sent;
      };
      /** Now and then YooKassa sends the same notification twice: the second must change nothing. */
      const maybeTwice = async (
        event: 'payment.succeeded' | 'payout.succeeded' | 'payout.canceled',
        object: Parameters<YooKassaDouble['notify']>[1],
      ) => {
        if (random() >= TWICE_SHARE) return;
        await yookassa.notify(event, object);
        figures.notificationsSentTwice++;
      };
      const pendingSince = new Map<string, number>();

      /**
       * Drives one deal to its end by its state, as in the harness's driveDeal: each round reads the deal and makes the
       * next move; a move a fault interrupted may or may not have happened, and the next read says which. Money moves
       * carry an Idempotency-Key, as an integrator retrying them must.
       */
      const drive = async (index: number): Promise<void> => {
        const id = ids[index];
        const plan = planOf(index);
        const deadline = Date.now() + DEAL_DEADLINE_MS;
        /** The failed payouts the marketplace has answered with a new destination. */
        const answered = new Set<string>();
        while (Date.now() < deadline) {
          const read = await call('GET', `/api/mkt/deals/${id}`, undefined, key);
          expect(read.status, JSON.stringify(read.body)).toBe(200);
          const deal = read.body;
          const payment = deal.payments.at(-1) as { id: string; status: string } | undefined;
          if (payment?.status === 'released') releasing.add(id);
          if (deal.status === 'paid' || deal.status === 'refunded') return;
          let move: { status: number; body: any } | undefined;
          if (deal.status === 'created') {
            move = await call(
              'POST',
              `/api/mkt/deals/${id}/documents?kind=contract`,
              Buffer.from(`contract ${index}`),
              { ...key, 'Content-Type': 'text/plain' },
            );
          } else if (deal.status === 'docs') {
            move = await call('POST', `/api/mkt/deals/${id}/approval`, {}, key);
          } else if (deal.status === 'approval') {
            const pending = deal.approvals.find((approval: { status: string }) => approval.status === 'pending');
            move = await call('POST', `/cabinet/approvals/${pending.id}/approve`, {}, buyer);
          } else if (deal.status === 'approved' && !payment) {
            move = await keyed('POST', `/api/mkt/deals/${id}/escrow`, {}, key, `escrow-${id}`);
          } else if (deal.status === 'approved' && payment?.status === 'pending') {
            // The buyer pays on the acquirer's page; its notification tells the service, which re-reads the payment.
            const atDouble = doublePayment(payment.id);
            if (atDouble?.status === 'pending') {
              notified.set(atDouble.id, (await yookassa.pay(atDouble.id)).status);
              await maybeTwice('payment.succeeded', atDouble);
            } else if (atDouble?.status === 'succeeded' && (await notifyAgain('payment.succeeded', atDouble)))
              figures.paymentNotificationsResent++;
            await sleep(300);
          } else if (deal.status === 'escrow_hold' && payment?.status === 'hold') {
            if (plan === 'partial' && deal.refunded_amount === 0) {
              const part = Math.round(deal.seller_amount * 20) / 100; // a fifth of the seller's part, to the kopeck
              move = await keyed(
                'POST',
                `/api/mkt/deals/${id}/escrow/partial-refund`,
                { amount: part, reason: 'One item was missing' },
                key,
                `partial-${id}`,
              );
            } else {
              const action = plan === 'refund' ? 'refund' : 'release';
              move = await keyed('POST', `/cabinet/deals/${id}/escrow/${action}`, {}, buyer, `${action}-${id}`);
              if (action === 'release' && move.status === 200) releasing.add(id);
            }
          } else if (deal.status === 'escrow_hold' && payment?.status === 'released') {
            const payout = deal.payout as { status: string; items: Array<{ id: string; status: string }> };
            const failedPayout = payout.items.filter((item) => item.status === 'failed').at(-1);
            if (payout.status === 'failed' && failedPayout && !answered.has(failedPayout.id)) {
              // The card declined, or the payout was cancelled: the marketplace gives this deal another card, once per
              // failed payout, as an integrator answering deal.payout_failed does. The deal hears of it by a signal
              // and pays out again under a new payout id; a second card given while that payout is still being
              // retried would change the retry's body under the same Idempotence-Key, which the acquirer refuses.
              answered.add(failedPayout.id);
              move = await call(
                'PUT',
                `/api/mkt/deals/${id}/payout-destination`,
                { type: 'bank_card', token: `syn_card_${run}_deal_${index}_${answered.size}` },
                key,
              );
              if (move.status === 200) figures.newDestinations++;
            } else if (payout.status === 'failed') {
              await sleep(500);
            } else {
              for (const item of payout.items.filter((candidate) => candidate.status === 'pending')) {
                const atDouble = yookassa.payoutsFor(item.id)[0];
                if (!atDouble) continue;
                if (atDouble.status === 'pending') {
                  // Held by the double: it settles a moment after our records show it pending, mostly paid, now and then cancelled.
                  const since =
                    pendingSince.get(atDouble.id) ?? pendingSince.set(atDouble.id, Date.now()).get(atDouble.id)!;
                  if (Date.now() - since < 1_000) continue;
                  const cancel = random() < 0.15;
                  figures.payoutsHeldPending++;
                  if (cancel) figures.payoutsCancelledPending++;
                  notified.set(
                    atDouble.id,
                    (await yookassa.settlePayout(atDouble.id, cancel ? 'canceled' : 'succeeded')).status,
                  );
                  await maybeTwice(cancel ? 'payout.canceled' : 'payout.succeeded', atDouble);
                } else if (
                  await notifyAgain(atDouble.status === 'succeeded' ? 'payout.succeeded' : 'payout.canceled', atDouble)
                ) {
                  figures.payoutNotificationsResent++;
                }
              }
              await sleep(500);
            }
          } else {
            throw new Error(
              `deal ${index} (${plan}) went ${deal.status} with payment ${payment?.status} and payout ${deal.payout.status}`,
            );
          }
          // 400: refused because it already happened (the next read shows it); 409: the first attempt under this
          // Idempotency-Key is still running; 500: never acceptable (the client keeps it for the assertion at the
          // end), and the deal is driven on to see what else it does.
          if (move && move.status >= 300 && move.status !== 400 && move.status !== 409 && move.status !== 500) {
            throw new Error(`${deal.status} move of deal ${index}: ${move.status} ${JSON.stringify(move.body)}`);
          }
          if (move?.status === 409 || move?.status === 500) await sleep(1_000);
        }
        throw new Error(`deal ${index} (${plan}) did not end within ${DEAL_DEADLINE_MS / 1000} s`);
      };

      const driveStarted = Date.now();
      let stuck: string[];
      try {
        // Every deal driven to its end; a deal that did not get there is asserted after the figures are printed.
        const outcomes = await Promise.allSettled(ids.map((_, index) => drive(index)));
        stuck = outcomes
          .filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
          .map((outcome) => String(outcome.reason));
      } finally {
        driving = false;
        await chaos;
        await killing;
      }
      const driveMs = Date.now() - driveStarted;

      // ── What the service says, deal by deal.
      const states = await Promise.all(
        ids.map(async (id) => (await call('GET', `/api/mkt/deals/${id}`, undefined, key)).body),
      );
      const safeDealOf = (state: any): string | undefined =>
        state.payments.length > 0 ? doublePayment(state.payments.at(-1).id)?.deal?.id : undefined;
      const doublePayouts = [...yookassa.payouts.values()];
      const doubleRefunds = [...yookassa.refunds.values()];
      const ourPayoutIds = new Set(
        states.flatMap((state) => state.payout.items.map((item: { id: string }) => item.id)),
      );
      const problems: string[] = [];
      let paid = 0;
      let refunded = 0;
      let splitPayouts = 0;
      let sellerPaidOut = 0n;
      let feesOfPaid = 0n;
      for (const [index, state] of states.entries()) {
        const plan = planOf(index);
        const expected = plan === 'refund' ? 'refunded' : 'paid';
        if (state.status !== expected) problems.push(`deal ${index} (${plan}) is ${state.status}, not ${expected}`);
        const safeDeal = safeDealOf(state);
        const atDouble = doublePayouts.filter((payout) => payout.deal?.id === safeDeal);
        // At most one payout per payout id at the double, under its key, and each one of ours.
        for (const item of state.payout.items as Array<{ id: string; amount: number; status: string }>) {
          const made = yookassa.payoutsFor(item.id);
          if (made.length > 1 || yookassa.payoutsCreatedWith(item.id) > 1)
            problems.push(`deal ${index}: payout ${item.id} made ${made.length} times at the double`);
          const expectedAtDouble = { succeeded: 'succeeded', failed: 'canceled', pending: 'pending' }[item.status];
          if (
            made[0] &&
            (made[0].status !== expectedAtDouble || kopecks(made[0].amount.value) !== kopecks(item.amount))
          ) {
            problems.push(
              `deal ${index}: payout ${item.id} is ${item.status} ${item.amount} here and ${made[0].status} ${made[0].amount.value} at the double`,
            );
          }
          if (!made[0] && item.status !== 'failed')
            problems.push(`deal ${index}: payout ${item.id} (${item.status}) is unknown to the double`);
        }
        for (const payout of atDouble) {
          if (!ourPayoutIds.has(payout.metadata.payout_id))
            problems.push(`deal ${index}: the double has payout ${payout.id} that no record of ours names`);
        }
        const paidOut = sumOf(
          atDouble.filter((payout) => payout.status === 'succeeded').map((payout) => kopecks(payout.amount.value)),
        );
        const refundedHere = sumOf(
          doubleRefunds.filter((refund) => refund.deal?.id === safeDeal).map((refund) => kopecks(refund.amount.value)),
        );
        if (state.status === 'paid') {
          paid++;
          // The seller's part: the amount less the fee, less what went back to the buyer in part.
          const owed = kopecks(state.amount) - kopecks(state.fee) - kopecks(state.refunded_amount);
          if (paidOut !== owed || kopecks(state.released_amount) !== owed)
            problems.push(
              `deal ${index}: paid out ${rubles(paidOut)} at the double, released ${state.released_amount}, owed ${rubles(owed)}`,
            );
          if (refundedHere !== kopecks(state.refunded_amount))
            problems.push(
              `deal ${index}: refunded ${rubles(refundedHere)} at the double, ${state.refunded_amount} here`,
            );
          sellerPaidOut += paidOut;
          feesOfPaid += kopecks(state.fee);
          if (atDouble.filter((payout) => payout.status === 'succeeded').length > 1) splitPayouts++;
        } else if (state.status === 'refunded') {
          refunded++;
          if (paidOut !== 0n) problems.push(`deal ${index}: refunded, yet ${rubles(paidOut)} was paid out`);
          if (refundedHere !== kopecks(state.amount))
            problems.push(`deal ${index}: refunded ${rubles(refundedHere)} of ${state.amount} at the double`);
        }
        const closed = yookassa.deals().find((candidate) => candidate.id === safeDeal);
        if (closed?.status !== 'closed' || closed.balance !== '0.00' || closed.payoutBalance !== '0.00')
          problems.push(`deal ${index}: the safe deal is ${JSON.stringify(closed)}`);
      }

      // ── The ledger against the double.
      const balance = (await call('GET', '/api/mkt/balance', undefined, key)).body;
      const doublePaidOut = sumOf(
        doublePayouts.filter((payout) => payout.status === 'succeeded').map((payout) => kopecks(payout.amount.value)),
      );
      const doubleRefunded = sumOf(doubleRefunds.map((refund) => kopecks(refund.amount.value)));
      const paidIn = sumOf(
        [...yookassa.payments.values()]
          .filter((payment) => payment.status === 'succeeded')
          .map((payment) => kopecks(payment.amount.value)),
      );
      const postings: Array<{
        id: string;
        kind: string;
        deal_id: string;
        entries: Array<{ account: string; amount: number; currency: string }>;
      }> = [];
      for (let after: string | undefined; ;) {
        const page = await call(
          'GET',
          `/api/mkt/ledger?limit=1000${after ? `&starting_after=${after}` : ''}`,
          undefined,
          key,
        );
        expect(page.status).toBe(200);
        postings.push(...page.body.items);
        if (!page.body.has_more) break;
        after = page.body.items.at(-1).id;
      }
      const unbalanced = postings
        .filter((posting) => sumOf(posting.entries.map((entry) => kopecks(entry.amount))) !== 0n)
        .map((posting) => posting.id);
      const payoutsSentInLedger = postings.filter((posting) =>
        posting.entries.some((entry) => entry.account === 'seller_paid_out' && entry.amount > 0),
      ).length;

      // ── What the marketplace was told: one deal.payout_sent per succeeded payout, one deal.payout_failed per failed one.
      const told = new Map<string, string[]>();
      for (const type of ['deal.payout_sent', 'deal.payout_failed']) {
        for (let after: string | undefined; ;) {
          const page = await call(
            'GET',
            `/api/mkt/events?type=${type}&limit=100${after ? `&starting_after=${after}` : ''}`,
            undefined,
            key,
          );
          expect(page.status).toBe(200);
          for (const item of page.body.items) told.set(type, [...(told.get(type) ?? []), item.body.data.payout_id]);
          if (!page.body.has_more) break;
          after = page.body.items.at(-1).event_id;
        }
      }
      const ourItems = states.flatMap((state) => state.payout.items as Array<{ id: string; status: string }>);
      const succeededIds = ourItems
        .filter((item) => item.status === 'succeeded')
        .map((item) => item.id)
        .sort();
      const failedIds = ourItems
        .filter((item) => item.status === 'failed')
        .map((item) => item.id)
        .sort();

      // ── Retries the acquirer saw: a POST under a key it had seen already.
      const keys = new Map<string, number>();
      for (const request of yookassa.requests.filter((candidate) => candidate.method === 'POST')) {
        const used = `${request.path} ${request.headers['idempotence-key']}`;
        keys.set(used, (keys.get(used) ?? 0) + 1);
      }
      const repeats = (prefix: string) =>
        [...keys].filter(([used]) => used.startsWith(prefix)).reduce((total, [, count]) => total + count - 1, 0);
      const stopped = [...cluster.apis, ...cluster.workers, cluster.data]
        .filter((process) => !process.running)
        .map((process) => process.name);

      console.log(
        [
          `── money: live safe deals, payouts under faults (seed ${SEED})`,
          `   deals ${DEALS}: paid ${paid} (${splitPayouts} paid out in two payouts), refunded ${refunded}; partly refunded then paid ${states.filter((state) => state.status === 'paid' && state.refunded_amount > 0).length}`,
          `   payouts at the double ${doublePayouts.length}: succeeded ${doublePayouts.filter((payout) => payout.status === 'succeeded').length}, cancelled ${doublePayouts.filter((payout) => payout.status === 'canceled').length} ` +
            `(declined at once ${doublePayouts.filter((payout) => payout.cancellation_details?.reason === 'rejected_by_payee').length}, held pending and settled ${figures.payoutsHeldPending} of which cancelled ${figures.payoutsCancelledPending}); new destinations given ${figures.newDestinations}`,
          `   acquirer calls ${line.seen.calls} (payout POSTs ${line.seen.payoutPosts}): injected 500 ×${line.seen.injected500}, 429 ×${line.seen.injected429}, applied then answer lost: payouts ×${line.seen.crashedPayouts}, other POSTs ×${line.seen.crashedOthers}`,
          `   retries seen at the acquirer (POSTs under a key seen before): payouts ${repeats('/v3/payouts ')}, payments ${repeats('/v3/payments ')}, deals ${repeats('/v3/deals ')}, refunds ${repeats('/v3/refunds ')}`,
          `   money moves asked again under a new Idempotency-Key after 503 acquirer_unavailable: ${figures.keysRenewed}`,
          `   notifications resent after a non-200: payments ${figures.paymentNotificationsResent}, payouts ${figures.payoutNotificationsResent}; sent twice ${figures.notificationsSentTwice}; ` +
            `payouts settled before the service knew them ${line.seen.settledBeforeKnown.length} (their notifications answered ${line.seen.settledBeforeKnown.map((early) => early.notified).join(', ')})`,
          `   kills: ${kills.map((kill) => `${kill.what} (pids ${kill.pids.join(', ')}) with ${kill.payoutsInFlight} payout answers in flight, down ${(kill.downMs / 1000).toFixed(1)} s`).join('; ')}; payout answers lost to the kills ${line.seen.payoutAnswersLost}, other answers ${line.seen.otherAnswersLost}`,
          `   ledger: held ${balance.items[0]?.held}, payable ${balance.items[0]?.payable}, paid out ${balance.items[0]?.paid_out} (double ${rubles(doublePaidOut)}), refunded ${balance.items[0]?.refunded} (double ${rubles(doubleRefunded)}), fees ${balance.items[0]?.fees}; postings ${postings.length}`,
          `   client saw: ${client.summary()}`,
          ...(stuck.length > 0 ? [`   deals that did not end: ${stuck.join('; ')}`] : []),
          `   time: set-up ${(setUpMs / 1000).toFixed(0)} s, drive ${(driveMs / 1000).toFixed(0)} s, all ${((Date.now() - started) / 1000).toFixed(0)} s`,
        ].join('\n'),
      );

      expect(stuck).toEqual([]);
      expect(problems).toEqual([]);
      expect(paid + refunded).toBe(DEALS);
      // The ledger equals the double to the kopeck, and nothing is left held or owed.
      expect(balance.items).toHaveLength(1);
      const [ledger] = balance.items;
      expect({
        currency: ledger.currency,
        held: kopecks(ledger.held),
        payable: kopecks(ledger.payable),
        paid_out: kopecks(ledger.paid_out),
        refunded: kopecks(ledger.refunded),
        fees: kopecks(ledger.fees),
      }).toEqual({
        currency: 'RUB',
        held: 0n,
        payable: 0n,
        paid_out: doublePaidOut,
        refunded: doubleRefunded,
        fees: feesOfPaid,
      });
      expect(doublePaidOut).toBe(sellerPaidOut);
      expect(doublePaidOut + doubleRefunded + feesOfPaid).toBe(paidIn);
      expect(unbalanced).toEqual([]);
      expect(payoutsSentInLedger).toBe(succeededIds.length);
      expect((told.get('deal.payout_sent') ?? []).sort()).toEqual(succeededIds);
      expect((told.get('deal.payout_failed') ?? []).sort()).toEqual(failedIds);
      // The faults happened: failures, payouts applied whose answer was lost, retries of them, and kills that caught
      // payouts on their way back.
      expect(line.seen.injected500 + line.seen.injected429).toBeGreaterThan(0);
      expect(line.seen.crashedPayouts).toBeGreaterThan(0);
      expect(repeats('/v3/payouts ')).toBeGreaterThan(0);
      expect(kills).toHaveLength(2);
      expect(line.seen.payoutAnswersLost).toBeGreaterThan(0);
      expect(failedIds.length).toBeGreaterThan(0);
      // Payouts settled before the service knew them: their news came from the deal asking, and each succeeded once.
      expect(line.seen.settledBeforeKnown.length).toBeGreaterThan(0);
      for (const early of line.seen.settledBeforeKnown)
        expect(ourItems.find((item) => item.id === early.payoutId)?.status).toBe('succeeded');
      expect(client.unexpected5xx()).toEqual([]);
      expect(stopped, 'processes of ours that stopped (FAULTS_KEEP_DATA=1 keeps their logs)').toEqual([]);
    },
  );
});
