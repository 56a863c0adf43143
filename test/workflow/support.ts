// The workflow layer's harness: the real deal workflow on Temporal's time-skipping test server (the Java build that
// src/dev/temporal-test-server.ts resolves once into ~/.cache/svc), with activities that are fakes held in memory by
// the test instead of PostgreSQL, the acquirer and the marketplaces' receivers. Days pass in the server's clock: a
// test moves it with env.sleep(), or lets it run to the next timer by awaiting a workflow's result.
//
// Webhooks leave through the outbox (docs/decisions/0026-webhooks-leave-through-an-outbox.md): a delivery the records
// write is the outbox's, not the workflow's. The world keeps an outbox of its own (FakeWorld.outbox) so that the runs
// that still wait for deliveries (a run handed pendingDeliveries by one from before the outbox, an administrator's
// replay started then) meet the real deliverWebhook activity over it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  Worker,
  type LogEntry,
  type WorkflowBundle,
} from '@temporalio/worker';
import type { Activities } from '../../activities/index.ts';
import { createWebhookActivities } from '../../activities/webhooks/delivery.ts';
import type { ChangeEvent, DealChange, DealRecords } from '../../activities/deals/records.ts';
import type { SellerPayoutResult } from '../../activities/deals/payouts.ts';
import { resolveTemporalTestServer } from '../../src/dev/temporal-test-server.ts';
import {
  dealStatus,
  dealWorkflowId,
  type DealSnapshot,
  type DealStatus,
  type EscrowProviderName,
  type PaymentRecord,
} from '../../src/deals/model.ts';
import { dealSearchAttributes } from '../../src/deals/search-attributes.ts';
import type { Db } from '../../src/db.ts';
import type { CreatedPayment, ProviderPayout } from '../../src/escrow/provider.ts';
import type { Services } from '../../src/services.ts';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes.ts';
import { retryDelayMs } from '../../src/webhooks/delivery.ts';
import { GIVE_UP_SECONDS } from '../../src/webhooks/outbox.ts';
import { WORKFLOWS_PATH } from '../../src/worker.ts';
import type { DealSettings, DealWorkflowInput } from '../../workflows/deals/deal-messages.ts';
import type { dealWorkflow } from '../../workflows/deals/deal.ts';
import { PATCH_LEVEL } from '../../workflows/deals/patches.ts';

// What a test polls for (an activity called, a run continued) takes real time, which a busy machine stretches: the first
// workflow task of a file loads the bundle into the worker, beyond expect.poll's default second.
vi.setConfig({ expect: { poll: { timeout: 20_000, interval: 20 } } });

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The service's defaults (src/config.ts): refund by policy, 12 hours before the lapse, a history of 10 000 events. */
export const SETTINGS: DealSettings = { holdPolicy: 'refund', holdMarginSeconds: 12 * 3600, historyLimit: 10_000 };

/**
 * What the workflows and the SDK logged at WARN and above: a test reads what it expects (a payout re-read that failed).
 * Kept out of the output, where the timers' deliberate failures would read as trouble; TEST_LOG_LEVEL prints them too.
 */
export const logged: LogEntry[] = [];
const quiet = new DefaultLogger('WARN', (entry) => {
  logged.push(entry);
  if (process.env.TEST_LOG_LEVEL) console.error(entry.level, entry.message, entry.meta ?? '');
});

