// dealStatus (src/deals/model.ts) from records, as the workflow and the API both compute it: every status, each of the
// ways a deal's records reach it (approvals redone, payments cancelled and made again, partial refunds, payouts that
// wait, fail or succeed, disputes opened and decided, cancellations), and where the order of docs/decisions/0004-status-computed-from-records.md decides.
import { describe, expect, it } from 'vitest';
import { DEAL_STATUSES, dealStatus, isFinal, type DealSnapshot, type DealStatus } from '../../src/deals/model.ts';
import { approval, cancellation, delivery, dispute, document, payment, payout, refund, snapshot } from './snapshots.ts';

const offer = { documents: [document()] };
const approved = { ...offer, approvals: [approval('approved')] };
const second = (status: Parameters<typeof payment>[0], changes: Parameters<typeof payment>[1] = {}) =>
  payment(status, { id: 'payment-2', ...changes });

// [how the deal got there, its records, its status]
const CASES: [string, Partial<DealSnapshot>, DealStatus][] = [
  ['a new deal', {}, 'created'],
  ['an offer attached', offer, 'docs'],
  ['two documents attached', { documents: [document('doc-1'), document('doc-2')] }, 'docs'],
  ['an approval asked', { ...offer, approvals: [approval('pending')] }, 'approval'],
  ['asked again after a rejection', { ...offer, approvals: [approval('rejected'), approval('pending')] }, 'approval'],
  ['approved', approved, 'approved'],
  ['approved after a rejection', { ...offer, approvals: [approval('rejected'), approval('approved')] }, 'approved'],
  ['rejected', { ...offer, approvals: [approval('rejected')] }, 'rejected'],
  ['rejected when asked again', { ...offer, approvals: [approval('approved'), approval('rejected')] }, 'rejected'],
  // No document is needed for the status to follow the approval: the rules ask for one before an approval starts.
  ['an approval without documents', { approvals: [approval('pending')] }, 'approval'],
  ['a payment page opened, not paid', { ...approved, payments: [payment('pending')] }, 'approved'],
  ['the money held', { ...approved, payments: [payment('hold')] }, 'escrow_hold'],
  ['held, shipped', { ...approved, payments: [payment('hold')], delivery: delivery('shipped') }, 'escrow_hold'],
  ['held, delivered', { ...approved, payments: [payment('hold')], delivery: delivery('delivered') }, 'escrow_hold'],
  ['held, part refunded', { ...approved, payments: [payment('hold')], refunds: [refund('r1', 100)] }, 'escrow_hold'],
  [
    'held again after the first payment was cancelled',
    { ...approved, payments: [payment('refunded', { held: false }), second('hold')] },
    'escrow_hold',
  ],
  [
    'a second payment page after the first was cancelled',
    { ...approved, payments: [payment('refunded', { held: false }), second('pending')] },
    'approved',
  ],
  // A release that pays out is paid once its payout succeeded; until then the service still holds the money.
  [
    'released, no destination for the payout yet',
    { ...approved, payments: [payment('released', { payout_status: 'awaiting_destination' })] },
    'escrow_hold',
  ],
  [
    'released, the payout on its way',
    {
      ...approved,
      payments: [payment('released', { payout_status: 'pending' })],
      payouts: [payout('o1', 975, 'pending')],
    },
    'escrow_hold',
  ],
  [
    'released, the payout failed',
    {
      ...approved,
      payments: [payment('released', { payout_status: 'failed' })],
      payouts: [payout('o1', 975, 'failed')],
    },
    'escrow_hold',
  ],
  [
    'released, paid out in two transfers',
    {
      ...approved,
      payments: [payment('released', { payout_status: 'succeeded' })],
      payouts: [payout('o1', 500, 'succeeded'), payout('o2', 475, 'succeeded')],
    },
    'paid',
  ],
  ['released by capture (two-stage: no payout)', { ...approved, payments: [payment('released')] }, 'paid'],
  [
    'released from before payouts (null)',
    { ...approved, payments: [payment('released', { payout_status: null })] },
    'paid',
  ],
  [
    'part refunded, the rest released and paid out',
    {
      ...approved,
      payments: [payment('released', { payout_status: 'succeeded' })],
      refunds: [refund('r1', 200)],
      payouts: [payout('o1', 775, 'succeeded')],
    },
    'paid',
  ],
  [
    'part refunded, the rest released, its payout on its way',
    {
      ...approved,
      payments: [payment('released', { payout_status: 'pending' })],
      refunds: [refund('r1', 200)],
    },
    'escrow_hold',
  ],
  ['refunded after the hold', { ...approved, payments: [payment('refunded')] }, 'refunded'],
  // Cancelling a pending payment refunds it at the acquirer; without a cancellation of the deal it closes as refunded.
  [
    'the only payment cancelled while pending',
    { ...approved, payments: [payment('refunded', { held: false })] },
    'refunded',
  ],
  [
    'part refunded, then the rest',
    { ...approved, payments: [payment('refunded')], refunds: [refund('r1', 100)] },
    'refunded',
  ],
  ['disputed', { ...approved, payments: [payment('disputed')], dispute: dispute() }, 'disputed'],
  [
    'disputed after delivery',
    { ...approved, payments: [payment('disputed')], dispute: dispute(), delivery: delivery('delivered') },
    'disputed',
  ],
  [
    'disputed after a part was refunded',
    { ...approved, payments: [payment('disputed')], dispute: dispute(), refunds: [refund('r1', 100)] },
    'disputed',
  ],
  [
    'dispute decided for the seller, paid out',
    { ...approved, payments: [payment('released', { payout_status: 'succeeded' })], dispute: dispute('release') },
    'paid',
  ],
  [
    'dispute decided for the seller, payout on its way',
    { ...approved, payments: [payment('released', { payout_status: 'pending' })], dispute: dispute('release') },
    'escrow_hold',
  ],
  [
    'dispute decided for the buyer',
    { ...approved, payments: [payment('refunded')], dispute: dispute('refund') },
    'refunded',
  ],
  [
    'dispute split: a part refunded, the rest released and paid out',
    {
      ...approved,
      payments: [payment('released', { payout_status: 'succeeded' })],
      dispute: dispute('release'),
      refunds: [refund('r1', 400)],
      payouts: [payout('o1', 575, 'succeeded')],
    },
    'paid',
  ],
  ['cancelled before any document', { cancellation: cancellation() }, 'cancelled'],
  [
    'cancelled while the approval was asked',
    { ...offer, approvals: [approval('pending')], cancellation: cancellation() },
    'cancelled',
  ],
  ['cancelled once approved', { ...approved, cancellation: cancellation() }, 'cancelled'],
  [
    'cancelled with its pending payment',
    { ...approved, payments: [payment('refunded', { held: false })], cancellation: cancellation() },
    'cancelled',
  ],
  // Records from before disputes and cancellations were records, and before refunds and payouts: absent is none.
  [
    'an old workflow’s held deal',
    { ...approved, payments: [payment('hold')], dispute: undefined, cancellation: undefined, refunds: undefined },
    'escrow_hold',
  ],
];

