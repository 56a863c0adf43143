// JSON whose amounts are written exactly, as decimals with two places (`-1234.50`, `0.00`): a BigInt of minor units in
// the value becomes that number's text. JSON numbers have no size or precision limit; a parser of doubles reads the same
// value as from 1234.5, and one that keeps decimals reads every kopeck, sums beyond 2^53 kopecks too.
import { formatMinor } from './amount.ts';

/** A string no value of ours holds (a NUL is refused at the boundary), which JSON.stringify writes as `"\u0000minor:…"`. */
const MARK = '\u0000minor:';
const MARKED = /"\\u0000minor:(-?\d+)"/g;

export function moneyJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? `${MARK}${item}` : item));
  return text.replace(MARKED, (_match, minor: string) => formatMinor(BigInt(minor)));
}