/** The SDK's runtime with the logger above, once per process (before any worker or replay). */
export function installQuietRuntime(): void {
  try {
    Runtime.install({
      logger: quiet,
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // Installed already in this process: its logger stays.
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// The workflow bundle, once for the layer

/** Everything the bundle is made of that changes with the code: the workflows and the sources they import. */
function bundleInputsHash(): string {
  const root = path.resolve(import.meta.dirname, '..', '..');
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name.endsWith('.ts')) hash.update(file).update(readFileSync(file));
    }
  };
  for (const dir of ['workflows', 'src']) walk(path.join(root, dir));
  hash.update(readFileSync(path.join(root, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The deal workflow's bundle. Bundling takes seconds, and each test file runs in a process of its own: the first file
 * writes the bundle to the temporary directory under the hash of its sources while the others wait for it (a lock
 * file), and later runs read it. Any change to workflows/ or src/ is another hash, so a stale bundle is never run.
 */
export async function workflowBundle(): Promise<WorkflowBundle> {
  const dir = path.join(os.tmpdir(), 'svc-workflow-bundles');
  const file = path.join(dir, `${bundleInputsHash()}.js`);
  const lock = `${file}.lock`;
  mkdirSync(dir, { recursive: true });
  for (const deadline = Date.now() + 60_000; ;) {
    if (existsSync(file)) return { code: readFileSync(file, 'utf8') };
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch {
      // Another file is bundling: its bundle comes within seconds. A lock left by a process that died is not waited
      // for longer than a minute.
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet });
    // Written aside, then renamed: a reader finds a whole bundle or none.
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, bundle.code);
    renameSync(partial, file);
    // Bundles of code as it was an hour ago and more belong to runs that are over (each reads its bundle at its start).
    for (const name of readdirSync(dir)) {
      const other = path.join(dir, name);
      try {
        if (other !== file && statSync(other).mtimeMs < Date.now() - 3600_000) rmSync(other, { force: true });
      } catch {
        // Removed by another run meanwhile.
      }
    }
    return bundle;
  } finally {
    rmSync(lock, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// The time-skipping server

/** Starts the test server with the deal search attributes known, and the bundle beside it. */
export async function startTimeSkipping(): Promise<{ env: TestWorkflowEnvironment; bundle: WorkflowBundle }> {
  installQuietRuntime();
  const server = await resolveTemporalTestServer({
    explicit: process.env.TEMPORAL_TEST_SERVER || undefined,
    say: (message) => console.log(message),
  });
  const [env, bundle] = await Promise.all([
    TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: server } } }),
    workflowBundle(),
  ]);
  // The workflow sets the deal search attributes, and the test server refuses ones it does not know. It has no flag
  // for them and cannot list them (so not ensureSearchAttributes), but it adds them through the operator API.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [
        name,
        proto.temporal.api.enums.v1.IndexedValueType[
          `INDEXED_VALUE_TYPE_${type.toUpperCase() as Uppercase<typeof type>}`
        ],
      ]),
    ),
  });
  return { env, bundle };
}

/** A worker of the bundle with the world's activities, running until stop(); the world reads the server's clock. */
export async function runWorker(
  env: TestWorkflowEnvironment,
  bundle: WorkflowBundle,
  world: FakeWorld,
  taskQueue: string,
): Promise<{ stop: () => Promise<void> }> {
  world.clock = () => env.currentTimeMs();
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    activities: world.activities,
  });
  const running = worker.run();
  return {
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

/**
 * A file's time-skipping server and the world's worker on `taskQueue`, for all its tests: started before them (`ready`
 * gets the server and the bundle), the world forgotten after each, both stopped after the last.
 */
export function useTimeSkippingWorker(
  taskQueue: string,
  world: FakeWorld,
  ready: (started: { env: TestWorkflowEnvironment; bundle: WorkflowBundle }) => void,
): void {
  let env: TestWorkflowEnvironment | undefined;
  let stopWorker: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const started = await startTimeSkipping();
    env = started.env;
    ({ stop: stopWorker } = await runWorker(started.env, started.bundle, world, taskQueue));
    ready(started);
  });
  afterEach(() => world.reset());
  afterAll(async () => {
    await stopWorker?.();
    await env?.teardown();
  });
}

/** Replays a run's history on the bundle: a workflow whose timers fired must take the same steps again. */
export async function expectReplays(bundle: WorkflowBundle, handle: WorkflowHandle, runId?: string): Promise<void> {
  const history = await handle.client.getHandle(handle.workflowId, runId).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: bundle, replayName: handle.workflowId }, history);
}

// ---------------------------------------------------------------------------------------------------------------------
// Deals as the records hold them

