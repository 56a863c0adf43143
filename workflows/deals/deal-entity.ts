// The deal as its workflow holds it: the records, one change at a time, and every verb the workflow answers. Each
// change is persisted by an idempotent activity before it becomes this state, so a change the records refuse leaves
// the deal as it was. The rules of who may do what come from src/deals/rules.ts, as the API and the pages use them.
// Deterministic code only (it runs inside the workflow): see workflows/deals/deal.ts for the patches it is given.
import {
  ApplicationFailure,
  TemporalFailure,
  condition,
  type ActivityOptions,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { createDealActivities, DealRecords, HeldDocument } from '../../activities/deals/records.ts';
import type { createEscrowActivities } from '../../activities/deals/escrow.ts';
import type { createContractActivities } from '../../activities/deals/contracts.ts';
import type { createPayoutActivities, SellerPayoutInput, SellerPayoutResult } from '../../activities/deals/payouts.ts';
import { formatMinor, toMinor, toNumber } from '../../src/money/amount.ts';
import {
  nextPayoutId,
  partialRefundRefusal,
  paymentSums,
  payoutOwed,
  splitRefusal,
} from '../../src/money/deal-money.ts';
import {
  dealStatus,
  FIRST_STATUS_EVENTS,
  isFinal,
  PAYMENT_MOVES,
  statusEvent,
  type ActorKind,
  type ApprovalRecord,
  type CancellationRecord,
  type DealSnapshot,
  type DealStatus,
  type DeliveryRecord,
  type DisputeMessage,
  type DisputeRecord,
  type DocumentRecord,
  type MoneyEvent,
  type PaymentRecord,
  type PayoutRecord,
  type RefundRecord,
} from '../../src/deals/model.ts';
import {
  ACTION_TARGET,
  moveRefusal,
  refusal,
  type DealRole,
  type DealVerb,
  type PaymentAction,
} from '../../src/deals/rules.ts';
import { DealStatusKey } from '../../src/deals/search-attributes.ts';
import type { ProblemCode } from '../../src/http/problem-catalog.ts';
import { refuse } from '../../src/temporal/refusal.ts';
import type {
  AcquirerNotification,
  CancelInput,
  ContinueInput,
  DealSettings,
  DealWorkflowInput,
  DecideInput,
  DeliverInput,
  MovePaymentInput,
  NewDocument,
  PartialRefundInput,
  PayoutNews,
  ShipInput,
  StartApprovalInput,
  StartEscrowInput,
} from './deal-messages.ts';

// Retried for as long as it takes (PostgreSQL may be restarting); a write refused for its data is not retried at all:
// the activity fails it as non-retryable `invalid_record`, and the change is refused.
const RECORDS_OPTIONS = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1m' },
} as const;
// Our own database writes are short: local activities run them in the worker without a round trip through the
// Temporal server per write (patch 'local-records'; the server-side activities remain for histories made before it).
const localRecords = proxyLocalActivities<ReturnType<typeof createDealActivities>>(RECORDS_OPTIONS);
const serverRecords = proxyActivities<ReturnType<typeof createDealActivities>>(RECORDS_OPTIONS);
const ACQUIRER_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30s',
  // The caller waits for the answer: give up after a few tries; idempotence keys make every retry safe.
  retry: {
    initialInterval: '1s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['acquirer_refused' satisfies ProblemCode],
  },
};
// Since 'acquirer-local' the escrow payment's creation, capture and cancel run as local activities: a call the caller
// waits for, with few tries, costs no activity task and no workflow task of its own (its answer is a marker in the task
// that asked). Their retries stay short (15 s of backoff at most), below the local retry threshold, so no retry becomes
// a timer in the history. Only calls whose key survives a lost workflow task go local: a capture's and a cancel's are
// the recorded payment's id; a creation's id is drawn anew if its task is lost, which leaves at most a payment nobody
// was given to pay. Refunds stay server activities: a refund's id, unless an Idempotency-Key names it, is drawn in the
// task, and a task lost after the acquirer acted would draw another and move money twice. (The payout went local too,
// at 'payout-local', once its id followed from the records instead of a draw.)
const serverAcquirer = proxyActivities<ReturnType<typeof createEscrowActivities>>(ACQUIRER_OPTIONS);
const localAcquirer = toldAsUnavailable(
  proxyLocalActivities<ReturnType<typeof createEscrowActivities>>(ACQUIRER_OPTIONS),
);

/**
 * A refusal of the acquirer's (any failure marked not to be retried, or a payout's refusal type), wherever it is
 * wrapped: the local and the server activities' failures alike.
 */
function isRefusal(error: unknown): boolean {
  for (let failure = error; failure instanceof TemporalFailure; failure = failure.cause)
    if (
      failure instanceof ApplicationFailure &&
      (failure.nonRetryable || PAYOUT_REFUSALS.includes(failure.type as ProblemCode))
    )
      return true;
  return false;
}

/**
 * Local activities whose tries ran out fail with the activity's own error, where a server activity's failure names the
 * activity: such a failure is told as `acquirer_unavailable` (the API's 503 with its retry advice; every call is keyed,
 * so nothing was changed twice). A refusal (non-retryable) and a cancellation go on as they came.
 */
function toldAsUnavailable<T extends object>(activities: T): T {
  return new Proxy(activities, {
    get:
      (target, name) =>
      async (...args: unknown[]) => {
        try {
          return await (target as Record<string | symbol, (...args: unknown[]) => Promise<unknown>>)[name](...args);
        } catch (error) {
          if (!(error instanceof TemporalFailure) || isRefusal(error) || isCancellation(error)) throw error;
          throw refuse('acquirer_unavailable', 'The payment provider did not answer; retry in a minute.', {
            cause: error,
          });
        }
      },
  });
}
const contracts = proxyActivities<ReturnType<typeof createContractActivities>>({
  startToCloseTimeout: '60s',
  // The buyer waits on the widget: a few tries, then the Continue fails and may be pressed again.
  retry: { initialInterval: '1s', maximumAttempts: 5 },
});