describe('dealStatus', () => {
  it.each(CASES)('%s → %s', (_how, records, status) => {
    expect(dealStatus(snapshot(records))).toBe(status);
  });

  it('reaches every status from records', () => {
    // A status added to DEAL_STATUSES fails here until a case shows the records that reach it.
    expect(new Set(CASES.map(([, , status]) => status))).toEqual(new Set(DEAL_STATUSES));
  });

  // The decision's order (docs/decisions/0004), first match wins: where two rules could answer, the earlier one does.
  it.each<[string, Partial<DealSnapshot>, DealStatus]>([
    [
      'a cancellation before a held payment',
      { ...approved, payments: [payment('hold')], cancellation: cancellation() },
      'cancelled',
    ],
    [
      'a paid release before a later refunded payment',
      { ...approved, payments: [payment('released'), second('refunded')] },
      'paid',
    ],
    [
      'a release awaiting its payout before a later disputed payment',
      { ...approved, payments: [payment('released', { payout_status: 'pending' }), second('disputed')] },
      'escrow_hold',
    ],
    [
      'the latest payment refunded before an earlier hold',
      { ...approved, payments: [payment('hold'), second('refunded')] },
      'refunded',
    ],
    [
      'the latest payment disputed before an earlier hold',
      { ...approved, payments: [payment('hold'), second('disputed')] },
      'disputed',
    ],
    [
      'an earlier hold before a later pending payment',
      { ...approved, payments: [payment('hold'), second('pending')] },
      'escrow_hold',
    ],
    [
      'an earlier refund does not close a deal whose latest payment is held',
      { ...approved, payments: [payment('refunded'), second('hold')] },
      'escrow_hold',
    ],
    [
      'the latest approval before earlier ones',
      { ...offer, approvals: [approval('approved'), approval('pending')] },
      'approval',
    ],
  ])('takes %s', (_why, records, status) => {
    expect(dealStatus(snapshot(records))).toBe(status);
  });
});

describe('isFinal', () => {
  // Written out rather than derived, so a new status must be placed on one side.
  const FINAL: Record<DealStatus, boolean> = {
    created: false,
    docs: false,
    approval: false,
    approved: false,
    rejected: false,
    escrow_hold: false,
    paid: true,
    refunded: true,
    disputed: false,
    cancelled: true,
  };

  it.each(DEAL_STATUSES)('%s', (status) => {
    expect(isFinal(status)).toBe(FINAL[status]);
  });
});