let serial = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++serial}`;

/** A deal approved by its buyer, with its offer: ready for escrow. */
export function approvedSnapshot(at: number): DealSnapshot {
  const created = new Date(at - HOUR).toISOString();
  const id = crypto.randomUUID();
  const buyer = `${unique('buyer')}@example.com`;
  return {
    deal: {
      id,
      marketplace_id: crypto.randomUUID(),
      external_id: unique('order'),
      title: 'Sofa',
      buyer_email: buyer,
      buyer_name: 'Buyer',
      seller_email: '',
      amount: 2500,
      fee: 0,
      fee_moment: 'close',
      currency: 'RUB',
      description: '',
      created_at: created,
      updated_at: created,
    },
    version: 2,
    documents: [
      {
        id: crypto.randomUUID(),
        kind: 'offer',
        name: 'offer.pdf',
        content_type: 'application/pdf',
        size: 5,
        sha256: '0'.repeat(64),
        created_at: created,
      },
    ],
    approvals: [
      {
        id: crypto.randomUUID(),
        status: 'approved',
        approver: buyer,
        comment: '',
        created_at: created,
        decided_at: created,
      },
    ],
    payments: [],
    dispute: null,
    cancellation: null,
    refunds: [],
    payouts: [],
    delivery: null,
  };
}

/** A deal whose money the acquirer holds until `holdExpiresAt` (a sandbox payment unless told). */
export function heldSnapshot(
  at: number,
  holdExpiresAt: number,
  options: { provider?: EscrowProviderName } = {},
): DealSnapshot {
  const snapshot = approvedSnapshot(at);
  const paymentId = crypto.randomUUID();
  const provider = options.provider ?? 'sandbox';
  const payment: PaymentRecord = {
    id: paymentId,
    amount: snapshot.deal.amount,
    currency: 'RUB',
    provider,
    status: 'hold',
    payment_url: null,
    provider_payment_id: `${provider}_${paymentId}`,
    hold_expires_at: new Date(holdExpiresAt).toISOString(),
    ...(provider === 'yookassa_safe_deal' ? { provider_deal_id: `deal_${paymentId}` } : {}),
    created_at: new Date(at).toISOString(),
    updated_at: new Date(at).toISOString(),
  };
  return { ...snapshot, version: 3, payments: [payment] };
}

// ---------------------------------------------------------------------------------------------------------------------
// The activities, in memory

/** Every activity the deal workflow calls (local and regular), with the real signatures. */
type DealActivityName =
  | 'recordDealChange'
  | 'provisionParties'
  | 'provisionApprover'
  | 'createEscrowPayment'
  | 'captureEscrowPayment'
  | 'cancelEscrowPayment'
  | 'prepareContract'
  | 'createSellerPayout'
  | 'getSellerPayout'
  | 'refundEscrowPart'
  | 'deliverWebhook'
  | 'markWebhookDeliveryFailed';
export type DealActivities = Pick<Activities, DealActivityName>;

/** One call of an activity: its arguments, and when it ran in the test server's clock (not ours). */
export interface ActivityCall {
  name: DealActivityName;
  args: unknown[];
  dealId?: string;
  /**
   * The server's time when the attempt ran. Read from the server itself: the test server dates a retry's
   * currentAttemptScheduledTimestampMs at the failure before it, not when the retry starts.
   */
  at: number;
  attempt: number;
}

/** An event a change recorded, with the webhook delivery it got (none for a mail-only one). */
export interface RecordedEvent extends ChangeEvent {
  status: DealStatus;
  webhook: boolean;
}

/**
 * What a webhook receiver answers one attempt of the outbox: delivered, 410 Gone, or a failure the outbox tries again
 * after `retryInMs` (its own backoff from 30 s when none: retryDelayMs).
 */
export type WebhookAnswer = 'delivered' | 'gone' | { fail: string; retryInMs?: number };

/** The outbox's statuses of a delivery (webhook_deliveries.status). */
export type OutboxStatus = 'pending' | 'retrying' | 'delivered' | 'failed' | 'skipped';

/** One row of the outbox double: a delivery, and what the drainer (src/webhooks/outbox.ts) has done with it so far. */
export interface OutboxDelivery {
  id: string;
  dealId: string;
  type: string;
  /** When the row was written (the server's clock): the drainer's first attempt is due then. */
  madeAt: number;
  status: OutboxStatus;
  /** When the drainer tries it next (due_at); null once it is settled. */
  dueAt: number | null;
  /** When it was settled (by the drainer, or by markWebhookDeliveryFailed). */
  settledAt: number | null;
  /** The drainer's attempts: when each was made and what the receiver answered. */
  attempts: Array<{ at: number; answer: WebhookAnswer }>;
}

/** What the acquirer answers a payout. */
export type SellerPayoutAnswer = SellerPayoutResult;

/** One deal as the fake records hold it. */
export interface FakeDeal {
  snapshot: DealSnapshot;
  status: DealStatus;
  /** Every write the workflow made, in order (changes and re-assertions). */
  writes: DealChange[];
  events: RecordedEvent[];
  /** What the acquirer answers a payout, in turn (default: succeeded at once to a test card); 'refuse' is its no. */
  payoutAnswers: Array<SellerPayoutAnswer | 'refuse'>;
  /** How many payout calls fail first, as an acquirer that does not answer (a retryable failure each). */
  payoutFailures: number;
  /** What the acquirer answers each re-read of a pending payout, in turn (default: still pending). */
  payoutReads: Array<ProviderPayout | 'refuse'>;
  /** What the acquirer answers the creation of a payment (default: held at once, as the sandbox does). */
  createdStatus: CreatedPayment['status'];
}

/**
 * The records, the acquirer and the webhook receivers of the deal workflow, in memory: the activities write here, and
 * the test reads what was written and called, and says what the acquirer and the receivers answer.
 */
export class FakeWorld {
  readonly deals = new Map<string, FakeDeal>();
  readonly calls: ActivityCall[] = [];
  /** webhook_deliveries: every delivery written, in the order it was written (its events' order). */
  readonly outbox = new Map<string, OutboxDelivery>();
  /** What the receivers answer the outbox's attempts: by default every attempt is delivered (reset() puts it back). */
  webhookAnswer: (delivery: OutboxDelivery, attempt: number) => WebhookAnswer = () => 'delivered';
  /** Until when (the server's clock) reading the outbox fails, as PostgreSQL down would (reset() clears it). */
  outboxUnreadableUntil = 0;

  /** The receivers answer every attempt again; what earlier tests recorded stays (each test reads its own deals). */
  reset(): void {
    this.webhookAnswer = () => 'delivered';
    this.outboxUnreadableUntil = 0;
  }

  /**
   * Writes a delivery into the outbox, due at `madeAt`: what a change's transaction does, and what the migration did to
   * a delivery a run from before the outbox had still to send (test code hands those to a run as pendingDeliveries).
   */
  writeDelivery(delivery: { id?: string; dealId: string; type: string }, madeAt: number): string {
    const id = delivery.id ?? crypto.randomUUID();
    if (this.outbox.has(id)) return id; // a retried write finds its row (insertWebhookEvent is idempotent)
    this.outbox.set(id, {
      id,
      dealId: delivery.dealId,
      type: delivery.type,
      madeAt,
      status: 'pending',
      dueAt: madeAt,
      settledAt: null,
      attempts: [],
    });
    return id;
  }

  /**
   * Runs the drainer over the deal's deliveries up to `now`, as src/webhooks/outbox.ts sends them: a delivery is
   * attempted when it is due and every earlier delivery of its deal is settled; 2xx delivers it, 410 fails it, any other
   * answer reschedules it (the answer's delay, else retryDelayMs from 30 s), and a failure 4 days after it was made
   * (GIVE_UP_SECONDS) fails it. Lazy: the drainer's clock is whenever someone looks (deliverWebhook).
   */
  private drain(dealId: string, now: number): void {
    let earlierSettledAt = -Infinity;
    for (const delivery of this.outbox.values()) {
      if (delivery.dealId !== dealId) continue;
      for (;;) {
        if (delivery.dueAt === null) break;
        const at = Math.max(delivery.dueAt, earlierSettledAt);
        if (at > now) break;
        const attempt = delivery.attempts.length + 1;
        const answer = this.webhookAnswer(delivery, attempt);
        delivery.attempts.push({ at, answer });
        if (answer !== 'delivered' && answer !== 'gone' && at - delivery.madeAt <= GIVE_UP_SECONDS * 1000) {
          delivery.status = 'retrying';
          delivery.dueAt = at + (answer.retryInMs ?? retryDelayMs(attempt, 30));
        } else {
          Object.assign(delivery, {
            status: answer === 'delivered' ? 'delivered' : 'failed',
            dueAt: null,
            settledAt: at,
          });
        }
      }
      // Still to send: the deal's later deliveries wait for it (the claim's NOT EXISTS).
      if (delivery.dueAt !== null) return;
      earlierSettledAt = Math.max(earlierSettledAt, delivery.settledAt ?? -Infinity);
    }
  }

  /**
   * PostgreSQL for the real deliverWebhook activity (activities/webhooks/delivery.ts): its one SELECT of a delivery's
   * status and wait until due_at, answered from the outbox as the drainer has it at the server's time.
   */
  private readonly outboxDb = {
    query: async (_sql: string, [deliveryId]: [string]) => {
      const now = await this.clock();
      if (now < this.outboxUnreadableUntil) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      const delivery = this.outbox.get(deliveryId);
      if (!delivery) return { rows: [] };
      this.drain(delivery.dealId, now);
      const waitMs = delivery.dueAt === null ? null : Math.max(delivery.dueAt - now, 0);
      return { rows: [{ status: delivery.status, wait_ms: waitMs }] };
    },
  };

  private readonly webhookActivities = createWebhookActivities({
    db: this.outboxDb as unknown as Db,
  } as Pick<Services, 'db'> as Services);

  /** Puts a deal into the records, as the API does when it creates one; its deal.created goes into the outbox. */
  seed(snapshot: DealSnapshot): FakeDeal {
    const deal: FakeDeal = {
      snapshot: structuredClone(snapshot),
      status: dealStatus(snapshot),
      writes: [],
      events: [],
      payoutAnswers: [],
      payoutFailures: 0,
      payoutReads: [],
      createdStatus: 'hold',
    };
    this.deals.set(snapshot.deal.id, deal);
    // The creation's statement writes deal.created and its delivery: the outbox's from then on.
    this.writeDelivery(
      { id: `created/${snapshot.deal.id}`, dealId: snapshot.deal.id, type: 'deal.created' },
      Date.parse(snapshot.deal.created_at),
    );
    return deal;
  }

  deal(dealId: string): FakeDeal {
    const deal = this.deals.get(dealId);
    if (!deal) throw new Error(`no deal ${dealId} in the fake records`);
    return deal;
  }

  callsOf(name: DealActivityName, dealId?: string): ActivityCall[] {
    return this.calls.filter((call) => call.name === name && (dealId === undefined || call.dealId === dealId));
  }

  /** The deal's webhook events with their deliveries, by type, in the order they were recorded. */
  webhookEvents(dealId: string): string[] {
    return this.deal(dealId)
      .events.filter((event) => event.webhook)
      .map((event) => event.type);
  }

  /** The test server's clock (runWorker sets it). */
  clock: () => Promise<number> = async () => {
    throw new Error('the world has no clock: run its activities with runWorker()');
  };

  private async log(name: DealActivityName, args: unknown[], dealId?: string): Promise<ActivityCall> {
    const call = { name, args, dealId, at: await this.clock(), attempt: Context.current().info.attempt };
    this.calls.push(call);
    return call;
  }

  private dealOfPayment(providerPaymentId: string): string | undefined {
    for (const [id, deal] of this.deals)
      if (this.latestRecords(deal).payments.some((payment) => payment.provider_payment_id === providerPaymentId))
        return id;
    return undefined;
  }

  private dealOfPayout(providerPayoutId: string): string | undefined {
    for (const [id, deal] of this.deals)
      if ((this.latestRecords(deal).payouts ?? []).some((payout) => payout.provider_payout_id === providerPayoutId))
        return id;
    return undefined;
  }

  /** The records as the deal's last write left them. */
  latestRecords(deal: FakeDeal): DealRecords {
    return deal.writes.findLast((write) => write.records)?.records ?? deal.snapshot;
  }

  readonly activities: DealActivities = {
    recordDealChange: async (change) => {
      const call = await this.log('recordDealChange', [change], change.dealId);
      const deal = this.deal(change.dealId);
      deal.writes.push(structuredClone(change));
      deal.status = change.status;
      const told = [...(change.events ?? []), ...(change.event ? [change.event] : [])];
      for (const event of told) {
        const webhook = !event.mailOnly;
        deal.events.push({ ...event, status: change.status, webhook });
        // Written with the change, in its transaction: the outbox sends it from the commit on.
        if (webhook) this.writeDelivery({ id: event.deliveryId, dealId: change.dealId, type: event.type }, call.at);
      }
      return {
        deliveryId: change.event?.deliveryId ?? null,
        ...(change.event ? { eventId: change.event.id } : {}),
        deliveryIds: (change.events ?? []).filter((event) => !event.mailOnly).map((event) => event.deliveryId),
      };
    },
    provisionParties: async (dealId) => {
      await this.log('provisionParties', [dealId], dealId);
      const deal = this.deals.get(dealId);
      if (!deal) return;
      return {
        eventId: `created/${dealId}`,
        deliveryId: `created/${dealId}`,
        snapshot: structuredClone(deal.snapshot),
      };
    },
    provisionApprover: async (dealId, email) => {
      await this.log('provisionApprover', [dealId, email], dealId);
    },
    createEscrowPayment: async (name, input) => {
      await this.log('createEscrowPayment', [name, input], input.dealId);
      return {
        status: this.deal(input.dealId).createdStatus,
        providerPaymentId: `${name}_${input.paymentId}`,
        paymentUrl: null,
        ...(name === 'yookassa_safe_deal' ? { providerDealId: `deal_${input.paymentId}` } : {}),
      };
    },
    captureEscrowPayment: async (...args) => {
      await this.log('captureEscrowPayment', args, this.dealOfPayment(args[1]));
    },
    cancelEscrowPayment: async (...args) => {
      await this.log('cancelEscrowPayment', args, this.dealOfPayment(args[1]));
    },
    prepareContract: async (input) => {
      await this.log('prepareContract', [input], input.dealId);
      return {
        id: input.documentId,
        kind: 'contract',
        name: 'contract.docx',
        content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        size: 1,
        sha256: '0'.repeat(64),
        created_at: input.createdAt,
        organization_id: crypto.randomUUID(),
        storage_key: `contracts/${input.documentId}`,
      };
    },
    createSellerPayout: async (input) => {
      await this.log('createSellerPayout', [input], input.dealId);
      const deal = this.deal(input.dealId);
      if (deal.payoutFailures > 0) {
        deal.payoutFailures--;
        throw ApplicationFailure.retryable('The acquirer did not answer', 'acquirer_unavailable');
      }
      const answer = deal.payoutAnswers.shift();
      if (answer === 'refuse')
        throw ApplicationFailure.create({ type: 'acquirer_refused', message: 'card_declined', nonRetryable: true });
      if (answer) return answer;
      return {
        providerPayoutId: `po_${input.payoutId}`,
        status: 'succeeded',
        failureReason: null,
        amount: input.owed,
        destination: { type: 'test_card', title: 'Test card ···1111' },
      };
    },
    getSellerPayout: async (name, providerPayoutId) => {
      const dealId = this.dealOfPayout(providerPayoutId);
      await this.log('getSellerPayout', [name, providerPayoutId], dealId);
      const answer = dealId ? this.deal(dealId).payoutReads.shift() : undefined;
      if (answer === 'refuse')
        throw ApplicationFailure.create({ type: 'acquirer_refused', message: 'No such payout', nonRetryable: true });
      return answer ?? { providerPayoutId, status: 'pending', failureReason: null };
    },
    refundEscrowPart: async (...args) => {
      await this.log('refundEscrowPart', args, this.dealOfPayment(args[1].providerPaymentId));
    },
    // The real activity, over the outbox above: it answers once the outbox has settled the delivery.
    deliverWebhook: async (deliveryId) => {
      await this.log('deliverWebhook', [deliveryId], this.outbox.get(deliveryId)?.dealId);
      await this.webhookActivities.deliverWebhook(deliveryId);
    },
    // As src/webhooks/deliveries.ts markDeliveryFailed: one still to send is failed and sent no more; a settled one
    // stays as it is (delivered, skipped, or failed by the outbox already).
    markWebhookDeliveryFailed: async (deliveryId) => {
      const delivery = this.outbox.get(deliveryId);
      const call = await this.log('markWebhookDeliveryFailed', [deliveryId], delivery?.dealId);
      if (delivery && delivery.dueAt !== null)
        Object.assign(delivery, { status: 'failed', dueAt: null, settledAt: call.at });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Starting a deal

/**
 * Starts the deal's workflow as the API does (src/deals/commands.ts startOptions): from the records, not provisioned, at
 * today's patch level. `input` changes what the run is given: pendingDeliveries and provisioned, as a run from before
 * the outbox continued as new; `patchLevel: undefined` for a run started by code from before patch levels.
 */
export async function startDeal(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  snapshot: DealSnapshot,
  settings: Partial<DealSettings> = {},
  input: Partial<Omit<DealWorkflowInput, 'snapshot' | 'settings'>> = {},
): Promise<WorkflowHandle<typeof dealWorkflow>> {
  const args: DealWorkflowInput = {
    snapshot,
    settings: { ...SETTINGS, ...settings },
    patchLevel: PATCH_LEVEL,
    ...input,
  };
  return env.client.workflow.start<typeof dealWorkflow>('dealWorkflow', {
    workflowId: dealWorkflowId(snapshot.deal.marketplace_id, snapshot.deal.external_id),
    taskQueue,
    args: [args],
    typedSearchAttributes: dealSearchAttributes(snapshot.deal, dealStatus(snapshot)),
    memo: { title: snapshot.deal.title },
  });
}

/** The timers the run started so far, in its history: how long each was set for. */
export async function timersStarted(handle: WorkflowHandle): Promise<number[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? [])
    .map((event) => event.timerStartedEventAttributes?.startToFireTimeout)
    .filter((timeout) => timeout != null)
    .map((timeout) => Number(timeout.seconds ?? 0) * 1000 + Math.round((timeout.nanos ?? 0) / 1e6));
}