// Payouts move the seller's money: retried for as long as it takes (each call keyed by the payout's id, so a retry
// after a timeout or a crashed worker answers the first payout); a refusal is answered as a failed payout.
// Since 'payout-local' the payout is first asked by a local activity, in the workflow task of the change that released
// the money: no activity task and no workflow task of its own. That is safe because its id is no longer drawn but
// follows from the payment's records (nextPayoutId): a task lost after the acquirer paid is made again with the same
// id, and the acquirer answers the first payout. Its few quick tries spent (an acquirer away for more than seconds), the
// same call under the same id goes on as a server activity, which waits out a long outage without a history event per
// try, where a local activity's retries would keep the workflow task open and grow the history while they last.
const PAYOUT_REFUSALS: ProblemCode[] = ['acquirer_refused', 'acquirer_not_configured'];
const payouts = proxyActivities<ReturnType<typeof createPayoutActivities>>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1m', nonRetryableErrorTypes: PAYOUT_REFUSALS },
});
// A try that hangs ends in 10 s: four of them keep the release's workflow task open for less than a minute at worst.
const localPayouts = proxyLocalActivities<ReturnType<typeof createPayoutActivities>>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', maximumAttempts: 4, nonRetryableErrorTypes: PAYOUT_REFUSALS },
});
// A refund of part is asked by someone who waits for the answer: a few tries, each keyed by the refund's id.
const refunds = proxyActivities<ReturnType<typeof createPayoutActivities>>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: PAYOUT_REFUSALS },
});

/**
 * Asked where a payment is released or refunded: since then a paying-out provider's release (a safe deal, the
 * sandbox) pays the seller out instead of capturing, and its refund returns what is held by a refund. Histories from
 * before it replay the capture and the cancel they recorded.
 */
const PAYOUTS = 'payouts';
/** How often a pending payout is asked about, at first and at most (acquirer news comes sooner where it is sent). */
const PAYOUT_CHECK_FIRST_MS = 60_000;
const PAYOUT_CHECK_MAX_MS = 3600_000;
const DAY_MS = 24 * 3600_000;

/** An event of money and delivery a change calls for besides its status's. */
interface ToldEvent {
  type: MoneyEvent | 'payout_destination_needed' | 'inspection_reminder';
  data?: Record<string, unknown>;
  /** Mail only: no webhook. */
  mailOnly?: boolean;
}

/** Something the deal does at a time of its own: before a hold lapses, at the end of the inspection window, … */
export interface TimedAction {
  at: number;
  act: () => Promise<void>;
}

/** Which changes of this code the running history has taken (workflows/deals/patches.ts). */
export interface DealPatches {
  localRecords: boolean;
  /** Re-asserting the records when a run continues an earlier one, and before the workflow ends. */
  reassert: boolean;
  /** exclusive() lets exactly one waiter through. */
  recheck: boolean;
  /** An event for every status (deal.created, deal.docs, …), mails to the parties, and rules checked in handlers too. */
  people: boolean;
  /** A run that provisions starts from the records the provisioning read, not from what its caller read before. */
  fromRecords: boolean;
  /**
   * Webhook deliveries leave through the outbox (src/webhooks/outbox.ts) once the change that made them commits; the run
   * sends none itself. Before it, the run's loop sent each by an activity.
   */
  outbox: boolean;
  /** The escrow payment's creation, capture and cancel run as local activities. */
  acquirerLocal: boolean;
  /** The seller's payout runs as a local activity, under an id its payment's records determine (nextPayoutId). */
  payoutLocal: boolean;
  /** patched(id) for a change asked where it applies (workflows/deals/patches.ts). */
  taken: (id: string) => boolean;
}

/** Who made a change and why: the webhook's `actor` and `reason`, and the mails'. */
interface Why {
  actor: ActorKind;
  reason?: string;
}

type Change = {
  document?: NewDocument;
  approval?: ApprovalRecord;
  payment?: PaymentRecord;
  dispute?: DisputeRecord;
  cancellation?: CancellationRecord;
  refund?: RefundRecord;
  payout?: PayoutRecord;
  delivery?: DeliveryRecord;
};

/**
 * Asked where a move is applied, not when a run starts, so open deals take it at their next move: from then on a
 * disputed payment moves only by the arbiter's decision with a reason, whatever the mover read before, and a hold about
 * to lapse on a disputed payment goes back to the buyer (as the acquirer would return it), never to the seller by policy.
 * Before it, an administrator's move of a disputed payment decided the dispute, and the service chose whether the mover
 * was the arbiter from what it had read.
 */
const ARBITER_DECIDES = 'arbiter-decides-disputes';

/** A payment mover's place in the rules (histories before actors were told name an administrator `admin`). */
const moverRole = (actor: MovePaymentInput['actor']): DealRole =>
  actor === 'buyer' ? 'buyer' : actor === 'arbiter' ? 'arbiter' : 'administrator';
/** The same before ARBITER_DECIDES: any administrator moving a disputed payment was its arbiter, reason or not. */
const legacyMoverRole = (actor: MovePaymentInput['actor'], payment: PaymentRecord | undefined): DealRole =>
  actor === 'buyer' ? 'buyer' : payment?.status === 'disputed' ? 'arbiter' : 'administrator';
const moverActor = (move: MovePaymentInput): ActorKind => (move.actor === 'admin' ? 'administrator' : move.actor);
const now = () => new Date().toISOString();

/** The list with the record of that id replaced, or the record added at the end. */
function withRecord<T extends { id: string }>(list: T[], record: T): T[] {
  return list.some((candidate) => candidate.id === record.id)
    ? list.map((candidate) => (candidate.id === record.id ? record : candidate))
    : [...list, record];
}

