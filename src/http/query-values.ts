// Numbers and moments in a query string. z.coerce would read '' as 0, ' 7' as 7 and '0x10' as 16, values the OpenAPI document's
// `type: integer` does not allow; these take decimal numbers only and leave anything else for the schema to refuse.
import { z } from 'zod';

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

const decimal = (pattern: RegExp) => (value: unknown) =>
  typeof value === 'string' && pattern.test(value) ? Number(value) : value;

export function queryInt(min: number, max: number) {
  return z.preprocess(decimal(INTEGER), z.number().int().min(min).max(max));
}

export function queryNumber(min: number, max: number) {
  return z.preprocess(decimal(NUMBER), z.number().min(min).max(max));
}

// ISO 8601 counts a year 0000 (1 BC); PostgreSQL has no year 0 and refuses it.
const NOT_YEAR_ZERO = /^(?!0000)/;

/**
 * An ISO 8601 date-time with `Z` or an offset of at most ±14:00, the widest any place on Earth keeps. RFC 3339 would
 * allow up to ±23:59, but PostgreSQL refuses offsets past ±15:59, and such a moment is a typo rather than a time.
 */
export const QueryTimestamp = z.iso
  .datetime({ offset: true })
  .regex(NOT_YEAR_ZERO, 'must have a year from 0001')
  .regex(
    /(?:Z|[+-](?:0\d|1[0-3]):[0-5]\d|[+-]14:00)$/,
    'must end in Z or a time-zone offset between -14:00 and +14:00',
  );

/** An ISO 8601 date, year 0001 or later. */
export const QueryDate = z.iso.date().regex(NOT_YEAR_ZERO, 'must have a year from 0001');
