// The messages a deal workflow answers. Updates where the caller needs an answer or a refusal; signals where it does
// not. Failures carry an ApplicationFailure whose `type` is the API's problem `code` (see src/deals/workflow-errors.ts).
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ApprovalRecord, DealSnapshot, DocumentRecord, EscrowProviderName, PaymentRecord } from '../src/deals/model.ts';

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
}

export type PaymentAction = 'release' | 'refund' | 'dispute';

export interface MovePaymentInput {
  action: PaymentAction;
  /** Buyers act from the cabinet; administrators may also resolve disputes. */
  actor: 'buyer' | 'admin';
}

export interface AcquirerNotification {
  /** Our payment id. */
  paymentId: string;
  /** What the acquirer says after we re-read the payment from its API. */
  status: 'hold' | 'refunded';
}

export const addDocumentUpdate = defineUpdate<DocumentRecord, [NewDocument]>('addDocument');
export const startApprovalUpdate = defineUpdate<{ approval: ApprovalRecord; created: boolean }, [StartApprovalInput]>('startApproval');
export const decideUpdate = defineUpdate<ApprovalRecord, [DecideInput]>('decide');
export const startEscrowUpdate = defineUpdate<{ payment: PaymentRecord; created: boolean }, [StartEscrowInput]>('startEscrow');
export const movePaymentUpdate = defineUpdate<PaymentRecord, [MovePaymentInput]>('movePayment');
export const acquirerNotificationSignal = defineSignal<[AcquirerNotification]>('acquirerNotification');
export const snapshotQuery = defineQuery<DealSnapshot>('snapshot');