/** The document as callers see it: where its file lives stays inside. */
function documentRecord(document: HeldDocument): DocumentRecord {
  const { organization_id: _organization, storage_key: _key, ...record } = document;
  return record;
}

export class DealEntity {
  readonly state: Pick<DealSnapshot, 'deal' | 'version'> & DealRecords;
  readonly dealId: string;
  /** Webhook deliveries this run sends itself, in the order their events happened (runs from before the outbox). */
  readonly deliveries: string[];
  /** How many changes were committed: the workflow's loop wakes on a new one. */
  changes = 0;
  /** A change is under way (exclusive()). */
  busy = false;
  readonly records: typeof localRecords;
  private readonly acquirer: typeof localAcquirer;
  // Hold limits of live payments not held yet, to date the lapse when the acquirer confirms the hold.
  private readonly holdLimits = new Map<string, number>();
  /** When to ask the acquirer about pending payouts next, and the wait after that (doubling up to an hour). */
  private payoutCheck = { at: 0, wait: PAYOUT_CHECK_FIRST_MS };

  constructor(
    input: DealWorkflowInput,
    readonly patches: DealPatches,
  ) {
    this.state = {
      ...input.snapshot,
      dispute: input.snapshot.dispute ?? null,
      cancellation: input.snapshot.cancellation ?? null,
    };
    this.dealId = this.state.deal.id;
    this.deliveries = [...(input.pendingDeliveries ?? [])];
    for (const [paymentId, seconds] of Object.entries(input.holdLimits ?? {})) this.holdLimits.set(paymentId, seconds);
    this.records = patches.localRecords ? localRecords : serverRecords;
    this.acquirer = patches.acquirerLocal ? localAcquirer : serverAcquirer;
  }

  /**
   * Takes the deal as PostgreSQL has it. A run started again after an earlier one ended (an update or acquirer news
   * that came late) was given the snapshot its caller read, which can be older than what the ended run wrote: a late
   * dispute must meet the released payment, not the held one its caller saw. Changed in place: the workflow holds it.
   */
  adopt(snapshot: DealSnapshot): void {
    Object.assign(this.state, {
      ...snapshot,
      dispute: snapshot.dispute ?? null,
      cancellation: snapshot.cancellation ?? null,
    });
  }

  status(): DealStatus {
    return dealStatus(this.state);
  }

  /** Refuses the verb for this role by the rules (src/deals/rules.ts), on the deal as the workflow holds it now. */
  check(verb: DealVerb, role: DealRole): void {
    const refused = refusal(this.state, verb, role);
    if (refused) throw refuse(refused.code, refused.message);
  }

  /** One change at a time: updates and signals that await activities must not interleave. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    // Every waiter's condition turns true in the same activation when the holder finishes, and each resumes after
    // all were checked: only a check made on resuming lets exactly one through (patch 'exclusive-recheck'; before
    // it, concurrent updates could interleave, which only the widget's Continue, an update since then, relies on).
    if (this.patches.recheck) {
      while (this.busy) await condition(() => !this.busy);
    } else {
      await condition(() => !this.busy);
    }
    this.busy = true;
    try {
      return await work();
    } finally {
      this.busy = false;
    }
  }

  /**
   * Persists a change, with the webhook event its new status calls for, and only then makes it the workflow's state:
   * when the records refuse it (the activity fails), the deal stays exactly as it was, here and in PostgreSQL.
   * The write holds the change alone while PostgreSQL is at the deal's version, and every record otherwise, which
   * puts back anything an earlier write lost (sized()).
   */
  private async commit(change: Change, why: Why, told: ToldEvent[] = []): Promise<void> {
    const { state } = this;
    const before = this.status();
    const next: DealRecords = {
      documents: change.document ? [...state.documents, change.document] : state.documents,
      approvals: change.approval ? withRecord(state.approvals, change.approval) : state.approvals,
      payments: change.payment ? withRecord(state.payments, change.payment) : state.payments,
      dispute: change.dispute ?? state.dispute,
      cancellation: change.cancellation ?? state.cancellation,
      // Workflows from before payouts hold none of these: absent, so the records leave them as stored.
      refunds: change.refund ? withRecord(state.refunds ?? [], change.refund) : state.refunds,
      payouts: change.payout ? withRecord(state.payouts ?? [], change.payout) : state.payouts,
      delivery: change.delivery ?? state.delivery,
    };
    const after = dealStatus(next);
    const statusTold = after !== before && (this.patches.people || FIRST_STATUS_EVENTS.includes(after));
    const event = statusTold
      ? { id: uuid4(), deliveryId: uuid4(), type: statusEvent(after), occurredAt: now(), ...why }
      : undefined;
    const events = told.map(({ type, data, mailOnly }) => ({
      id: uuid4(),
      deliveryId: uuid4(),
      type,
      occurredAt: now(),
      ...why,
      ...(data ? { data } : {}),
      ...(mailOnly ? { mailOnly } : {}),
    }));
    // The activity also writes the mails the change calls for, in its transaction (keyed by the event).
    const { deliveryId, deliveryIds } = await this.records.recordDealChange({
      dealId: this.dealId,
      status: after,
      event,
      ...(events.length > 0 ? { events } : {}),
      records: next,
      ...this.sized(change),
      notify: this.patches.people && event !== undefined,
    });
    Object.assign(state, next);
    this.versionWritten();
    if (!this.patches.outbox) {
      this.deliveries.push(...(deliveryIds ?? []));
      if (deliveryId) this.deliveries.push(deliveryId);
    }
    if (after !== before) upsertSearchAttributes([{ key: DealStatusKey, value: after }]);
    this.changes++;
  }

  /**
   * A deal that knows its version writes a change alone, at the next version; the whole records go along for when
   * PostgreSQL is at another one. Workflows started before versions write the whole deal every time.
   */
  private sized(changed: Change): { version?: number; changed?: Change } {
    return this.state.version === undefined ? {} : { version: this.state.version + 1, changed };
  }

