// The deal as its workflow holds it: the records, one change at a time, and every verb the workflow answers. Each
// change is persisted by an idempotent activity before it becomes this state, so a change the records refuse leaves
// the deal as it was. The rules of who may do what come from src/deals/rules.ts, as the API and the pages use them.
// Deterministic code only (it runs inside the workflow): see workflows/deals/deal.ts for the patches it is given.
import {
  TemporalFailure,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { createDealActivities, DealRecords, HeldDocument } from '../../activities/deals/records.ts';
import type { createEscrowActivities } from '../../activities/deals/escrow.ts';
import type { createContractActivities } from '../../activities/deals/contracts.ts';
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
  type DisputeMessage,
  type DisputeRecord,
  type DocumentRecord,
  type PaymentRecord,
} from '../../src/deals/model.ts';
import { ACTION_TARGET, moveRefusal, refusal, type DealRole, type DealVerb, type PaymentAction } from '../../src/deals/rules.ts';
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
  MovePaymentInput,
  NewDocument,
  StartApprovalInput,
  StartEscrowInput,
} from './deal-messages.ts';

// Retried for as long as it takes (PostgreSQL may be restarting); a write refused for its data is not retried at all:
// the activity fails it as non-retryable `invalid_record`, and the change is refused.
const RECORDS_OPTIONS = { startToCloseTimeout: '30s', retry: { initialInterval: '1s', maximumInterval: '1m' } } as const;
// Our own database writes are short: local activities run them in the worker without a round trip through the
// Temporal server per write (patch 'local-records'; the server-side activities remain for histories made before it).
const localRecords = proxyLocalActivities<ReturnType<typeof createDealActivities>>(RECORDS_OPTIONS);
const serverRecords = proxyActivities<ReturnType<typeof createDealActivities>>(RECORDS_OPTIONS);
const acquirer = proxyActivities<ReturnType<typeof createEscrowActivities>>({
  startToCloseTimeout: '30s',
  // The caller waits for the answer: give up after a few tries; idempotence keys make every retry safe.
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: ['acquirer_refused' satisfies ProblemCode] },
});
const contracts = proxyActivities<ReturnType<typeof createContractActivities>>({
  startToCloseTimeout: '60s',
  // The buyer waits on the widget: a few tries, then the Continue fails and may be pressed again.
  retry: { initialInterval: '1s', maximumAttempts: 5 },
});

/** Which changes of this code the running history has seen (workflows/deals/deal.ts asks `patched()` for each). */
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
}

/** Who made a change and why: the webhook's `actor` and `reason`, and the mails'. */
interface Why {
  actor: ActorKind;
  reason?: string;
}

type Change = { document?: NewDocument; approval?: ApprovalRecord; payment?: PaymentRecord; dispute?: DisputeRecord; cancellation?: CancellationRecord };

/**
 * Asked where a move is applied, not when a run starts, so open deals take it at their next move: from then on a
 * disputed payment moves only by the arbiter's decision with a reason, whatever the mover read before, and a hold about
 * to lapse on a disputed payment goes back to the buyer (as the acquirer would return it), never to the seller by policy.
 * Before it, an administrator's move of a disputed payment decided the dispute, and the service chose whether the mover
 * was the arbiter from what it had read.
 */
const ARBITER_DECIDES = 'arbiter-decides-disputes';

