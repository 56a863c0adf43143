// One workflow per deal: the only writer of the deal after creation (DESIGN rule 1). Updates validate and answer,
// signals carry acquirer news; every change is persisted by an idempotent activity before it becomes the workflow's
// state, so a change the records refuse leaves the deal as it was. Webhook events go out one after another, in the
// order they happened. Deterministic code only.
//
// Changing this code: old histories must still replay (the determinism test in test/deal-workflow.test.ts replays
// test/fixtures/deal-histories). Guard a changed step with `patched('<change-id>')` and keep the old branch until no
// open workflow can take it.
import {
  ApplicationFailure,
  TemporalFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createDealActivities, DealRecords, HeldDocument } from '../activities/deals.ts';
import type { createEscrowActivities } from '../activities/escrow.ts';
import type { createContractActivities } from '../activities/contracts.ts';
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
  type DisputeRecord,
  type DocumentRecord,
  type PaymentRecord,
} from '../src/deals/model.ts';
import { ACTION_TARGET, refusal, type DealRole, type DealVerb, type PaymentAction } from '../src/deals/rules.ts';
import { dealSearchAttributes, DealStatusKey } from '../src/deals/search-attributes.ts';
import {
  acquirerNotificationSignal,
  addDocumentUpdate,
  cancelUpdate,
  continueUpdate,
  decideUpdate,
  disputeMessageUpdate,
  movePaymentUpdate,
  reassertSignal,
  snapshotQuery,
  startApprovalUpdate,
  startEscrowUpdate,
  type DealWorkflowInput,
  type MovePaymentInput,
  type NewDocument,
} from './deal-messages.ts';
import { deliverWebhookOrMarkFailed } from './webhook-options.ts';

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
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: ['acquirer_refused'] },
});

const contracts = proxyActivities<ReturnType<typeof createContractActivities>>({
  startToCloseTimeout: '60s',
  // The buyer waits on the widget: a few tries, then the Continue fails and may be pressed again.
  retry: { initialInterval: '1s', maximumAttempts: 5 },
});

/** Who made a change and why: the webhook's `actor` and `reason`, and the mails'. */
interface Why {
  actor: ActorKind;
  reason?: string;
}

/** A payment mover's place in the rules (histories before actors were told name an administrator `admin`). */
const moverRole = (actor: MovePaymentInput['actor']): DealRole => (actor === 'buyer' ? 'buyer' : 'administrator');
const moverActor = (move: MovePaymentInput): ActorKind => (move.actor === 'admin' ? 'administrator' : move.actor);

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

