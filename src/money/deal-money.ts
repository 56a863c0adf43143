// Where a deal's money stands, from its records: pure and exact (minor units), shared by the deal's workflow (which
// pays out and refunds by it), the ledger, the API's deal state and the pages, so none of them can disagree.
//
// The seller's part of a payment is what is left of it after refunds, less the marketplace's fee (at most that rest):
// the same whether the fee moved when the money was held or moves at the release. So a refund of part must leave the
// seller more than nothing: it is below the rest less the fee.
import { formatMinor, minOf, sum, toMinor, toNumber } from './amount.ts';
import type { DealSnapshot, PaymentRecord, PayoutRecord, RefundRecord } from '../deals/model.ts';

export interface PaymentSums {
  /** What the buyer paid in. */
  paid: bigint;
  /** Given back in parts while held (agreed partial refunds, a split decision's refund part). */
  refundedInParts: bigint;
  /** Still the payment's: paid less the parts refunded. */
  rest: bigint;
  /** The marketplace's fee on the rest. */
  fee: bigint;
  /** The seller's part: the rest less the fee. */
  sellerAmount: bigint;
  /** Paid out to the seller by succeeded payouts, and on its way by pending ones. */
  paidOut: bigint;
  inFlight: bigint;
}

export function paymentSums(
  deal: { fee?: number | string },
  payment: Pick<PaymentRecord, 'id' | 'amount'>,
  refunds: readonly RefundRecord[],
  payouts: readonly PayoutRecord[],
): PaymentSums {
  const paid = toMinor(payment.amount);
  const refundedInParts = sum(
    refunds.filter((refund) => refund.payment_id === payment.id).map((refund) => toMinor(refund.amount)),
  );
  const rest = paid - refundedInParts;
  const fee = minOf(toMinor(deal.fee ?? 0), rest);
  const mine = payouts.filter((payout) => payout.payment_id === payment.id);
  return {
    paid,
    refundedInParts,
    rest,
    fee,
    sellerAmount: rest - fee,
    paidOut: sum(mine.filter((payout) => payout.status === 'succeeded').map((payout) => toMinor(payout.amount))),
    inFlight: sum(mine.filter((payout) => payout.status === 'pending').map((payout) => toMinor(payout.amount))),
  };
}

/** Why a refund of `amount` of the held payment is refused, or undefined: more than 0, leaving the seller more than nothing. */
export function partialRefundRefusal(sums: PaymentSums, amount: bigint): string | undefined {
  if (amount <= 0n) return 'The amount to refund is more than 0.';
  if (amount >= sums.rest - sums.fee) {
    return `A partial refund leaves the seller something: it is less than ${formatMinor(sums.rest - sums.fee)} (the ${formatMinor(sums.rest)} held less the fee ${formatMinor(sums.fee)}); refund the whole payment instead.`;
  }
  return undefined;
}

/** Why the arbiter's split is refused, or undefined: the two parts add up to what is held, and the release covers the fee. */
export function splitRefusal(sums: PaymentSums, release: bigint, refund: bigint): string | undefined {
  if (release < 0n || refund <= 0n || release === 0n)
    return 'A split releases more than 0 and refunds more than 0; decide release or refund otherwise.';
  if (release + refund !== sums.rest) {
    return `release_amount and refund_amount add up to the ${formatMinor(sums.rest)} held; they add up to ${formatMinor(release + refund)}.`;
  }
  if (release < sums.fee) return `release_amount covers the marketplace's fee of ${formatMinor(sums.fee)}.`;
  return undefined;
}

/** The deal's money as the API's deal state shows it (JSON numbers, exact): what was released, refunded, paid out. */
export function dealMoneyState(snapshot: Pick<DealSnapshot, 'deal' | 'payments' | 'refunds' | 'payouts'>) {
  const refunds = snapshot.refunds ?? [];
  const payouts = snapshot.payouts ?? [];
  let released = 0n;
  let refunded = 0n;
  for (const payment of snapshot.payments) {
    const sums = paymentSums(snapshot.deal, payment, refunds, payouts);
    refunded += sums.refundedInParts;
    if (payment.status === 'released') released += sums.sellerAmount;
    if (payment.status === 'refunded' && payment.hold_expires_at) refunded += sums.rest;
  }
  return { released_amount: toNumber(released), refunded_amount: toNumber(refunded) };
}

/** The payment a release pays out of and how much is still to send: the seller's part less what is paid or on its way. */
export function payoutOwed(sums: PaymentSums): bigint {
  return sums.sellerAmount - sums.paidOut - sums.inFlight;
}

/**
 * The id of a payment's next payout, from what the records already hold: the payment's id as a version-8 UUID whose
 * last four hex digits carry the payout's number (the count of the payment's payouts recorded so far, plus one). The
 * workflow asks it where it pays out, by a local activity that acts before its workflow task is recorded: if that task
 * is lost (the worker dies), the change is made again from the same records and gets the same id, so the acquirer,
 * which keys the payout by it, answers the first payout instead of making a second. A drawn id (uuid4) may differ: the
 * draw depends on what else drew before it.
 * Version 8 keeps it apart from every drawn id (version 4), the payment's own among them.
 */
export function nextPayoutId(paymentId: string, payouts: readonly Pick<PayoutRecord, 'payment_id'>[]): string {
  const hex = paymentId.replaceAll('-', '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`A payment id is a UUID: ${paymentId}`);
  const number = payouts.filter((payout) => payout.payment_id === paymentId).length + 1;
  if (number > 0xffff) throw new Error(`Payment ${paymentId} has had ${number - 1} payouts; no more fit its ids`);
  const last = (parseInt(hex.slice(28), 16) ^ number).toString(16).padStart(4, '0');
  const id = `${hex.slice(0, 12)}8${hex.slice(13, 28)}${last}`;
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
}
