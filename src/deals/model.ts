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

/** Everything the status depends on, oldest first in each list. */
export interface DealSnapshot {
  deal: DealRecord;
  documents: DocumentRecord[];
  approvals: ApprovalRecord[];
  payments: PaymentRecord[];
}

/** CONTRACT's order, first match wins. */
export function dealStatus(records: Pick<DealSnapshot, 'documents' | 'approvals' | 'payments'>): DealStatus {
  const { documents, approvals, payments } = records;
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

/** Statuses that send a webhook when the deal enters them. */
export const STATUS_EVENTS: Partial<Record<DealStatus, string>> = {
  approved: 'deal.approved',
  rejected: 'deal.rejected',
  escrow_hold: 'deal.escrow_hold',
  paid: 'deal.paid',
  refunded: 'deal.refunded',
  disputed: 'deal.disputed',
};

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
  return status === 'paid' || status === 'refunded';
}

export function dealWorkflowId(marketplaceId: string, externalId: string): string {
  return `deal/${marketplaceId}/${externalId}`;
}
