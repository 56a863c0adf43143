// Exact amounts of money. Inside the service an amount is a BigInt of minor units (kopecks, cents: a hundredth of the
// currency's unit, as every amount of the API has two decimals); it becomes a decimal only at the edges: the API's
// JSON number, a CSV cell, a PostgreSQL numeric read as text. No amount is ever computed in floating point.
//
// A JSON number of the API (at most two decimals, at most 10^13: the deal's `Money` schema) is exact as a double in
// its shortest decimal form, the form String() and JSON.stringify write: parsing that text gives the amount exactly.

/** Minor units per major unit: every amount has two decimals (docs/decisions/0011-money-in-minor-units.md). */
export const MINOR_PER_UNIT = 100n;

const DECIMAL = /^([+-])?(\d+)(?:\.(\d{1,2}))?$/;

/** An amount that is not a decimal of at most two decimals: a bug at the edge that handed it over, never rounded away. */
export class AmountError extends Error {}

/**
 * The minor units of a decimal amount: a string ("1234.5", "-0.07", PostgreSQL's numeric as text) or a number as the
 * API's JSON gives it. More than two decimals, an exponent, NaN or Infinity throw AmountError: nothing is rounded here.
 */
export function toMinor(value: string | number | bigint): bigint {
  if (typeof value === 'bigint') return value * MINOR_PER_UNIT;
  if (typeof value === 'number' && !Number.isFinite(value)) throw new AmountError(`Not an amount: ${value}`);
  const text = typeof value === 'number' ? String(value) : value.trim();
  // PostgreSQL writes numeric(20, 2) with both decimals ("12.50"), and a number like 12.5 has one: both are read.
  const match = DECIMAL.exec(text);
  if (!match) throw new AmountError(`Not an amount with at most two decimals: ${JSON.stringify(text)}`);
  const [, sign, units, decimals = ''] = match;
  const minor = BigInt(units) * MINOR_PER_UNIT + BigInt(decimals.padEnd(2, '0'));
  return sign === '-' ? -minor : minor;
}

/** The decimal text of minor units, always with two decimals: "1234.50", "-0.07", "0.00". */
export function formatMinor(minor: bigint): string {
  const negative = minor < 0n;
  const magnitude = negative ? -minor : minor;
  const units = magnitude / MINOR_PER_UNIT;
  const cents = (magnitude % MINOR_PER_UNIT).toString().padStart(2, '0');
  return `${negative ? '-' : ''}${units}.${cents}`;
}

/**
 * The API's JSON number for minor units: the double whose shortest decimal form is the amount (1234.5 for 123450n).
 * Exact for every amount up to 10^13 in either direction; beyond 2^53 minor units it throws rather than round.
 */
export function toNumber(minor: bigint): number {
  const magnitude = minor < 0n ? -minor : minor;
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER))
    throw new AmountError(`Too large for a JSON number without loss: ${formatMinor(minor)}`);
  // -0 would be written as 0 by JSON.stringify anyway; it is never produced here.
  return minor === 0n ? 0 : Number(formatMinor(minor));
}

export const add = (a: bigint, b: bigint): bigint => a + b;
export const subtract = (a: bigint, b: bigint): bigint => a - b;
export const sum = (amounts: Iterable<bigint>): bigint => {
  let total = 0n;
  for (const amount of amounts) total += amount;
  return total;
};

const PERCENT = /^(\d+)(?:\.(\d{1,6}))?$/;

/**
 * `percent` per cent of an amount in minor units, rounded to the minor unit half-up: a half kopeck and more goes up,
 * less goes down (a negative amount rounds its magnitude the same way, half away from zero). The percentage is a
 * non-negative decimal of at most six decimals (a number like 2.5 or a string like "2.50").
 */
export function percentOf(minor: bigint, percent: string | number): bigint {
  const text = typeof percent === 'number' ? String(percent) : percent.trim();
  const match = PERCENT.exec(text);
  if (!match) throw new AmountError(`Not a percentage of at most six decimals: ${JSON.stringify(text)}`);
  const [, whole, decimals = ''] = match;
  const scale = 10n ** BigInt(decimals.length);
  const numerator = BigInt(whole) * scale + BigInt(decimals || '0');
  const denominator = 100n * scale;
  const magnitude = minor < 0n ? -minor : minor;
  // floor(x + 1/2) with x = magnitude × numerator / denominator, in integers.
  const rounded = (2n * magnitude * numerator + denominator) / (2n * denominator);
  return minor < 0n ? -rounded : rounded;
}

export const minOf = (a: bigint, b: bigint): bigint => (a < b ? a : b);
export const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);
