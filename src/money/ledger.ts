// The ledger: where each kopeck of a deal is, as double-entry postings. A posting is one money movement; its entries
// name accounts and signed amounts (positive: the money arrives in that account, negative: it leaves it), and the
// amounts of one posting sum to zero in each currency. Postings are written in the same PostgreSQL transaction as the
// deal change that caused them (activities/deals/records.ts) and never changed afterwards (src/money/ledger-store.ts).
//
// Pure: which postings a deal's payments call for. The deal's records are its truth; the postings follow from them, so
// writing the postings a change implies is idempotent (each keyed by its cause) and a write that once failed heals
// with the next one.
//
// Accounts (every posting also names its deal and marketplace):
// - `buyer`               where the buyer's money comes from; its balance is minus what buyers paid in.
// - `deal_held:<deal id>` the money held for that deal (the acquirer's hold, or a safe deal's balance).
// - `seller_payable`      released to the seller and owed to them: no payout has sent it yet.
// - `seller_paid_out`     sent to the seller by a payout that succeeded.
// - `marketplace_fee`     the marketplace's fee.
// - `refunded`            given back to the buyer.
// - `acquirer_fee`        what the acquirer charged, where it says so (none yet).
// So for every marketplace and currency: held + payable + paid out + fees + refunded = what buyers paid in.
import { toMinor } from './amount.ts';
import type { FeeMoment } from './fee.ts';

export const POSTING_KINDS = ['payment', 'fee', 'payout', 'refund', 'acquirer_fee', 'reversal'] as const;
export type PostingKind = (typeof POSTING_KINDS)[number];

export const ACCOUNT = {
  buyer: 'buyer',
  held: (dealId: string) => `deal_held:${dealId}`,
  sellerPayable: 'seller_payable',
  sellerPaidOut: 'seller_paid_out',
  marketplaceFee: 'marketplace_fee',
  refunded: 'refunded',
  acquirerFee: 'acquirer_fee',
} as const;

/** The prefix of every deal's held account: balances sum the accounts that start with it. */
export const HELD_PREFIX = 'deal_held:';

export interface Entry {
  account: string;
  /** Minor units; positive arrives in the account, negative leaves it. Never 0. */
  amount: bigint;
  currency: string;
}

/** A posting about to be written: `cause` names the change that made it, unique within the deal. */
export interface PostingDraft {
  cause: string;
  kind: PostingKind;
  entries: Entry[];
}

/** Why the entries are not one balanced posting, or undefined: two entries at least, none 0, each currency summing to 0. */
export function unbalanced(entries: Entry[]): string | undefined {
  if (entries.length < 2) return 'a posting has two entries at least';
  if (entries.some((entry) => entry.amount === 0n)) return 'an entry of 0 moves nothing';
  const totals = new Map<string, bigint>();
  for (const entry of entries) totals.set(entry.currency, (totals.get(entry.currency) ?? 0n) + entry.amount);
  const off = [...totals].filter(([, total]) => total !== 0n).map(([currency]) => currency);
  return off.length > 0 ? `the entries do not sum to 0 in ${off.join(', ')}` : undefined;
}

/** A movement of `amount` from one account to another, or nothing for an amount of 0. */
function move(
  cause: string,
  kind: PostingKind,
  from: string,
  to: string,
  amount: bigint,
  currency: string,
): PostingDraft[] {
  if (amount <= 0n) return [];
  return [
    {
      cause,
      kind,
      entries: [
        { account: from, amount: -amount, currency },
        { account: to, amount, currency },
      ],
    },
  ];
}

/** What the ledger needs of a deal: its fee as it was fixed at creation, and when the fee moves. */
export interface DealMoney {
  dealId: string;
  /** Decimal text (PostgreSQL's numeric) or minor units. */
  fee: string | bigint;
  feeMoment: FeeMoment;
}

