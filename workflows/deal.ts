// One workflow per deal: the only writer of the deal after creation (DESIGN rule 1). Updates validate and answer,
// signals carry acquirer news; every change is persisted by an idempotent activity, and webhook events go out one
// after another, in the order they happened. Deterministic code only.
//
// Changing this code: old histories must still replay (test/deal-replay.test.ts). Guard a changed step with
// `patched('<change-id>')` and keep the old branch until no open workflow can take it.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createDealActivities, DealChange } from '../activities/deals.ts';
import type { createEscrowActivities } from '../activities/escrow.ts';
import {
  dealStatus,
  isFinal,
  PAYMENT_MOVES,
  STATUS_EVENTS,
  type ApprovalRecord,
  type DealSnapshot,
  type PaymentRecord,
  type PaymentStatus,
} from '../src/deals/model.ts';
import { dealSearchAttributes, DealStatusKey } from '../src/deals/search-attributes.ts';
import {
  acquirerNotificationSignal,
  addDocumentUpdate,
  decideUpdate,
  movePaymentUpdate,
  snapshotQuery,
  startApprovalUpdate,
  startEscrowUpdate,
  type DealWorkflowInput,
  type MovePaymentInput,
  type PaymentAction,
} from './deal-messages.ts';
import { deliverWebhookOrMarkFailed } from './webhook-options.ts';

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

const ACTION_TARGET: Record<PaymentAction, PaymentStatus> = { release: 'released', refund: 'refunded', dispute: 'disputed' };