  /** The write of a sized change committed: the deal is at its next version. */
  private versionWritten(): void {
    if (this.state.version !== undefined) this.state.version++;
  }

  /**
   * Writes the records as this workflow holds them once more (idempotent upserts), for when PostgreSQL may have lost
   * a write the workflow already acted on. A refusal is logged, never fatal: the deal goes on as PostgreSQL has it.
   */
  async reassert(): Promise<void> {
    try {
      const { documents, approvals, payments, dispute, cancellation, refunds, payouts, delivery } = this.state;
      await this.records.recordDealChange({
        dealId: this.dealId,
        status: this.status(),
        records: { documents, approvals, payments, dispute, cancellation, refunds, payouts, delivery },
        version: this.state.version,
      });
    } catch (error) {
      if (!(error instanceof TemporalFailure) || isCancellation(error)) throw error;
      log.error('The deal records could not be re-asserted', { dealId: this.dealId, error: error.message });
    }
  }

  private pendingApproval() {
    return this.state.approvals.find((approval) => approval.status === 'pending');
  }

  private pendingLivePayment() {
    return this.state.payments.find((payment) => payment.status === 'pending');
  }

  async addDocument(document: NewDocument): Promise<DocumentRecord> {
    const existing = this.state.documents.find((candidate) => candidate.id === document.id);
    if (existing) return documentRecord(existing);
    if (this.patches.people) this.check('add_document', 'marketplace');
    await this.commit({ document }, { actor: 'marketplace' });
    return documentRecord(document);
  }

  async startApproval({
    approver,
    comment,
  }: StartApprovalInput): Promise<{ approval: ApprovalRecord; created: boolean }> {
    this.check('start_approval', 'marketplace');
    const pending = this.pendingApproval();
    if (pending) return { approval: pending, created: false };
    if (approver.toLowerCase() !== this.state.deal.buyer_email.toLowerCase())
      await this.records.provisionApprover(this.dealId, approver);
    const approval: ApprovalRecord = {
      id: uuid4(),
      status: 'pending',
      approver,
      comment,
      created_at: now(),
      decided_at: null,
    };
    await this.commit({ approval }, { actor: 'marketplace' });
    return { approval, created: true };
  }

  /** The widget's Continue: a contract when the deal has no document, then the buyer's approval when none is pending or approved. */
  async continueDeal({ marketplace_name, locale }: ContinueInput): Promise<void> {
    const { state } = this;
    if (isFinal(this.status())) return;
    if (state.documents.length === 0) {
      const document = await contracts.prepareContract({
        dealId: this.dealId,
        documentId: uuid4(),
        marketplaceName: marketplace_name,
        locale,
        createdAt: now(),
      });
      await this.commit({ document }, { actor: 'buyer' });
    }
    const latest = state.approvals.at(-1)?.status;
    if (latest === undefined || latest === 'rejected') {
      const approval: ApprovalRecord = {
        id: uuid4(),
        status: 'pending',
        approver: state.deal.buyer_email,
        comment: '',
        created_at: now(),
        decided_at: null,
      };
      await this.commit({ approval }, { actor: 'buyer' });
    }
  }

  /** The approval the actor may decide now, or a refusal: another person's approval does not exist for them. */
  approvalToDecide(approvalId: string, actor: string): ApprovalRecord {
    const approval = this.state.approvals.find((candidate) => candidate.id === approvalId);
    if (!approval || approval.approver.toLowerCase() !== actor.toLowerCase())
      throw refuse('not_found', 'No such approval.');
    if (approval.status !== 'pending')
      throw refuse('approval_not_pending', `The approval is already ${approval.status}.`);
    return approval;
  }

  async decide({ approval_id, decision, comment, actor }: DecideInput): Promise<ApprovalRecord> {
    const approval = this.approvalToDecide(approval_id, actor);
    const decided: ApprovalRecord = {
      ...approval,
      status: decision === 'approve' ? 'approved' : 'rejected',
      comment: comment || approval.comment,
      decided_at: now(),
    };
    const byBuyer = actor.toLowerCase() === this.state.deal.buyer_email.toLowerCase();
    // A rejection's comment is its reason; an approval's comment is the marketplace's request, not a reason.
    await this.commit(
      { approval: decided },
      { actor: byBuyer ? 'buyer' : 'marketplace', reason: decision === 'reject' ? comment : undefined },
    );
    return decided;
  }

  checkStartEscrow(escrow: StartEscrowInput): void {
    const amount = escrow.amount || this.state.deal.amount;
    if (escrow.payer === 'buyer') this.check('pay', 'buyer');
    else this.check('start_escrow', 'marketplace');
    if (!this.pendingLivePayment() && amount > this.state.deal.amount) {
      throw refuse('amount_exceeds_deal', `The amount is more than the deal amount ${this.state.deal.amount}.`);
    }
  }

  async startEscrow(escrow: StartEscrowInput): Promise<{ payment: PaymentRecord; created: boolean }> {
    const { deal } = this.state;
    this.checkStartEscrow(escrow);
    const pending = this.pendingLivePayment();
    if (pending) return { payment: pending, created: false };
    const amount = escrow.amount || deal.amount;
    const paymentId = uuid4();
    const created = await this.acquirer.createEscrowPayment(escrow.provider, {
      paymentId,
      dealId: this.dealId,
      amount,
      currency: deal.currency,
      description: escrow.description || deal.title || `Deal ${deal.external_id}`,
      returnUrl: escrow.return_url,
      fee: formatMinor(toMinor(deal.fee ?? 0)),
      feeMoment: deal.fee_moment ?? 'close',
    });
    const at = now();
    const payment: PaymentRecord = {
      id: paymentId,
      amount,
      currency: deal.currency,
      provider: escrow.provider,
      status: created.status,
      payment_url: created.paymentUrl,
      provider_payment_id: created.providerPaymentId,
      hold_expires_at:
        created.status === 'hold' ? new Date(Date.now() + escrow.hold_limit_seconds * 1000).toISOString() : null,
      ...(created.providerDealId ? { provider_deal_id: created.providerDealId } : {}),
      created_at: at,
      updated_at: at,
    };
    // The sandbox holds at once (whoever asked: the marketplace, or the buyer paying); a live payment is held when the
    // acquirer says so.
    await this.commit({ payment }, { actor: created.status === 'hold' ? (escrow.payer ?? 'marketplace') : 'acquirer' });
    this.holdLimits.set(paymentId, escrow.hold_limit_seconds);
    return { payment, created: true };
  }

