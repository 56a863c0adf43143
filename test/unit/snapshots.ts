// A deal's records as the workflow keeps them, built in memory for the pure rules (dealStatus, rules.ts and
// deal-money.ts): no database, no workflow. Each builder gives a plausible record with fixed ids and times, so a test
// changes only what it is about. test/factories.ts is the other kind: records written into PostgreSQL, for tests with
// services.
import type {
  ApprovalRecord,
  ApprovalStatus,
  CancellationRecord,
  DealRecord,
  DealSnapshot,
  DealStatus,
  DeliveryRecord,
  DisputeRecord,
  DocumentRecord,
  PaymentRecord,
  PaymentStatus,
  PayoutRecord,
  RefundRecord,
} from '../../src/deals/model.ts';

export const AT = '2026-01-01T00:00:00.000Z';
const BUYER = 'buyer@example.com';

export const dealRecord = (changes: Partial<DealRecord> = {}): DealRecord => ({
  id: 'deal-1',
  marketplace_id: 'mkt-1',
  external_id: 'order-1',
  title: 'Sofa',
  buyer_email: BUYER,
  buyer_name: '',
  seller_email: 'seller@example.com',
  amount: 1000,
  fee: 25,
  fee_moment: 'close',
  currency: 'RUB',
  description: '',
  created_at: AT,
  updated_at: AT,
  ...changes,
});

export const document = (id = 'doc-1'): DocumentRecord => ({
  id,
  kind: 'offer',
  name: 'offer.pdf',
  content_type: 'application/pdf',
  size: 1,
  sha256: 'a'.repeat(64),
  created_at: AT,
});

export const approval = (status: ApprovalStatus, id = `approval-${status}`): ApprovalRecord => ({
  id,
  status,
  approver: BUYER,
  comment: '',
  created_at: AT,
  decided_at: status === 'pending' ? null : AT,
});

/** A payment; a refunded one was held first unless `held: false` (cancelled while pending: no hold ever expired). */
export const payment = (
  status: PaymentStatus,
  changes: Partial<PaymentRecord> & { held?: boolean } = {},
): PaymentRecord => {
  const { held = status !== 'pending', ...rest } = changes;
  return {
    id: 'payment-1',
    amount: 1000,
    currency: 'RUB',
    provider: 'sandbox',
    status,
    payment_url: null,
    provider_payment_id: 'sandbox_payment-1',
    hold_expires_at: held ? '2026-01-08T00:00:00.000Z' : null,
    created_at: AT,
    updated_at: AT,
    ...rest,
  };
};

export const refund = (id: string, amount: number, paymentId = 'payment-1'): RefundRecord => ({
  id,
  payment_id: paymentId,
  amount,
  currency: 'RUB',
  actor: 'marketplace',
  reason: 'Agreed',
  created_at: AT,
});

export const payout = (
  id: string,
  amount: number,
  status: PayoutRecord['status'],
  paymentId = 'payment-1',
): PayoutRecord => ({
  id,
  payment_id: paymentId,
  amount,
  currency: 'RUB',
  status,
  destination: { type: 'test_card', title: '' },
  provider_payout_id: status === 'pending' ? null : `po_${id}`,
  failure_reason: status === 'failed' ? 'Card declined' : null,
  created_at: AT,
  updated_at: AT,
});

export const delivery = (status: DeliveryRecord['status']): DeliveryRecord => ({
  status,
  carrier: 'CDEK',
  tracking: 'T-1',
  shipped_at: AT,
  delivered_at: status === 'delivered' ? AT : null,
  inspection_ends_at: status === 'delivered' ? '2026-01-04T00:00:00.000Z' : null,
  reminded_at: null,
});

export const dispute = (decision?: 'release' | 'refund'): DisputeRecord => ({
  status: decision ? 'decided' : 'open',
  reason: 'It came broken',
  opened_by: 'buyer',
  opened_at: AT,
  messages: [],
  decision: decision ? { outcome: decision, reason: 'The photos show it', decided_at: AT } : null,
});

export const cancellation = (): CancellationRecord => ({
  actor: 'marketplace',
  reason: 'Out of stock',
  cancelled_at: AT,
});

/** A deal with these records; every list the workflow keeps is there (empty unless given). */
export const snapshot = (records: Partial<DealSnapshot> = {}): DealSnapshot => ({
  deal: dealRecord(),
  documents: [],
  approvals: [],
  payments: [],
  dispute: null,
  cancellation: null,
  refunds: [],
  payouts: [],
  delivery: null,
  ...records,
});

/** The offer attached and approved by the buyer: where the money can start. */
const approvedDeal = { documents: [document()], approvals: [approval('approved')] };

/**
 * One deal in each status, reached the plainest way: the rows of the rules' table. Other ways to the same status
 * (a payment still pending, a shipment, a release waiting for its payout…) are the table's variants.
 */
export const DEAL_IN: Record<DealStatus, DealSnapshot> = {
  created: snapshot(),
  docs: snapshot({ documents: [document()] }),
  approval: snapshot({ documents: [document()], approvals: [approval('pending')] }),
  approved: snapshot(approvedDeal),
  rejected: snapshot({ documents: [document()], approvals: [approval('rejected')] }),
  escrow_hold: snapshot({ ...approvedDeal, payments: [payment('hold')] }),
  paid: snapshot({ ...approvedDeal, payments: [payment('released')] }),
  refunded: snapshot({ ...approvedDeal, payments: [payment('refunded')] }),
  disputed: snapshot({ ...approvedDeal, payments: [payment('disputed')], dispute: dispute() }),
  cancelled: snapshot({ documents: [document()], cancellation: cancellation() }),
};

/** An approved deal whose latest payment is this one, with these other records. */
export const approvedWith = (payments: PaymentRecord[], records: Partial<DealSnapshot> = {}): DealSnapshot =>
  snapshot({ ...approvedDeal, payments, ...records });
