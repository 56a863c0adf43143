// The deal's records and the one pure function that computes its status from them. Pure on purpose: the workflow
// (deterministic code) and the API both import it, so they can never disagree.

export const DEAL_STATUSES = [
  'created',
  'docs',
  'approval',
  'approved',
  'rejected',
  'escrow_hold',
  'paid',
  'refunded',
  'disputed',
  'cancelled',
] as const;
export type DealStatus = (typeof DEAL_STATUSES)[number];

export const DOCUMENT_KINDS = ['offer', 'contract', 'invoice', 'act', 'waybill'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

export type ApprovalStatus = 'pending' | 'approved' | 'rejected';
export const PAYMENT_STATUSES = ['pending', 'hold', 'released', 'refunded', 'disputed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export type EscrowProviderName = 'sandbox' | 'yookassa';

export interface DealRecord {
  id: string;
  marketplace_id: string;
  external_id: string;
  title: string;
  buyer_email: string;
  buyer_name: string;
  seller_email: string;
  amount: number;
  /**
   * The marketplace's fee, fixed at creation (src/money/fee.ts). Absent in the snapshots of workflows started before
   * fees (their deals take none); the API reads it from PostgreSQL, never from the workflow.
   */
  fee?: number;
  currency: string;
  description: string;
  created_at: string;
  updated_at: string;
}

export interface DocumentRecord {
  id: string;
  kind: DocumentKind;
  name: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: string;
}

export interface ApprovalRecord {
  id: string;
  status: ApprovalStatus;
  approver: string;
  comment: string;
  created_at: string;
  decided_at: string | null;
}

export interface PaymentRecord {
  id: string;
  amount: number;
  currency: string;
  provider: EscrowProviderName;
  status: PaymentStatus;
  payment_url: string | null;
  provider_payment_id: string | null;
  hold_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Who made a move: the webhook's `actor`. */
export const ACTORS = ['marketplace', 'buyer', 'seller', 'administrator', 'arbiter', 'acquirer', 'system'] as const;
export type ActorKind = (typeof ACTORS)[number];

export const DISPUTE_AUTHORS = ['buyer', 'seller', 'marketplace', 'arbiter'] as const;
export type DisputeAuthor = (typeof DISPUTE_AUTHORS)[number];

/** An evidence file; where it is stored stays inside (views show id, name and size). */
export interface DisputeFile {
  id: string;
  name: string;
  size: number;
  content_type: string;
  storage_key: string;
}

export interface DisputeMessage {
  id: string;
  author: DisputeAuthor;
  text: string;
  files: DisputeFile[];
  created_at: string;
}

export interface DisputeRecord {
  status: 'open' | 'decided';
  reason: string;
  opened_by: ActorKind;
  opened_at: string;
  messages: DisputeMessage[];
  decision: { outcome: 'release' | 'refund'; reason: string; decided_at: string } | null;
}

export interface CancellationRecord {
  actor: ActorKind;
  reason: string;
  cancelled_at: string;
}

/** Everything the status depends on, oldest first in each list. */
export interface DealSnapshot {
  deal: DealRecord;
  documents: DocumentRecord[];
  approvals: ApprovalRecord[];
  payments: PaymentRecord[];
  /** Absent in workflows started before disputes and cancellations were records: read as null. */
  dispute?: DisputeRecord | null;
  cancellation?: CancellationRecord | null;
}

/** CONTRACT's order, first match wins. */
export function dealStatus(records: Pick<DealSnapshot, 'documents' | 'approvals' | 'payments' | 'cancellation'>): DealStatus {
  const { documents, approvals, payments } = records;
  // Only a deal without money held can be cancelled; its pending payment (cancelled at the acquirer) shows as refunded.
  if (records.cancellation) return 'cancelled';
  if (payments.some((payment) => payment.status === 'released')) return 'paid';
  const latestPayment = payments.at(-1);
  if (latestPayment?.status === 'refunded') return 'refunded';
  if (latestPayment?.status === 'disputed') return 'disputed';
  if (payments.some((payment) => payment.status === 'hold')) return 'escrow_hold';
  const latestApproval = approvals.at(-1);
  if (latestApproval?.status === 'approved') return 'approved';
  if (latestApproval?.status === 'rejected') return 'rejected';
  if (latestApproval?.status === 'pending') return 'approval';
  if (documents.length > 0) return 'docs';
  return 'created';
}

/** The webhook event of entering a status: `deal.<status>`. */
export type DealEvent = `deal.${DealStatus}`;
export const DEAL_EVENTS = DEAL_STATUSES.map((status) => `deal.${status}` as DealEvent);
export const statusEvent = (status: DealStatus): DealEvent => `deal.${status}`;

/** Statuses that sent a webhook before every status did (workflows without the 'all-status-events' patch). */
export const FIRST_STATUS_EVENTS: readonly DealStatus[] = ['approved', 'rejected', 'escrow_hold', 'paid', 'refunded', 'disputed'];

/** Payment moves CONTRACT allows; anything else is 400 invalid_payment_state. */
export const PAYMENT_MOVES: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ['hold', 'refunded'],
  hold: ['released', 'refunded', 'disputed'],
  disputed: ['released', 'refunded'],
  released: [],
  refunded: [],
};

/** A deal in one of these states changes no more. */
export function isFinal(status: DealStatus): boolean {
  return status === 'paid' || status === 'refunded' || status === 'cancelled';
}

export function dealWorkflowId(marketplaceId: string, externalId: string): string {
  return `deal/${marketplaceId}/${externalId}`;
}