/** A payment mover's place in the rules (histories before actors were told name an administrator `admin`). */
const moverRole = (actor: MovePaymentInput['actor']): DealRole => (actor === 'buyer' ? 'buyer' : actor === 'arbiter' ? 'arbiter' : 'administrator');
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
  readonly state: Pick<DealSnapshot, 'deal'> & DealRecords;
  readonly dealId: string;
  /** Webhook deliveries to send, in the order their events happened. */
  readonly deliveries: string[];
  /** How many changes were committed: the workflow's loop wakes on a new one. */
  changes = 0;
  /** A change is under way (exclusive()). */
  busy = false;
  readonly records: typeof localRecords;
  // Hold limits of live payments not held yet, to date the lapse when the acquirer confirms the hold.
  private readonly holdLimits = new Map<string, number>();

  constructor(
    input: DealWorkflowInput,
    readonly patches: DealPatches,
  ) {
    this.state = { ...input.snapshot, dispute: input.snapshot.dispute ?? null, cancellation: input.snapshot.cancellation ?? null };
    this.dealId = this.state.deal.id;
    this.deliveries = [...(input.pendingDeliveries ?? [])];
    this.records = patches.localRecords ? localRecords : serverRecords;
  }

  /**
   * Takes the deal as PostgreSQL has it. A run started again after an earlier one ended (an update or acquirer news
   * that came late) was given the snapshot its caller read, which can be older than what the ended run wrote: a late
   * dispute must meet the released payment, not the held one its caller saw. Changed in place: the workflow holds it.
   */
  adopt(snapshot: DealSnapshot): void {
    Object.assign(this.state, { ...snapshot, dispute: snapshot.dispute ?? null, cancellation: snapshot.cancellation ?? null });
  }

  status(): DealStatus {
    return dealStatus(this.state);
  }

  /** Refuses the verb the way the API would (the same rules, src/deals/rules.ts). */
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
   * The write carries all the deal's records, so it also puts back anything an earlier write lost.
   */
  private async commit(change: Change, why: Why): Promise<void> {
    const { state } = this;
    const before = this.status();
    const next: DealRecords = {
      documents: change.document ? [...state.documents, change.document] : state.documents,
      approvals: change.approval ? withRecord(state.approvals, change.approval) : state.approvals,
      payments: change.payment ? withRecord(state.payments, change.payment) : state.payments,
      dispute: change.dispute ?? state.dispute,
      cancellation: change.cancellation ?? state.cancellation,
    };
    const after = dealStatus(next);
    const told = after !== before && (this.patches.people || FIRST_STATUS_EVENTS.includes(after));
    const event = told ? { id: uuid4(), deliveryId: uuid4(), type: statusEvent(after), occurredAt: now(), ...why } : undefined;
    // The activity also mails the people the change concerns (after its transaction, keyed by the event).
    const { deliveryId } = await this.records.recordDealChange({
      dealId: this.dealId,
      status: after,
      event,
      records: next,
      notify: this.patches.people && event !== undefined,
    });
    Object.assign(state, next);
    if (deliveryId) this.deliveries.push(deliveryId);
    if (after !== before) upsertSearchAttributes([{ key: DealStatusKey, value: after }]);
    this.changes++;
  }

  /**
   * Writes the records as this workflow holds them once more (idempotent upserts), for when PostgreSQL may have lost
   * a write the workflow already acted on. A refusal is logged, never fatal: the deal goes on as PostgreSQL has it.
   */
  async reassert(): Promise<void> {
    try {
      const { documents, approvals, payments, dispute, cancellation } = this.state;
      await this.records.recordDealChange({ dealId: this.dealId, status: this.status(), records: { documents, approvals, payments, dispute, cancellation } });
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

  async startApproval({ approver, comment }: StartApprovalInput): Promise<{ approval: ApprovalRecord; created: boolean }> {
    this.check('start_approval', 'marketplace');
    const pending = this.pendingApproval();
    if (pending) return { approval: pending, created: false };
    if (approver.toLowerCase() !== this.state.deal.buyer_email.toLowerCase()) await this.records.provisionApprover(this.dealId, approver);
    const approval: ApprovalRecord = { id: uuid4(), status: 'pending', approver, comment, created_at: now(), decided_at: null };
    await this.commit({ approval }, { actor: 'marketplace' });
    return { approval, created: true };
  }

  /** The widget's Continue: a contract when the deal has no document, then the buyer's approval when none is pending or approved. */
  async continueDeal({ marketplace_name, locale }: ContinueInput): Promise<void> {
    const { state } = this;
    if (isFinal(this.status())) return;
    if (state.documents.length === 0) {
      const document = await contracts.prepareContract({ dealId: this.dealId, documentId: uuid4(), marketplaceName: marketplace_name, locale, createdAt: now() });
      await this.commit({ document }, { actor: 'buyer' });
    }
    const latest = state.approvals.at(-1)?.status;
    if (latest === undefined || latest === 'rejected') {
      const approval: ApprovalRecord = { id: uuid4(), status: 'pending', approver: state.deal.buyer_email, comment: '', created_at: now(), decided_at: null };
      await this.commit({ approval }, { actor: 'buyer' });
    }
  }

  /** The approval the actor may decide now, or a refusal: another person's approval does not exist for them. */
  approvalToDecide(approvalId: string, actor: string): ApprovalRecord {
    const approval = this.state.approvals.find((candidate) => candidate.id === approvalId);
    if (!approval || approval.approver.toLowerCase() !== actor.toLowerCase()) throw refuse('not_found', 'No such approval.');
    if (approval.status !== 'pending') throw refuse('approval_not_pending', `The approval is already ${approval.status}.`);
    return approval;
  }

  async decide({ approval_id, decision, comment, actor }: DecideInput): Promise<ApprovalRecord> {
    const approval = this.approvalToDecide(approval_id, actor);
    const decided: ApprovalRecord = { ...approval, status: decision === 'approve' ? 'approved' : 'rejected', comment: comment || approval.comment, decided_at: now() };
    const byBuyer = actor.toLowerCase() === this.state.deal.buyer_email.toLowerCase();
    // A rejection's comment is its reason; an approval's comment is the marketplace's request, not a reason.
    await this.commit({ approval: decided }, { actor: byBuyer ? 'buyer' : 'marketplace', reason: decision === 'reject' ? comment : undefined });
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
    const created = await acquirer.createEscrowPayment(escrow.provider, {
      paymentId,
      dealId: this.dealId,
      amount,
      currency: deal.currency,
      description: escrow.description || deal.title || `Deal ${deal.external_id}`,
      returnUrl: escrow.return_url,
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
      hold_expires_at: created.status === 'hold' ? new Date(Date.now() + escrow.hold_limit_seconds * 1000).toISOString() : null,
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
      const refused = moveRefusal(this.state, { action: move.action, role: moverRole(move.actor), reason: move.reason });
      if (refused) throw refuse(refused.code, refused.message);
    }
    return payment!;
  }

  movePaymentAsAsked(move: MovePaymentInput): Promise<PaymentRecord> {
    const payment = this.paymentToMove(move, patched(ARBITER_DECIDES) ? 'current' : 'legacy');
    return this.movePayment(payment, move.action, { actor: moverActor(move), reason: move.reason || undefined });
  }

  /** Moves the payment at the acquirer, then in the records; a dispute opens or is decided with it. */
  private async movePayment(payment: PaymentRecord, action: PaymentAction, why: Why): Promise<PaymentRecord> {
    const key = `${payment.id}/${action}`;
    if (action === 'release') {
      await acquirer.captureEscrowPayment(payment.provider, payment.provider_payment_id!, payment.amount, payment.currency, key);
    } else if (action === 'refund') {
      await acquirer.cancelEscrowPayment(payment.provider, payment.provider_payment_id!, key);
    }
    const at = now();
    const moved: PaymentRecord = { ...payment, status: ACTION_TARGET[action], updated_at: at };
    const reason = why.reason ?? '';
    let dispute: DisputeRecord | undefined;
    if (action === 'dispute') {
      dispute = { status: 'open', reason, opened_by: why.actor, opened_at: at, messages: [], decision: null };
    } else if (payment.status === 'disputed' && this.state.dispute) {
      dispute = { ...this.state.dispute, status: 'decided', decision: { outcome: action, reason, decided_at: at } };
    }
    await this.commit({ payment: moved, dispute }, why);
    return moved;
  }

  /** Cancelled before money is held: a live payment still pending is cancelled at the acquirer in the same step. */
  async cancel({ actor, reason }: CancelInput): Promise<void> {
    this.check('cancel', 'marketplace');
    const pending = this.pendingLivePayment();
    let payment: PaymentRecord | undefined;
    if (pending) {
      await acquirer.cancelEscrowPayment(pending.provider, pending.provider_payment_id!, `${pending.id}/refund`);
      payment = { ...pending, status: 'refunded', updated_at: now() };
    }
    await this.commit({ payment, cancellation: { actor, reason, cancelled_at: now() } }, { actor, reason: reason || undefined });
  }

  /** A message in the open dispute. Not a change of status, so no webhook; the other side hears of it by mail. */
  async addDisputeMessage(message: DisputeMessage): Promise<DisputeMessage> {
    this.check('message', 'administrator');
    const open = this.state.dispute!;
    const existing = open.messages.find((candidate) => candidate.id === message.id);
    if (existing) return existing;
    const dispute: DisputeRecord = { ...open, messages: [...open.messages, message] };
    const { documents, approvals, payments, cancellation } = this.state;
    await this.records.recordDealChange({ dealId: this.dealId, status: this.status(), records: { documents, approvals, payments, dispute, cancellation }, message });
    this.state.dispute = dispute;
    this.changes++;
    return message;
  }

  /** What the acquirer says of a live payment, re-read from its API. */
  async acquirerNews({ paymentId, status: reported }: AcquirerNotification): Promise<void> {
    const payment = this.state.payments.find((candidate) => candidate.id === paymentId);
    if (!payment) return;
    if (reported === 'hold' && payment.status === 'refunded') {
      // Cancelled here while pending, paid there anyway: return the money (the same key, so at most once).
      await acquirer.cancelEscrowPayment(payment.provider, payment.provider_payment_id!, `${payment.id}/refund`);
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

  /** The held payment whose lapse comes first, and when to act on it. */
  nextHoldAction(settings: DealSettings): { payment: PaymentRecord; at: number } | undefined {
    const held = this.state.payments.filter((payment) => (payment.status === 'hold' || payment.status === 'disputed') && payment.hold_expires_at);
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
    if (current.status === 'disputed' && patched(ARBITER_DECIDES)) {
      const reason = "The acquirer's hold was about to lapse before the arbiter decided the dispute; the money goes back to the buyer, as the acquirer would return it.";
      await this.movePayment(current, 'refund', { actor: 'system', reason });
      return;
    }
    const reason = `The acquirer's hold was about to lapse; the service's policy is to ${settings.holdPolicy}.`;
    await this.movePayment(current, settings.holdPolicy, { actor: 'system', reason });
  }
}
