// Numbers in a query string. z.coerce would read '' as 0, ' 7' as 7 and '0x10' as 16, values the OpenAPI document's
// `type: integer` does not allow; these take decimal numbers only and leave anything else for the schema to refuse.
import { z } from 'zod';

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

const decimal = (pattern: RegExp) => (value: unknown) => (typeof value === 'string' && pattern.test(value) ? Number(value) : value);

export function queryInt(min: number, max: number) {
  return z.preprocess(decimal(INTEGER), z.number().int().min(min).max(max));
}

export function queryNumber(min: number, max: number) {
  return z.preprocess(decimal(NUMBER), z.number().min(min).max(max));
}