export async function dealWorkflow(input: DealWorkflowInput): Promise<void> {
  const localRecordsPatch = patched('local-records');
  const records = localRecordsPatch ? localRecords : serverRecords;
  // Re-asserting the records when a run starts from a previous one and before the workflow ends came later.
  const reassertPatch = patched('reassert-records');
  const recheckPatch = patched('exclusive-recheck');
  // Later still: an event for every status (deal.created, deal.docs, …), mails to the parties, and the new rules
  // (no documents while an approval is pending) checked in handlers as well as in validators.
  const peoplePatch = patched('deal-people');
  const state: Pick<DealSnapshot, 'deal'> & DealRecords = {
    ...input.snapshot,
    dispute: input.snapshot.dispute ?? null,
    cancellation: input.snapshot.cancellation ?? null,
  };
  const dealId = state.deal.id;
  const deliveries: string[] = [...(input.pendingDeliveries ?? [])];
  let busy = false;
  let changes = 0;

  const now = () => new Date().toISOString();
  const status = () => dealStatus(state);
  const fail = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });
  /** Refuses the verb the way the API would (the same rules, src/deals/rules.ts). */
  const check = (verb: DealVerb, role: DealRole) => {
    const refused = refusal(state, verb, role);
    if (refused) throw fail(refused.code, refused.message);
  };

  /** One change at a time: updates and signals that await activities must not interleave. */
  async function exclusive<T>(work: () => Promise<T>): Promise<T> {
    // Every waiter's condition turns true in the same activation when the holder finishes, and each resumes after
    // all were checked: only a check made on resuming lets exactly one through (patch 'exclusive-recheck'; before
    // it, concurrent updates could interleave, which only the widget's Continue, an update since then, relies on).
    if (recheckPatch) {
      while (busy) await condition(() => !busy);
    } else {
      await condition(() => !busy);
    }
    busy = true;
    try {
      return await work();
    } finally {
      busy = false;
    }
  }

  /**
   * Persists a change, with the webhook event its new status calls for, and only then makes it the workflow's state:
   * when the records refuse it (the activity fails), the deal stays exactly as it was, here and in PostgreSQL.
   * The write carries all the deal's records, so it also puts back anything an earlier write lost.
   */
  async function commit(
    change: { document?: NewDocument; approval?: ApprovalRecord; payment?: PaymentRecord; dispute?: DisputeRecord; cancellation?: CancellationRecord },
    why: Why,
  ): Promise<void> {
    const before = status();
    const next: DealRecords = {
      documents: change.document ? [...state.documents, change.document] : state.documents,
      approvals: change.approval ? withRecord(state.approvals, change.approval) : state.approvals,
      payments: change.payment ? withRecord(state.payments, change.payment) : state.payments,
      dispute: change.dispute ?? state.dispute,
      cancellation: change.cancellation ?? state.cancellation,
    };
    const after = dealStatus(next);
    const told = after !== before && (peoplePatch || FIRST_STATUS_EVENTS.includes(after));
    const event = told ? { id: uuid4(), deliveryId: uuid4(), type: statusEvent(after), occurredAt: now(), ...why } : undefined;
    // The activity also mails the people the change concerns (after its transaction, keyed by the event).
    const { deliveryId } = await records.recordDealChange({ dealId, status: after, event, records: next, notify: peoplePatch && event !== undefined });
    Object.assign(state, next);
    if (deliveryId) deliveries.push(deliveryId);
    if (after !== before) upsertSearchAttributes([{ key: DealStatusKey, value: after }]);
    changes++;
  }

  /**
   * Writes the records as this workflow holds them once more (idempotent upserts), for when PostgreSQL may have lost
   * a write the workflow already acted on. A refusal is logged, never fatal: the deal goes on as PostgreSQL has it.
   */
  async function reassert(): Promise<void> {
    try {
      const { documents, approvals, payments, dispute, cancellation } = state;
      await records.recordDealChange({ dealId, status: status(), records: { documents, approvals, payments, dispute, cancellation } });
    } catch (error) {
      if (!(error instanceof TemporalFailure) || isCancellation(error)) throw error;
      log.error('The deal records could not be re-asserted', { dealId, error: error.message });
    }
  }

  const pendingApproval = () => state.approvals.find((approval) => approval.status === 'pending');
  const pendingLivePayment = () => state.payments.find((payment) => payment.status === 'pending');

  function findApprovalToDecide(approvalId: string, actor: string): ApprovalRecord {
    const approval = state.approvals.find((candidate) => candidate.id === approvalId);
    if (!approval || approval.approver.toLowerCase() !== actor.toLowerCase()) throw fail('not_found', 'No such approval.');
    if (approval.status !== 'pending') throw fail('approval_not_pending', `The approval is already ${approval.status}.`);
    return approval;
  }

  function checkStartEscrow(amount: number): void {
    check('start_escrow', 'marketplace');
    if (!pendingLivePayment() && amount > state.deal.amount) {
      throw fail('amount_exceeds_deal', `The amount is more than the deal amount ${state.deal.amount}.`);
    }
  }

  function paymentToMove(move: MovePaymentInput): PaymentRecord {
    check(move.action, moverRole(move.actor));
    return state.payments.at(-1)!;
  }

  /** Moves the payment at the acquirer, then in the records; a dispute opens or is decided with it. */
  async function movePayment(payment: PaymentRecord, action: PaymentAction, why: Why): Promise<PaymentRecord> {
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
    } else if (payment.status === 'disputed' && state.dispute) {
      dispute = { ...state.dispute, status: 'decided', decision: { outcome: action, reason, decided_at: at } };
    }
    await commit({ payment: moved, dispute }, why);
    return moved;
  }

  // Hold limits of live payments not held yet, to date the lapse when the acquirer confirms the hold.
  const holdLimits = new Map<string, number>();

  setHandler(snapshotQuery, () => state);

  setHandler(
    addDocumentUpdate,
    (document) =>
      exclusive(async () => {
        const existing = state.documents.find((candidate) => candidate.id === document.id);
        if (existing) return documentRecord(existing);
        if (peoplePatch) check('add_document', 'marketplace');
        await commit({ document }, { actor: 'marketplace' });
        return documentRecord(document);
      }),
    { validator: (_document) => check('add_document', 'marketplace') },
  );

  setHandler(
    startApprovalUpdate,
    ({ approver, comment }) =>
      exclusive(async () => {
        check('start_approval', 'marketplace');
        const pending = pendingApproval();
        if (pending) return { approval: pending, created: false };
        if (approver.toLowerCase() !== state.deal.buyer_email.toLowerCase()) await records.provisionApprover(dealId, approver);
        const approval: ApprovalRecord = { id: uuid4(), status: 'pending', approver, comment, created_at: now(), decided_at: null };
        await commit({ approval }, { actor: 'marketplace' });
        return { approval, created: true };
      }),
    { validator: (_approval) => check('start_approval', 'marketplace') },
  );

  // The widget's Continue as one step of the deal's single writer: a double click, on one server or two, runs twice
  // in turn, and the second finds the contract and the approval the first made.
  setHandler(continueUpdate, ({ marketplace_name, locale }) =>
    exclusive(async () => {
      if (isFinal(status())) return;
      if (state.documents.length === 0) {
        const document = await contracts.prepareContract({ dealId, documentId: uuid4(), marketplaceName: marketplace_name, locale, createdAt: now() });
        await commit({ document }, { actor: 'buyer' });
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
        await commit({ approval }, { actor: 'buyer' });
      }
    }),
  );

  setHandler(
    decideUpdate,
    ({ approval_id, decision, comment, actor }) =>
      exclusive(async () => {
        const approval = findApprovalToDecide(approval_id, actor);
        const decided: ApprovalRecord = {
          ...approval,
          status: decision === 'approve' ? 'approved' : 'rejected',
          comment: comment || approval.comment,
          decided_at: now(),
        };
        const byBuyer = actor.toLowerCase() === state.deal.buyer_email.toLowerCase();
        // A rejection's comment is its reason; an approval's comment is the marketplace's request, not a reason.
        await commit({ approval: decided }, { actor: byBuyer ? 'buyer' : 'marketplace', reason: decision === 'reject' ? comment : undefined });
        return decided;
      }),
    { validator: ({ approval_id, actor }) => void findApprovalToDecide(approval_id, actor) },
  );

  setHandler(
    startEscrowUpdate,
    (escrow) =>
      exclusive(async () => {
        const amount = escrow.amount || state.deal.amount;
        checkStartEscrow(amount);
        const pending = pendingLivePayment();
        if (pending) return { payment: pending, created: false };
        const paymentId = uuid4();
        const created = await acquirer.createEscrowPayment(escrow.provider, {
          paymentId,
          dealId,
          amount,
          currency: state.deal.currency,
          description: escrow.description || state.deal.title || `Deal ${state.deal.external_id}`,
          returnUrl: escrow.return_url,
        });
        const at = now();
        const payment: PaymentRecord = {
          id: paymentId,
          amount,
          currency: state.deal.currency,
          provider: escrow.provider,
          status: created.status,
          payment_url: created.paymentUrl,
          provider_payment_id: created.providerPaymentId,
          hold_expires_at: created.status === 'hold' ? new Date(Date.now() + escrow.hold_limit_seconds * 1000).toISOString() : null,
          created_at: at,
          updated_at: at,
        };
        // The sandbox holds at once (the marketplace asked); a live payment is held when the acquirer says so.
        await commit({ payment }, { actor: created.status === 'hold' ? 'marketplace' : 'acquirer' });
        holdLimits.set(paymentId, escrow.hold_limit_seconds);
        return { payment, created: true };
      }),
    { validator: (escrow) => checkStartEscrow(escrow.amount || state.deal.amount) },
  );

  setHandler(
    movePaymentUpdate,
    (move) => exclusive(() => movePayment(paymentToMove(move), move.action, { actor: moverActor(move), reason: move.reason || undefined })),
    { validator: (move) => void paymentToMove(move) },
  );

  // Cancelled before money is held: a live payment still pending is cancelled at the acquirer in the same step.
  setHandler(
    cancelUpdate,
    ({ actor, reason }) =>
      exclusive(async () => {
        check('cancel', 'marketplace');
        const pending = pendingLivePayment();
        let payment: PaymentRecord | undefined;
        if (pending) {
          await acquirer.cancelEscrowPayment(pending.provider, pending.provider_payment_id!, `${pending.id}/refund`);
          payment = { ...pending, status: 'refunded', updated_at: now() };
        }
        await commit({ payment, cancellation: { actor, reason, cancelled_at: now() } }, { actor, reason: reason || undefined });
      }),
    { validator: (_cancel) => check('cancel', 'marketplace') },
  );

  setHandler(
    disputeMessageUpdate,
    ({ message }) =>
      exclusive(async () => {
        check('message', 'administrator');
        const existing = state.dispute!.messages.find((candidate) => candidate.id === message.id);
        if (existing) return existing;
        const dispute: DisputeRecord = { ...state.dispute!, messages: [...state.dispute!.messages, message] };
        // Not a change of status, so no webhook; the other side hears of it by mail.
        const { documents, approvals, payments, cancellation } = state;
        await records.recordDealChange({ dealId, status: status(), records: { documents, approvals, payments, dispute, cancellation }, message });
        state.dispute = dispute;
        changes++;
        return message;
      }),
    { validator: (_message) => check('message', 'administrator') },
  );

  setHandler(acquirerNotificationSignal, ({ paymentId, status: reported }) =>
    exclusive(async () => {
      const payment = state.payments.find((candidate) => candidate.id === paymentId);
      if (!payment) return;
      if (reported === 'hold' && payment.status === 'refunded') {
        // Cancelled here while pending, paid there anyway: return the money (the same key, so at most once).
        await acquirer.cancelEscrowPayment(payment.provider, payment.provider_payment_id!, `${payment.id}/refund`);
        return;
      }
      if (payment.status !== 'pending' || !PAYMENT_MOVES.pending.includes(reported)) return;
      const moved: PaymentRecord = { ...payment, status: reported, updated_at: now() };
      if (reported === 'hold') {
        const limit = holdLimits.get(paymentId) ?? 7 * 24 * 3600;
        moved.hold_expires_at = new Date(Date.now() + limit * 1000).toISOString();
      }
      await commit({ payment: moved }, { actor: 'acquirer' });
    }),
  );

  // Sent when PostgreSQL may have lost writes (a worker starting sends it to every open deal: src/worker.ts).
  setHandler(reassertSignal, () => exclusive(reassert));

  if (!localRecordsPatch) {
    // Before the patch runs repeated what the start request (and continue-as-new) already sets.
    upsertSearchAttributes(dealSearchAttributes(state.deal, status()));
    upsertMemo({ title: state.deal.title });
  }
  // A run that continues an earlier one starts from that run's memory: PostgreSQL gets it once more.
  if (reassertPatch && workflowInfo().continuedFromExecutionRunId) await exclusive(reassert);
  if (!input.provisioned) {
    const created = await records.provisionParties(dealId);
    // The API wrote deal.created with the deal, before any change could happen: it goes first.
    if (peoplePatch && created?.deliveryId) deliveries.unshift(created.deliveryId);
  }

  /** The held payment whose lapse comes first, and when to act on it. */
  const nextHoldAction = () => {
    const held = state.payments.filter((payment) => (payment.status === 'hold' || payment.status === 'disputed') && payment.hold_expires_at);
    const first = held.sort((a, b) => a.hold_expires_at!.localeCompare(b.hold_expires_at!))[0];
    if (!first) return undefined;
    return { payment: first, at: Date.parse(first.hold_expires_at!) - input.settings.holdMarginSeconds * 1000 };
  };

  let reassertedAtEnd = false;
  for (;;) {
    const seen = changes;
    const hold = nextHoldAction();
    const woke = await condition(
      () =>
        deliveries.length > 0 ||
        changes !== seen ||
        (isFinal(status()) && !busy) ||
        workflowInfo().continueAsNewSuggested ||
        workflowInfo().historyLength > input.settings.historyLimit,
      hold ? Math.max(hold.at - Date.now(), 1) : undefined,
    );
    if (deliveries.length > 0) {
      // One after another, so the marketplace gets this deal's events in order; a failed one does not block the rest.
      await deliverWebhookOrMarkFailed(deliveries[0]!);
      deliveries.shift();
      continue;
    }
    if (!woke && hold) {
      // The acquirer's hold lapses soon: act by policy before the money is released back on its own.
      await exclusive(async () => {
        const current = nextHoldAction()?.payment;
        const reason = `The acquirer's hold was about to lapse; the service's policy is to ${input.settings.holdPolicy}.`;
        if (current?.id === hold.payment.id) await movePayment(current, input.settings.holdPolicy, { actor: 'system', reason });
      });
      continue;
    }
    if (changes !== seen) continue;
    if (isFinal(status()) && !busy && allHandlersFinished()) {
      if (!reassertPatch || reassertedAtEnd) return;
      // After the end nothing could heal a lost write any more: the final state goes to PostgreSQL once more.
      await exclusive(reassert);
      reassertedAtEnd = true;
      continue;
    }
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > input.settings.historyLimit) {
      await condition(() => !busy && allHandlersFinished());
      if (deliveries.length > 0) continue;
      await continueAsNew<typeof dealWorkflow>({ ...input, snapshot: state, pendingDeliveries: deliveries, provisioned: true });
    }
  }
}
