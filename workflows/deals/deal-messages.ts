// The messages a deal workflow answers. Updates where the caller needs an answer or a refusal; signals where it does
// not. A refusal is an ApplicationFailure whose `type` is the API's problem `code` (refuse(), src/temporal/refusal.ts),
// answered with the status the catalog gives that code.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ActorKind,
  ApprovalRecord,
  DealSnapshot,
  DeliveryRecord,
  DisputeMessage,
  DocumentRecord,
  EscrowProviderName,
  PaymentRecord,
  RefundRecord,
} from '../../src/deals/model.ts';
import type { PaymentAction } from '../../src/deals/rules.ts';

export interface NewDocument extends DocumentRecord {
  organization_id: string;
  storage_key: string;
}

export interface StartApprovalInput {
  approver: string;
  comment: string;
}

export interface DecideInput {
  approval_id: string;
  decision: 'approve' | 'reject';
  comment: string;
  /** The cabinet user's e-mail; must be the approver. */
  actor: string;
}

export interface StartEscrowInput {
  amount: number;
  description: string;
  provider: EscrowProviderName;
  return_url: string;
  /** How long the acquirer holds authorised money (the provider's holdLimitSeconds). */
  hold_limit_seconds: number;
  /**
   * 'buyer': the buyer pays from the cabinet (the rules' `pay`, and the held money is the buyer's move). Absent: the
   * marketplace or its widget, as every escrow before the cabinet's Pay.
   */
  payer?: 'buyer';
}

export interface MovePaymentInput {
  action: PaymentAction;
  /**
   * Buyers act from the cabinet; administrators move any deal's payment but a disputed one; the arbiter (an
   * administrator deciding with /escrow/resolve) moves only a disputed payment, which settles the dispute. The workflow
   * checks which when it applies the move (src/deals/rules.ts moveRefusal). `admin` is how histories from before actors
   * were told name an administrator.
   */
  actor: 'buyer' | 'administrator' | 'arbiter' | 'admin';
  /** Why: required of a dispute and of an arbiter's decision (the workflow refuses them without: reason_required). */
  reason?: string;
  /**
   * The arbiter's split of a disputed payment (action release): the two parts add up to what is held. `refund_id` (the
   * service's, the same on every retry of the request) keys the refund of its part at the acquirer.
   */
  split?: { release_amount: number; refund_amount: number; refund_id?: string };
}

export interface ShipInput {
  actor: 'marketplace' | 'seller';
  carrier: string;
  tracking: string;
}

export interface DeliverInput {
  actor: 'marketplace';
  /** The marketplace's inspection window (0: the money is released on delivery). */
  inspection_days: number;
}

export interface PartialRefundInput {
  /** Two decimals, part of the held money. */
  amount: number;
  reason: string;
  /**
   * Chosen by the service, the same on every retry of the request under its Idempotency-Key: the refund's id and its
   * key at the acquirer, so a retry after an answer lost refunds nothing twice.
   */
  refund_id?: string;
}

export interface CancelInput {
  actor: ActorKind;
  reason: string;
}

export interface DisputeMessageInput {
  message: DisputeMessage;
}

/** What a deal workflow run starts from: the records in PostgreSQL, and what a previous run left to do. */
export interface DealWorkflowInput {
  snapshot: DealSnapshot;
  settings: DealSettings;
  /** Webhook deliveries a previous run had not finished (continue-as-new). */
  pendingDeliveries?: string[];
  provisioned?: boolean;
  /**
   * The acquirer's hold limits (seconds) of live payments not yet held, by payment id (continue-as-new): the lapse is
   * dated from the acquirer's confirmation with the limit the escrow was started with, which no record keeps.
   */
  holdLimits?: Record<string, number>;
  /** The changes of the workflow's code the run takes without asking patched() (workflows/deals/patches.ts). */
  patchLevel?: number;
}

export interface DealSettings {
  /** What to do with money still held shortly before the acquirer's hold lapses. */
  holdPolicy: 'refund' | 'release';
  /** How long before the lapse to act. */
  holdMarginSeconds: number;
  /** Continue as new after this many history events (Temporal also suggests it on its own). */
  historyLimit: number;
}

/** The widget's Continue: a contract when the deal has no document, then an approval when none is pending or approved. */
export interface ContinueInput {
  marketplace_name: string;
  locale: 'ru' | 'en';
}

export interface AcquirerNotification {
  /** Our payment id. */
  paymentId: string;
  /** What the acquirer says after we re-read the payment from its API. */
  status: 'hold' | 'refunded';
}

export const addDocumentUpdate = defineUpdate<DocumentRecord, [NewDocument]>('addDocument');
export const startApprovalUpdate = defineUpdate<{ approval: ApprovalRecord; created: boolean }, [StartApprovalInput]>(
  'startApproval',
);
export const decideUpdate = defineUpdate<ApprovalRecord, [DecideInput]>('decide');
export const startEscrowUpdate = defineUpdate<{ payment: PaymentRecord; created: boolean }, [StartEscrowInput]>(
  'startEscrow',
);
export const movePaymentUpdate = defineUpdate<PaymentRecord, [MovePaymentInput]>('movePayment');
export const continueUpdate = defineUpdate<void, [ContinueInput]>('continue');
export const cancelUpdate = defineUpdate<void, [CancelInput]>('cancel');
export const shipUpdate = defineUpdate<DeliveryRecord, [ShipInput]>('ship');
export const deliverUpdate = defineUpdate<DeliveryRecord, [DeliverInput]>('deliver');
export const partialRefundUpdate = defineUpdate<RefundRecord, [PartialRefundInput]>('partialRefund');
/** The seller's or the marketplace's payout destination changed: a payout waiting for one, or failed, is made again. */
export const payoutDestinationSignal = defineSignal<[{ by: 'seller' | 'marketplace' }]>('payoutDestination');
export const disputeMessageUpdate = defineUpdate<DisputeMessage, [DisputeMessageInput]>('disputeMessage');
export const acquirerNotificationSignal = defineSignal<[AcquirerNotification]>('acquirerNotification');
/** What the acquirer says of one of our payouts, re-read from its API (src/escrow/notifications.ts). */
export interface PayoutNews {
  /** Our payout id. */
  payoutId: string;
  status: 'succeeded' | 'failed';
  failureReason: string | null;
}
export const payoutNewsSignal = defineSignal<[PayoutNews]>('payoutNews');

/** Write the deal as the workflow holds it to PostgreSQL once more, healing a write PostgreSQL lost. */
export const reassertSignal = defineSignal('reassert');
export const snapshotQuery = defineQuery<DealSnapshot>('snapshot');
