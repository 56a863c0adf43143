// Where a payment's money stands (src/money/deal-money.ts), pure: the seller's part after refunds and the fee, what is
// still owed to them, and the limits of a partial refund and of the arbiter's split, all in exact minor units.
import { describe, expect, it } from 'vitest';
import {
  dealMoneyState,
  nextPayoutId,
  partialRefundRefusal,
  paymentSums,
  payoutOwed,
  splitRefusal,
} from '../../src/money/deal-money.ts';
import type { PaymentRecord, PayoutRecord, RefundRecord } from '../../src/deals/model.ts';
import { dealRecord, payment as paymentRecord, payout as payoutRecord, refund as refundRecord } from './snapshots.ts';

// The shared factory's records, in this file's argument order (the amount first).
const payment = (amount: number, status: PaymentRecord['status'] = 'hold'): PaymentRecord =>
  paymentRecord(status, { id: 'p1', amount });
const refund = (id: string, amount: number): RefundRecord => refundRecord(id, amount, 'p1');
const payout = (id: string, amount: number, status: PayoutRecord['status']): PayoutRecord =>
  payoutRecord(id, amount, status, 'p1');

describe('paymentSums', () => {
  it('takes refunds of parts and the fee from the payment, and counts what is paid out or on its way', () => {
    const sums = paymentSums(
      { fee: 100.1 },
      payment(1000.3),
      [refund('r1', 200.2), refund('r2', 0.01)],
      [payout('o1', 300, 'succeeded'), payout('o2', 100, 'pending'), payout('o3', 50, 'failed')],
    );
    expect(sums).toEqual({
      paid: 100030n,
      refundedInParts: 20021n,
      rest: 80009n,
      fee: 10010n,
      sellerAmount: 69999n,
      paidOut: 30000n,
      inFlight: 10000n,
    });
    expect(payoutOwed(sums)).toBe(29999n);
  });

  it('caps the fee at what is left, and ignores other payments’ parts', () => {
    const sums = paymentSums({ fee: 50 }, payment(30), [{ ...refund('r1', 10), payment_id: 'other' }], []);
    expect(sums).toMatchObject({ rest: 3000n, fee: 3000n, sellerAmount: 0n });
  });

  it('reads a deal from before fees as taking none', () => {
    expect(paymentSums({}, payment(99.99), [], [])).toMatchObject({ fee: 0n, sellerAmount: 9999n });
  });
});

describe('partialRefundRefusal', () => {
  const sums = paymentSums({ fee: 100 }, payment(1000), [], []);
  it.each([
    [0n, /more than 0/],
    [-1n, /more than 0/],
    [90000n, /less than 900.00/],
    [95000n, /refund the whole payment/],
  ])('refuses %s kopecks', (amount, why) => {
    expect(partialRefundRefusal(sums, amount)).toMatch(why);
  });
  it('takes a part that leaves the seller a kopeck', () => {
    expect(partialRefundRefusal(sums, 89999n)).toBeUndefined();
  });
});

describe('splitRefusal', () => {
  const sums = paymentSums({ fee: 50 }, payment(1000), [], []);
  it('takes two parts that add up to the held money, the release covering the fee', () => {
    expect(splitRefusal(sums, 60000n, 40000n)).toBeUndefined();
    expect(splitRefusal(sums, 5000n, 95000n)).toBeUndefined();
  });
  it.each([
    [60000n, 30000n, /add up to the 1000.00 held/],
    [4999n, 95001n, /covers the marketplace's fee of 50.00/],
    [0n, 100000n, /releases more than 0/],
    [100000n, 0n, /refunds more than 0/],
  ])('refuses release %s and refund %s', (release, refunded, why) => {
    expect(splitRefusal(sums, release, refunded)).toMatch(why);
  });
});

describe('dealMoneyState', () => {
  const deal = dealRecord({ amount: 1000, fee: 100 });
  it('shows the seller’s part of a release and the parts refunded', () => {
    expect(
      dealMoneyState({ deal, payments: [payment(1000, 'released')], refunds: [refund('r1', 250.5)], payouts: [] }),
    ).toEqual({ released_amount: 649.5, refunded_amount: 250.5 });
  });
  it('shows what a refund returned, and nothing for a payment cancelled before it was held', () => {
    expect(
      dealMoneyState({ deal, payments: [payment(1000, 'refunded')], refunds: [refund('r1', 100)], payouts: [] }),
    ).toEqual({ released_amount: 0, refunded_amount: 1000 });
    expect(dealMoneyState({ deal, payments: [{ ...payment(1000, 'refunded'), hold_expires_at: null }] })).toEqual({
      released_amount: 0,
      refunded_amount: 0,
    });
  });
});

describe('nextPayoutId', () => {
  const paymentId = '3f2a9c1e-7b4d-4e6a-9c0b-1d2e3f4a5b6c';
  const made = (id: string, payment_id = paymentId) => ({ payment_id, id });

  it('is the same for the same records, so a change made again pays out under the same key', () => {
    expect(nextPayoutId(paymentId, [])).toBe(nextPayoutId(paymentId, []));
    expect(nextPayoutId(paymentId, [])).toBe('3f2a9c1e-7b4d-8e6a-9c0b-1d2e3f4a5b6d');
  });
  it('moves on with each payout the payment has, and ignores other payments’ payouts', () => {
    const first = nextPayoutId(paymentId, []);
    const second = nextPayoutId(paymentId, [made(first)]);
    const third = nextPayoutId(paymentId, [made(first), made(second)]);
    expect(new Set([first, second, third]).size).toBe(3);
    expect(nextPayoutId(paymentId, [made('x', '00000000-0000-4000-8000-000000000000')])).toBe(first);
  });
  it('is a version-8 UUID, never the payment’s own id or any drawn (version 4) id', () => {
    const id = nextPayoutId(paymentId.toUpperCase(), []);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(id).not.toBe(paymentId);
  });
  it('refuses what is not a UUID rather than make a key from it', () => {
    expect(() => nextPayoutId('p1', [])).toThrow(/is a UUID/);
  });
});