  /**
   * The latest payment, when the mover may make this move now; a refusal otherwise. The update's validator asks it
   * when the move arrives, and the handler asks again under the deal's lock, just before the move: another change may
   * have come first (a dispute opened while an administrator's release waited), and only the deal as it is now counts.
   */
  paymentToMove(move: MovePaymentInput, rules: 'current' | 'legacy' = 'current'): PaymentRecord {
    const payment = this.state.payments.at(-1);
    if (rules === 'legacy') {
      this.check(move.action, legacyMoverRole(move.actor, payment));
    } else {
      const refused = moveRefusal(this.state, {
        action: move.action,
        role: moverRole(move.actor),
        reason: move.reason,
      });
      if (refused) throw refuse(refused.code, refused.message);
    }
    if (move.split) this.splitOf(payment!, move);
    return payment!;
  }

  /** The arbiter's split of the held money, in minor units, or a refusal. */
  private splitOf(
    payment: PaymentRecord,
    move: MovePaymentInput,
  ): { release: bigint; refund: bigint; refundId?: string } {
    const { split } = move;
    if (!split || move.action !== 'release' || move.actor !== 'arbiter')
      throw refuse('invalid_payment_state', 'Only the arbiter splits a disputed payment.');
    if (payment.provider === 'yookassa') {
      throw refuse(
        'invalid_payment_state',
        'A two-stage payment is released or refunded whole; deals on YooKassa Safe Deal can be split.',
      );
    }
    const release = toMinor(split.release_amount);
    const refund = toMinor(split.refund_amount);
    const refused = splitRefusal(this.sums(payment), release, refund);
    if (refused) throw refuse('invalid_refund_amount', refused);
    return { release, refund, refundId: split.refund_id };
  }

  movePaymentAsAsked(move: MovePaymentInput): Promise<PaymentRecord> {
    const payment = this.paymentToMove(move, this.patches.taken(ARBITER_DECIDES) ? 'current' : 'legacy');
    return this.movePayment(
      payment,
      move.action,
      { actor: moverActor(move), reason: move.reason || undefined },
      move.split ? this.splitOf(payment, move) : undefined,
    );
  }

  /** Where the payment's money stands: paid, refunded in parts, the fee, the seller's part, paid out. */
  private sums(payment: PaymentRecord, refunds = this.state.refunds ?? [], payouts = this.state.payouts ?? []) {
    return paymentSums(this.state.deal, payment, refunds, payouts);
  }

  /** Whether this payment's release pays the seller out (a safe deal, the sandbox); asked in handlers only. */
  private paysOut(payment: PaymentRecord): boolean {
    return payment.provider !== 'yookassa' && this.patches.taken(PAYOUTS);
  }

  /**
   * Moves the payment at the acquirer, then in the records; a dispute opens or is decided with it. A paying-out
   * provider's release records the decision and leaves the payout to the loop (payOut); the deal is paid when it succeeds.
   */
  private async movePayment(
    payment: PaymentRecord,
    action: PaymentAction,
    why: Why,
    split?: { release: bigint; refund: bigint; refundId?: string },
  ): Promise<PaymentRecord> {
    const key = `${payment.id}/${action}`;
    const paysOut = action !== 'dispute' && this.paysOut(payment);
    const told: ToldEvent[] = [];
    let refund: RefundRecord | undefined;
    if (split) {
      refund = {
        id: split.refundId ?? uuid4(),
        payment_id: payment.id,
        amount: toNumber(split.refund),
        currency: payment.currency,
        actor: why.actor,
        reason: why.reason ?? '',
        created_at: now(),
      };
      await refunds.refundEscrowPart(payment.provider, {
        refundId: refund.id,
        providerPaymentId: payment.provider_payment_id!,
        providerDealId: payment.provider_deal_id ?? null,
        amount: formatMinor(split.refund),
        currency: payment.currency,
      });
      told.push({ type: 'deal.partially_refunded', data: { amount: refund.amount, currency: refund.currency } });
    }
    const sums = this.sums(payment, refund ? [...(this.state.refunds ?? []), refund] : undefined);
    if (action === 'release' && !paysOut) {
      await this.acquirer.captureEscrowPayment(
        payment.provider,
        payment.provider_payment_id!,
        payment.amount,
        payment.currency,
        key,
      );
    } else if (action === 'refund' && paysOut) {
      await refunds.refundEscrowPart(payment.provider, {
        refundId: key,
        providerPaymentId: payment.provider_payment_id!,
        providerDealId: payment.provider_deal_id ?? null,
        amount: formatMinor(sums.rest),
        currency: payment.currency,
      });
    } else if (action === 'refund') {
      await this.acquirer.cancelEscrowPayment(payment.provider, payment.provider_payment_id!, key);
    }
    const at = now();
    const moved: PaymentRecord = { ...payment, status: ACTION_TARGET[action], updated_at: at };
    if (action === 'release' && paysOut) {
      moved.payout_status = payoutOwed(sums) > 0n ? 'pending' : 'succeeded';
      moved.released_by = why.actor;
      if (why.reason) moved.release_reason = why.reason;
    }
    const reason = why.reason ?? '';
    let dispute: DisputeRecord | undefined;
    if (action === 'dispute') {
      dispute = { status: 'open', reason, opened_by: why.actor, opened_at: at, messages: [], decision: null };
    } else if (payment.status === 'disputed' && this.state.dispute) {
      dispute = { ...this.state.dispute, status: 'decided', decision: { outcome: action, reason, decided_at: at } };
    }
    await this.commit({ payment: moved, dispute, refund }, why, told);
    return moved;
  }

