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
/** `yookassa` is a two-stage payment (deals from before safe deals, and marketplaces that keep it). */
export type EscrowProviderName = 'sandbox' | 'yookassa' | 'yookassa_safe_deal';

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
  /** When the fee moves to the marketplace (absent in the snapshots of workflows started before fees). */
  fee_moment?: 'payment' | 'close';
  currency: string;
  description: string;
  /**
   * The languages the marketplace gave for the buyer's and the seller's mail (null: not given). Absent in the snapshots
   * of workflows started before them; only the provisioning of the parties reads them, from PostgreSQL.
   */
  buyer_locale?: 'ru' | 'en' | null;
  seller_locale?: 'ru' | 'en' | null;
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
  /** The acquirer's deal holding the money (a safe deal's id); absent for two-stage payments. */
  provider_deal_id?: string | null;
  /**
   * Where the payout of a released payment stands (a paying-out provider: a safe deal, the sandbox). Absent or null for
   * a payment released by capture (two-stage, and every release from before payouts): that release paid the deal.
   */
  payout_status?: PayoutStatus | null;
  /** Who released it, for the deal.paid its payout completes later (workflow state only). */
  released_by?: ActorKind;
  release_reason?: string;
  created_at: string;
  updated_at: string;
}

export const PAYOUT_STATUSES = ['awaiting_destination', 'pending', 'failed', 'succeeded'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** Part of the held money given back to the buyer (an agreed partial refund, or the refund part of a split decision). */
export interface RefundRecord {
  id: string;
  payment_id: string;
  amount: number;
  currency: string;
  actor: ActorKind;
  reason: string;
  created_at: string;
}

/** One transfer to the seller out of a released payment (split where the acquirer's per-payout limit requires). */
export interface PayoutRecord {
  id: string;
  payment_id: string;
  amount: number;
  currency: string;
  status: 'pending' | 'succeeded' | 'failed';
  /** What pages show of where it went; the token stays in PostgreSQL, out of the workflow's history. */
  destination: { type: string; title: string };
  provider_payout_id: string | null;
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** Shipment, delivery, and the buyer's inspection window that ends in an automatic release. */
export interface DeliveryRecord {
  status: 'shipped' | 'delivered';
  carrier: string;
  tracking: string;
  shipped_at: string;
  delivered_at: string | null;
  inspection_ends_at: string | null;
  /** When the buyer was reminded that the window is about to end (once). */
  reminded_at: string | null;
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
  /**
   * How many changes the deal's workflow has written (deals.version). A workflow that holds it writes each change
   * sized by the change, guarded by it; workflows started before it write the whole deal each time.
   */
  version?: number;
  documents: DocumentRecord[];
  approvals: ApprovalRecord[];
  payments: PaymentRecord[];
  /** Absent in workflows started before disputes and cancellations were records: read as null. */
  dispute?: DisputeRecord | null;
  cancellation?: CancellationRecord | null;
  /** Absent in workflows started before payouts: read as none. */
  refunds?: RefundRecord[];
  payouts?: PayoutRecord[];
  delivery?: DeliveryRecord | null;
}

/** The deal's status from its records, first match wins (docs/architecture.md#statuses). */
export function dealStatus(
  records: Pick<DealSnapshot, 'documents' | 'approvals' | 'payments' | 'cancellation'>,
): DealStatus {
  const { documents, approvals, payments } = records;
  // Only a deal without money held can be cancelled; its pending payment (cancelled at the acquirer) shows as refunded.
  if (records.cancellation) return 'cancelled';
  // A release that pays out is paid once its payout succeeded; until then the money is still the service's to hold.
  if (
    payments.some(
      (payment) => payment.status === 'released' && (!payment.payout_status || payment.payout_status === 'succeeded'),
    )
  )
    return 'paid';
  if (payments.some((payment) => payment.status === 'released')) return 'escrow_hold';
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

/** Events of money and delivery that are not a change of status. */
export const MONEY_EVENTS = [
  'deal.shipped',
  'deal.delivered',
  'deal.payout_sent',
  'deal.payout_failed',
  'deal.partially_refunded',
] as const;
export type MoneyEvent = (typeof MONEY_EVENTS)[number];

/** The webhook event of entering a status (`deal.<status>`), or one of money and delivery. */
export type DealEvent = `deal.${DealStatus}` | MoneyEvent;
export const DEAL_EVENTS: DealEvent[] = [
  ...DEAL_STATUSES.map((status) => `deal.${status}` as DealEvent),
  ...MONEY_EVENTS,
];
export const statusEvent = (status: DealStatus): DealEvent => `deal.${status}` as DealEvent;

/** Statuses that sent a webhook before every status did (workflows without the 'deal-people' patch). */
export const FIRST_STATUS_EVENTS: readonly DealStatus[] = [
  'approved',
  'rejected',
  'escrow_hold',
  'paid',
  'refunded',
  'disputed',
];

/** The moves a payment may make; anything else is 400 invalid_payment_state (docs/architecture.md#statuses). */
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