export async function dealWorkflow(input: DealWorkflowInput): Promise<void> {
  const localRecordsPatch = patched('local-records');
  const records = localRecordsPatch ? localRecords : serverRecords;
  const state: DealSnapshot = input.snapshot;
  const dealId = state.deal.id;
  const deliveries: string[] = [...(input.pendingDeliveries ?? [])];
  let busy = false;
  let changes = 0;

  const now = () => new Date().toISOString();
  const status = () => dealStatus(state);
  const fail = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

  /** One change at a time: updates and signals that await activities must not interleave. */
  async function exclusive<T>(work: () => Promise<T>): Promise<T> {
    await condition(() => !busy);
    busy = true;
    try {
      return await work();
    } finally {
      busy = false;
    }
  }

  /** Persists a change that is already applied to `state`, with the webhook event its new status calls for. */
  async function persist(before: string, change: Omit<DealChange, 'dealId' | 'status' | 'event'>): Promise<void> {
    const after = status();
    const type = after !== before ? STATUS_EVENTS[after] : undefined;
    const event = type ? { id: uuid4(), deliveryId: uuid4(), type, occurredAt: now() } : undefined;
    const { deliveryId } = await records.recordDealChange({ dealId, status: after, event, ...change });
    if (deliveryId) deliveries.push(deliveryId);
    if (after !== before) upsertSearchAttributes([{ key: DealStatusKey, value: after }]);
    changes++;
  }

  const pendingApproval = () => state.approvals.find((approval) => approval.status === 'pending');
  const pendingLivePayment = () => state.payments.find((payment) => payment.status === 'pending');
  const latestPayment = () => state.payments.at(-1);

  function checkStartApproval(): void {
    if (pendingApproval()) return;
    if (state.documents.length === 0) throw fail('no_documents', 'Attach at least one document before starting the approval.');
    if (!['docs', 'rejected'].includes(status())) {
      throw fail('approval_not_allowed', `An approval cannot start while the deal is ${status()}.`);
    }
  }

  function findApprovalToDecide(approvalId: string, actor: string): ApprovalRecord {
    const approval = state.approvals.find((candidate) => candidate.id === approvalId);
    if (!approval || approval.approver.toLowerCase() !== actor.toLowerCase()) throw fail('not_found', 'No such approval.');
    if (approval.status !== 'pending') throw fail('approval_not_pending', `The approval is already ${approval.status}.`);
    return approval;
  }

  function checkStartEscrow(amount: number): void {
    if (pendingLivePayment()) return;
    if (status() !== 'approved') {
      throw fail('deal_not_approved', `Escrow starts only for an approved deal; this one is ${status()}.`);
    }
    if (amount > state.deal.amount) throw fail('amount_exceeds_deal', `The amount is more than the deal amount ${state.deal.amount}.`);
  }

  function paymentToMove({ action, actor }: MovePaymentInput): PaymentRecord {
    const payment = latestPayment();
    if (!payment) throw fail('invalid_payment_state', 'The deal has no payment.');
    const target = ACTION_TARGET[action];
    const allowed = PAYMENT_MOVES[payment.status].includes(target) && (payment.status !== 'disputed' || actor === 'admin');
    if (!allowed || (action === 'release' && payment.status === 'pending')) {
      throw fail('invalid_payment_state', `A ${payment.status} payment cannot be moved to ${target}${payment.status === 'disputed' ? ' except by the arbiter' : ''}.`);
    }
    return payment;
  }

  async function movePayment(payment: PaymentRecord, action: PaymentAction): Promise<PaymentRecord> {
    const before = status();
    const key = `${payment.id}/${action}`;
    if (action === 'release') {
      await acquirer.captureEscrowPayment(payment.provider, payment.provider_payment_id!, payment.amount, payment.currency, key);
    } else if (action === 'refund') {
      await acquirer.cancelEscrowPayment(payment.provider, payment.provider_payment_id!, key);
    }
    payment.status = ACTION_TARGET[action];
    payment.updated_at = now();
    await persist(before, { payment });
    return payment;
  }

  // Hold limits of live payments not held yet, to date the lapse when the acquirer confirms the hold.
  const holdLimits = new Map<string, number>();

  setHandler(snapshotQuery, () => state);

  setHandler(
    addDocumentUpdate,
    (document) =>
      exclusive(async () => {
        const existing = state.documents.find((candidate) => candidate.id === document.id);
        if (existing) return existing;
        const before = status();
        const { organization_id: _org, storage_key: _key, ...record } = document;
        state.documents.push(record);
        await persist(before, { document });
        return record;
      }),
    {
      validator: (_document) => {
        if (isFinal(status())) throw fail('deal_closed', `The deal is ${status()}; it takes no more documents.`);
      },
    },
  );

  setHandler(
    startApprovalUpdate,
    ({ approver, comment }) =>
      exclusive(async () => {
        checkStartApproval();
        const pending = pendingApproval();
        if (pending) return { approval: pending, created: false };
        const before = status();
        if (approver.toLowerCase() !== state.deal.buyer_email.toLowerCase()) await records.provisionApprover(dealId, approver);
        const approval: ApprovalRecord = { id: uuid4(), status: 'pending', approver, comment, created_at: now(), decided_at: null };
        state.approvals.push(approval);
        await persist(before, { approval });
        return { approval, created: true };
      }),
    { validator: (_approval) => checkStartApproval() },
  );

  setHandler(
    decideUpdate,
    ({ approval_id, decision, comment, actor }) =>
      exclusive(async () => {
        const approval = findApprovalToDecide(approval_id, actor);
        const before = status();
        approval.status = decision === 'approve' ? 'approved' : 'rejected';
        approval.comment = comment || approval.comment;
        approval.decided_at = now();
        await persist(before, { approval });
        return approval;
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
        const before = status();
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
        holdLimits.set(paymentId, escrow.hold_limit_seconds);
        state.payments.push(payment);
        await persist(before, { payment });
        return { payment, created: true };
      }),
    { validator: (escrow) => checkStartEscrow(escrow.amount || state.deal.amount) },
  );

  setHandler(
    movePaymentUpdate,
    (move) => exclusive(() => movePayment(paymentToMove(move), move.action)),
    { validator: (move) => void paymentToMove(move) },
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
      const before = status();
      payment.status = reported;
      payment.updated_at = now();
      if (reported === 'hold') {
        const limit = holdLimits.get(paymentId) ?? 7 * 24 * 3600;
        payment.hold_expires_at = new Date(Date.now() + limit * 1000).toISOString();
      }
      await persist(before, { payment });
    }),
  );

  if (!localRecordsPatch) {
    // Before the patch runs repeated what the start request (and continue-as-new) already sets.
    upsertSearchAttributes(dealSearchAttributes(state.deal, status()));
    upsertMemo({ title: state.deal.title });
  }
  if (!input.provisioned) await records.provisionParties(dealId);

  /** The held payment whose lapse comes first, and when to act on it. */
  const nextHoldAction = () => {
    const held = state.payments.filter((payment) => (payment.status === 'hold' || payment.status === 'disputed') && payment.hold_expires_at);
    const first = held.sort((a, b) => a.hold_expires_at!.localeCompare(b.hold_expires_at!))[0];
    if (!first) return undefined;
    return { payment: first, at: Date.parse(first.hold_expires_at!) - input.settings.holdMarginSeconds * 1000 };
  };

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
        if (nextHoldAction()?.payment.id === hold.payment.id) await movePayment(hold.payment, input.settings.holdPolicy);
      });
      continue;
    }
    if (changes !== seen) continue;
    if (isFinal(status()) && !busy && allHandlersFinished()) return;
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > input.settings.historyLimit) {
      await condition(() => !busy && allHandlersFinished());
      if (deliveries.length > 0) continue;
      await continueAsNew<typeof dealWorkflow>({ ...input, snapshot: state, pendingDeliveries: deliveries, provisioned: true });
    }
  }
}