  /** The latest payment while held, and the checks of a partial refund of it (the validator asks it too). */
  checkPartialRefund({ amount }: PartialRefundInput): PaymentRecord {
    this.check('partial_refund', 'marketplace');
    const payment = this.state.payments.at(-1)!;
    const refused = partialRefundRefusal(this.sums(payment), toMinor(amount));
    if (refused) throw refuse('invalid_refund_amount', refused);
    return payment;
  }

  /** Part of the held money back to the buyer, as the buyer and the seller agreed (the marketplace acts for the seller). */
  async partialRefund(input: PartialRefundInput): Promise<RefundRecord> {
    // The same request again (another update id after a failure): the refund it made, not a second one.
    const made = input.refund_id && (this.state.refunds ?? []).find((candidate) => candidate.id === input.refund_id);
    if (made) return made;
    const payment = this.checkPartialRefund(input);
    const refund: RefundRecord = {
      id: input.refund_id ?? uuid4(),
      payment_id: payment.id,
      amount: input.amount,
      currency: payment.currency,
      actor: 'marketplace',
      reason: input.reason,
      created_at: now(),
    };
    await refunds.refundEscrowPart(payment.provider, {
      refundId: refund.id,
      providerPaymentId: payment.provider_payment_id!,
      providerDealId: payment.provider_deal_id ?? null,
      amount: formatMinor(toMinor(input.amount)),
      currency: payment.currency,
    });
    await this.commit({ refund }, { actor: 'marketplace', reason: input.reason || undefined }, [
      { type: 'deal.partially_refunded', data: { amount: refund.amount, currency: refund.currency } },
    ]);
    return refund;
  }

  /** The order is on its way: from now on only a dispute stops the release. */
  async ship({ actor, carrier, tracking }: ShipInput): Promise<DeliveryRecord> {
    this.check('ship', actor);
    const delivery: DeliveryRecord = {
      status: 'shipped',
      carrier,
      tracking,
      shipped_at: now(),
      delivered_at: null,
      inspection_ends_at: null,
      reminded_at: null,
    };
    await this.commit({ delivery }, { actor }, [{ type: 'deal.shipped', data: { carrier, tracking } }]);
    return delivery;
  }

  /** Delivered: the buyer's inspection window starts, at whose end the money is released (at once for a window of 0). */
  async deliver({ actor, inspection_days }: DeliverInput): Promise<DeliveryRecord> {
    this.check('deliver', actor);
    const at = now();
    const ends = inspection_days > 0 ? new Date(Date.now() + inspection_days * DAY_MS).toISOString() : null;
    const shipped = this.state.delivery ?? { carrier: '', tracking: '', shipped_at: at };
    const delivery: DeliveryRecord = {
      ...shipped,
      status: 'delivered',
      delivered_at: at,
      inspection_ends_at: ends,
      reminded_at: null,
    };
    await this.commit({ delivery }, { actor }, [{ type: 'deal.delivered', data: { inspection_ends_at: ends } }]);
    if (!ends) await this.releaseAfterInspection();
    return delivery;
  }

  /** The window ended without a dispute: the money goes to the seller. A disputed payment waits for the arbiter. */
  private async releaseAfterInspection(): Promise<void> {
    const payment = this.state.payments.at(-1);
    if (payment?.status !== 'hold') return;
    await this.movePayment(payment, 'release', {
      actor: 'system',
      reason: 'The buyer’s inspection window ended without a dispute.',
    });
  }

  /** A day before the window ends the buyer is reminded, once. */
  private async remindBuyer(): Promise<void> {
    const { delivery } = this.state;
    if (!delivery?.inspection_ends_at || delivery.reminded_at) return;
    await this.commit({ delivery: { ...delivery, reminded_at: now() } }, { actor: 'system' }, [
      { type: 'inspection_reminder', mailOnly: true, data: { inspection_ends_at: delivery.inspection_ends_at } },
    ]);
  }

  /** The released payment whose payout is to be made now: owed, with nothing on its way. */
  payoutDue(): PaymentRecord | undefined {
    return this.state.payments.find(
      (payment) =>
        payment.status === 'released' &&
        payment.payout_status === 'pending' &&
        !(this.state.payouts ?? []).some((payout) => payout.payment_id === payment.id && payout.status === 'pending'),
    );
  }