/** What the ledger needs of a payment, as stored. */
export interface PaymentMoney {
  id: string;
  /** Decimal text, as PostgreSQL's numeric reads as text. */
  amount: string;
  currency: string;
  status: 'pending' | 'hold' | 'released' | 'refunded' | 'disputed';
  /** Whether the buyer's money was ever held by it: a refunded payment that never was (cancelled while pending) moved nothing. */
  wasHeld: boolean;
}

/** A refund of part of a held payment, as stored. */
export interface RefundMoney {
  id: string;
  payment_id: string;
  /** Decimal text. */
  amount: string;
}

/** A payout of a released payment, as stored. */
export interface PayoutMoney {
  id: string;
  payment_id: string;
  /** Decimal text. */
  amount: string;
  status: 'pending' | 'succeeded' | 'failed';
}

/**
 * Every posting a payment calls for as it stands, oldest movement first. Causes are `<payment id>/<movement>`, or
 * `<refund id>/refund` and `<payout id>/payout-sent` for the payment's parts:
 * - held (hold, disputed, or later released or refunded): `payment` buyer → held;
 * - the fee at `fee_moment` payment, once held: `fee` held → marketplace_fee;
 * - each refund of a part while held: `refund` held → refunded;
 * - released: at `fee_moment` close the `fee` first, then `payout` held → seller_payable (the rest less the fee);
 * - each payout that succeeded: `payout` seller_payable → seller_paid_out;
 * - refunded after being held: a fee taken at payment goes back (`reversal` marketplace_fee → held), then `refund`
 *   held → refunded, all that is left: the acquirer returns the buyer everything still held;
 * - pending, or cancelled (refunded) while pending: nothing, no money moved.
 * The fee of a payment is the deal's fee, at most what is left of the payment after refunds of parts (a partial
 * refund always leaves the seller more than the fee: src/money/deal-money.ts).
 */
export function paymentPostings(
  deal: DealMoney,
  payment: PaymentMoney,
  refunds: readonly RefundMoney[] = [],
  payouts: readonly PayoutMoney[] = [],
): PostingDraft[] {
  if (payment.status === 'pending' || !payment.wasHeld) return [];
  const { currency } = payment;
  const amount = toMinor(payment.amount);
  const parts = refunds.filter((refund) => refund.payment_id === payment.id);
  const rest = amount - parts.reduce((total, refund) => total + toMinor(refund.amount), 0n);
  const dealFee = typeof deal.fee === 'bigint' ? deal.fee : toMinor(deal.fee);
  const fee = dealFee < rest ? dealFee : rest;
  const held = ACCOUNT.held(deal.dealId);
  const cause = (movement: string) => `${payment.id}/${movement}`;
  const postings = move(cause('payment'), 'payment', ACCOUNT.buyer, held, amount, currency);
  const feeAtPayment = deal.feeMoment === 'payment';
  if (feeAtPayment) postings.push(...move(cause('fee'), 'fee', held, ACCOUNT.marketplaceFee, fee, currency));
  for (const refund of parts)
    postings.push(...move(`${refund.id}/refund`, 'refund', held, ACCOUNT.refunded, toMinor(refund.amount), currency));
  if (payment.status === 'released') {
    if (!feeAtPayment) postings.push(...move(cause('fee'), 'fee', held, ACCOUNT.marketplaceFee, fee, currency));
    postings.push(...move(cause('release'), 'payout', held, ACCOUNT.sellerPayable, rest - fee, currency));
    for (const payout of payouts) {
      if (payout.payment_id !== payment.id || payout.status !== 'succeeded') continue;
      postings.push(
        ...move(
          `${payout.id}/payout-sent`,
          'payout',
          ACCOUNT.sellerPayable,
          ACCOUNT.sellerPaidOut,
          toMinor(payout.amount),
          currency,
        ),
      );
    }
  } else if (payment.status === 'refunded') {
    if (feeAtPayment)
      postings.push(...move(cause('fee-reversal'), 'reversal', ACCOUNT.marketplaceFee, held, fee, currency));
    postings.push(...move(cause('refund'), 'refund', held, ACCOUNT.refunded, rest, currency));
  }
  return postings;
}
