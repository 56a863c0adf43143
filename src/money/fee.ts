// The marketplace's fee: a schedule per marketplace (a percentage of the deal's amount, a fixed part, a minimum and a
// maximum) applied to a deal's amount when the deal is made, or the `fee` the marketplace gives for that deal. The
// deal keeps the result, so a later change of the schedule leaves open deals as they were. Pure: no database here.
import { maxOf, minOf, percentOf, toMinor } from './amount.ts';

/** When the fee moves to the marketplace: when the buyer's money is held, or when the deal closes with a release. */
export const FEE_MOMENTS = ['payment', 'close'] as const;
export type FeeMoment = (typeof FEE_MOMENTS)[number];
export const DEFAULT_FEE_MOMENT: FeeMoment = 'close';

/**
 * A fee schedule as stored (numeric columns read as text) or as the API gives it (numbers). Each part may be null or
 * 0: no percentage, no fixed part, no minimum, no maximum.
 */
export interface FeeSchedule {
  /** Per cent of the amount, at most two decimals (2.5 is 2.5 %). */
  percent: string | number | null;
  fixed: string | number | null;
  min: string | number | null;
  max: string | number | null;
}

export const NO_FEE: FeeSchedule = { percent: null, fixed: null, min: null, max: null };

const part = (value: string | number | null): bigint => (value === null ? 0n : toMinor(value));

/**
 * The schedule's fee on an amount, both in minor units: the percentage of the amount rounded half-up to the kopeck,
 * plus the fixed part; then raised to the minimum and lowered to the maximum (when both are set and the minimum is the
 * larger, the maximum wins); never more than the amount itself (the seller's part is then 0).
 */
export function scheduledFee(amount: bigint, schedule: FeeSchedule): bigint {
  const percent = schedule.percent === null ? 0n : percentOf(amount, schedule.percent);
  let fee = percent + part(schedule.fixed);
  const min = part(schedule.min);
  const max = part(schedule.max);
  if (min > 0n) fee = maxOf(fee, min);
  if (max > 0n) fee = minOf(fee, max);
  return minOf(fee, amount);
}

/**
 * Why a fee the marketplace gives for a deal is refused, or undefined: 0 ≤ fee < amount (a deal of amount 0 takes only
 * a fee of 0). Both in minor units.
 */
export function feeRefusal(amount: bigint, fee: bigint): string | undefined {
  if (fee < 0n) return 'must be 0 or more';
  if (fee > 0n && fee >= amount) return 'must be less than the amount (0 ≤ fee < amount)';
  return undefined;
}