  /**
   * Pays the seller what is still owed of the payment, up to the acquirer's per-payout limit (the loop comes back for
   * the rest). No destination yet: the seller is asked for one and the payout waits for it (payoutDestinationChanged).
   * Any failure to pay out is a failed payout: the money stays held, the seller and the marketplace are told.
   */
  async payOut(paymentId: string): Promise<void> {
    const payment = this.state.payments.find((candidate) => candidate.id === paymentId);
    if (payment?.status !== 'released' || payment.payout_status !== 'pending') return;
    const sums = this.sums(payment);
    if (sums.inFlight > 0n) return;
    const owed = payoutOwed(sums);
    if (owed <= 0n) {
      await this.commit(
        { payment: { ...payment, payout_status: 'succeeded', updated_at: now() } },
        this.releaseWhy(payment),
      );
      return;
    }
    // Runs from before 'payout-local' drew the id (and replay that draw).
    const payoutId = this.patches.payoutLocal ? nextPayoutId(payment.id, this.state.payouts ?? []) : uuid4();
    const at = now();
    let payout: PayoutRecord;
    try {
      const result = await this.askPayout({
        dealId: this.dealId,
        payoutId,
        provider: payment.provider,
        providerDealId: payment.provider_deal_id ?? null,
        owed: formatMinor(owed),
        currency: payment.currency,
        description: `Deal ${this.state.deal.external_id}`.slice(0, 128),
      });
      if (result.destination === null) {
        await this.commit(
          { payment: { ...payment, payout_status: 'awaiting_destination', updated_at: at } },
          { actor: 'system' },
          [{ type: 'payout_destination_needed', mailOnly: true }],
        );
        return;
      }
      payout = {
        id: payoutId,
        payment_id: payment.id,
        amount: Number(result.amount),
        currency: payment.currency,
        status: result.status,
        destination: result.destination,
        provider_payout_id: result.providerPayoutId || null,
        failure_reason: result.failureReason,
        created_at: at,
        updated_at: at,
      };
    } catch (error) {
      if (!(error instanceof TemporalFailure) || isCancellation(error)) throw error;
      const failure = error.cause?.message ?? error.message;
      payout = {
        id: payoutId,
        payment_id: payment.id,
        amount: toNumber(owed),
        currency: payment.currency,
        status: 'failed',
        destination: { type: 'unknown', title: '' },
        provider_payout_id: null,
        failure_reason: failure,
        created_at: at,
        updated_at: at,
      };
    }
    await this.settlePayout(payment, payout);
  }

  /**
   * The acquirer's payout: a few quick local tries, then (the acquirer away for longer) the same call under the same id
   * as a server activity. A refusal and a cancellation end it at once, as they come. Runs from before 'payout-local' ask
   * the server activity only.
   */
  private async askPayout(input: SellerPayoutInput): Promise<SellerPayoutResult> {
    if (!this.patches.payoutLocal) return payouts.createSellerPayout(input);
    try {
      return await localPayouts.createSellerPayout(input);
    } catch (error) {
      if (!(error instanceof TemporalFailure) || isCancellation(error) || isRefusal(error)) throw error;
      return payouts.createSellerPayout(input);
    }
  }

  /** Who released the money and why, for the deal.paid its payout completes. */
  private releaseWhy(payment: PaymentRecord): Why {
    return { actor: payment.released_by ?? 'system', reason: payment.release_reason };
  }

  /** Records a payout as it now stands, and the payment's payout status with it; the deal is paid when nothing is owed. */
  private async settlePayout(payment: PaymentRecord, payout: PayoutRecord): Promise<void> {
    const all = withRecord(this.state.payouts ?? [], payout);
    const sums = this.sums(payment, undefined, all);
    const data = {
      payout_id: payout.id,
      amount: payout.amount,
      currency: payout.currency,
      destination: payout.destination.title,
      failure_reason: payout.failure_reason,
    };
    let status = payment.payout_status;
    const told: ToldEvent[] = [];
    if (payout.status === 'failed') {
      status = 'failed';
      told.push({ type: 'deal.payout_failed', data });
    } else if (payout.status === 'succeeded') {
      told.push({ type: 'deal.payout_sent', data });
      if (payoutOwed(sums) <= 0n && sums.inFlight === 0n) status = 'succeeded';
    } else {
      this.payoutCheck = { at: Date.now() + PAYOUT_CHECK_FIRST_MS, wait: PAYOUT_CHECK_FIRST_MS };
    }
    const moved =
      status !== payment.payout_status ? { ...payment, payout_status: status, updated_at: now() } : undefined;
    await this.commit(
      { payment: moved, payout },
      status === 'succeeded' ? this.releaseWhy(payment) : { actor: 'acquirer' },
      told,
    );
  }

  /** Asks the acquirer about each pending payout; one still pending is asked again later, less and less often. */
  private async checkPayouts(): Promise<void> {
    for (const payout of (this.state.payouts ?? []).filter((candidate) => candidate.status === 'pending')) {
      const payment = this.state.payments.find((candidate) => candidate.id === payout.payment_id)!;
      let current;
      try {
        current = await payouts.getSellerPayout(payment.provider, payout.provider_payout_id!);
      } catch (error) {
        // A refusal to read it (the acquirer forgot it, the configuration went) is asked again later, never fatal.
        if (!(error instanceof TemporalFailure) || isCancellation(error)) throw error;
        log.error('A pending payout could not be re-read', {
          dealId: this.dealId,
          payoutId: payout.id,
          error: error.message,
        });
        continue;
      }
      if (current.status !== 'pending')
        await this.settlePayout(
          this.state.payments.find((candidate) => candidate.id === payment.id)!,
          { ...payout, status: current.status, failure_reason: current.failureReason, updated_at: now() },
        );
    }
    const wait = Math.min(this.payoutCheck.wait * 2, PAYOUT_CHECK_MAX_MS);
    this.payoutCheck = { at: Date.now() + wait, wait };
  }

  /** What the acquirer says of a payout, re-read from its API (src/escrow/notifications.ts). */
  async payoutNews({ payoutId, status, failureReason }: PayoutNews): Promise<void> {
    const payout = (this.state.payouts ?? []).find((candidate) => candidate.id === payoutId);
    if (payout?.status !== 'pending') return;
    const payment = this.state.payments.find((candidate) => candidate.id === payout.payment_id)!;
    await this.settlePayout(payment, { ...payout, status, failure_reason: failureReason, updated_at: now() });
  }

  /** A new payout destination: a payout waiting for one, or failed, is made again. */
  async payoutDestinationChanged(): Promise<void> {
    const payment = this.state.payments.find(
      (candidate) =>
        candidate.status === 'released' &&
        (candidate.payout_status === 'failed' || candidate.payout_status === 'awaiting_destination'),
    );
    if (!payment) return;
    await this.commit({ payment: { ...payment, payout_status: 'pending', updated_at: now() } }, { actor: 'system' });
  }

  /** The next thing the deal does at a time of its own: before a hold lapses, the buyer's reminder, the window's end, a payout check. */
  nextTimer(settings: DealSettings): TimedAction | undefined {
    const candidates: TimedAction[] = [];
    const hold = this.nextHoldAction(settings);
    if (hold) candidates.push({ at: hold.at, act: () => this.actBeforeLapse(hold.payment.id, settings) });
    const { delivery } = this.state;
    const latest = this.state.payments.at(-1);
    if (delivery?.inspection_ends_at && latest?.status === 'hold') {
      const ends = Date.parse(delivery.inspection_ends_at);
      if (!delivery.reminded_at && ends - DAY_MS > Date.parse(delivery.delivered_at!))
        candidates.push({ at: ends - DAY_MS, act: () => this.remindBuyer() });
      candidates.push({ at: ends, act: () => this.releaseAfterInspection() });
    }
    if ((this.state.payouts ?? []).some((payout) => payout.status === 'pending')) {
      if (this.payoutCheck.at === 0) this.payoutCheck.at = Date.now() + PAYOUT_CHECK_FIRST_MS;
      candidates.push({ at: this.payoutCheck.at, act: () => this.checkPayouts() });
    }
    return candidates.sort((a, b) => a.at - b.at)[0];
  }

  /** Cancelled before money is held: a live payment still pending is cancelled at the acquirer in the same step. */
  async cancel({ actor, reason }: CancelInput): Promise<void> {
    this.check('cancel', 'marketplace');
    const pending = this.pendingLivePayment();
    let payment: PaymentRecord | undefined;
    if (pending) {
      await this.acquirer.cancelEscrowPayment(pending.provider, pending.provider_payment_id!, `${pending.id}/refund`);
      payment = { ...pending, status: 'refunded', updated_at: now() };
    }
    await this.commit(
      { payment, cancellation: { actor, reason, cancelled_at: now() } },
      { actor, reason: reason || undefined },
    );
  }

  /** A message in the open dispute. Not a change of status, so no webhook; the other side hears of it by mail. */
  async addDisputeMessage(message: DisputeMessage): Promise<DisputeMessage> {
    this.check('message', 'administrator');
    const open = this.state.dispute!;
    const existing = open.messages.find((candidate) => candidate.id === message.id);
    if (existing) return existing;
    const dispute: DisputeRecord = { ...open, messages: [...open.messages, message] };
    const { documents, approvals, payments, cancellation, refunds, payouts, delivery } = this.state;
    await this.records.recordDealChange({
      dealId: this.dealId,
      status: this.status(),
      records: { documents, approvals, payments, dispute, cancellation, refunds, payouts, delivery },
      ...this.sized({ dispute }),
      message,
    });
    this.state.dispute = dispute;
    this.versionWritten();
    this.changes++;
    return message;
  }

  /** What the acquirer says of a live payment, re-read from its API. */
  async acquirerNews({ paymentId, status: reported }: AcquirerNotification): Promise<void> {
    const payment = this.state.payments.find((candidate) => candidate.id === paymentId);
    if (!payment) return;
    if (reported === 'hold' && payment.status === 'refunded') {
      // Cancelled here while pending, paid there anyway: return the money (the same key, so at most once).
      await this.acquirer.cancelEscrowPayment(payment.provider, payment.provider_payment_id!, `${payment.id}/refund`);
      return;
    }
    if (payment.status !== 'pending' || !PAYMENT_MOVES.pending.includes(reported)) return;
    const moved: PaymentRecord = { ...payment, status: reported, updated_at: now() };
    if (reported === 'hold') {
      const limit = this.holdLimits.get(paymentId) ?? 7 * 24 * 3600;
      moved.hold_expires_at = new Date(Date.now() + limit * 1000).toISOString();
    }
    await this.commit({ payment: moved }, { actor: 'acquirer' });
  }

  /** The hold limits a next run needs (continue-as-new): those of payments the acquirer has not confirmed yet. */
  pendingHoldLimits(): Record<string, number> {
    const pending = new Set(this.state.payments.filter((payment) => payment.status === 'pending').map((p) => p.id));
    return Object.fromEntries([...this.holdLimits].filter(([paymentId]) => pending.has(paymentId)));
  }

  /** The held payment whose lapse comes first, and when to act on it. */
  nextHoldAction(settings: DealSettings): { payment: PaymentRecord; at: number } | undefined {
    const held = this.state.payments.filter(
      (payment) => (payment.status === 'hold' || payment.status === 'disputed') && payment.hold_expires_at,
    );
    const first = held.sort((a, b) => a.hold_expires_at!.localeCompare(b.hold_expires_at!))[0];
    if (!first) return undefined;
    return { payment: first, at: Date.parse(first.hold_expires_at!) - settings.holdMarginSeconds * 1000 };
  }

  /**
   * The acquirer's hold lapses soon: act by policy before the money is released back on its own. A disputed payment
   * is not the policy's to release: it goes back to the buyer, as the acquirer would return it at the lapse.
   */
  async actBeforeLapse(paymentId: string, settings: DealSettings): Promise<void> {
    const current = this.nextHoldAction(settings)?.payment;
    if (current?.id !== paymentId) return;
    if (current.status === 'disputed' && this.patches.taken(ARBITER_DECIDES)) {
      const reason =
        "The acquirer's hold was about to lapse before the arbiter decided the dispute; the money goes back to the buyer, as the acquirer would return it.";
      await this.movePayment(current, 'refund', { actor: 'system', reason });
      return;
    }
    const reason = `The acquirer's hold was about to lapse; the service's policy is to ${settings.holdPolicy}.`;
    await this.movePayment(current, settings.holdPolicy, { actor: 'system', reason });
  }
}
