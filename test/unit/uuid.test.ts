// The one UUID check of src (src/uuid.ts): what may go on to a PostgreSQL uuid column. What passes must be text the
// column reads (else the query fails with a 500 where a 404 is meant); what fails is answered as an unknown id.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isUuid } from '../../src/uuid.ts';

// [text, a UUID]
const CASES: [string, boolean][] = [
  [randomUUID(), true],
  ['0191f3c2-7b4a-7c3e-9d1f-2a3b4c5d6e7f', true], // version 7
  ['00000000-0000-0000-0000-000000000000', true], // nil: any version, as the column takes it
  ['ffffffff-ffff-ffff-ffff-ffffffffffff', true],
  ['11111111-1111-1111-1111-111111111111', true], // no RFC variant bits: still a uuid to PostgreSQL
  ['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', true], // upper case, as a caller may type it
  ['a0eebc99-9C0B-4ef8-bb6d-6BB9BD380a11', true],
  ['', false],
  ['-'.repeat(36), false], // the old [0-9a-f-]{36} took this, and PostgreSQL refused it
  ['a0eebc999c0b4ef8bb6d6bb9bd380a11', false], // PostgreSQL reads it, but no id of ours is written so
  ['{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', false],
  ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1', false],
  ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111', false],
  ['a0eebc99-9c0b-4ef8-bb6d6-bb9bd380a11', false],
  ['g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', false],
  ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\n', false], // $ is the end of the text, not of a line
  [' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', false],
  ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11/..', false],
  ['a0eebc99‐9c0b‐4ef8‐bb6d‐6bb9bd380a11', false], // U+2010 hyphens
  ['а0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', false], // Cyrillic а
  ['not-a-uuid', false],
];

describe('isUuid', () => {
  it.each(CASES)('%j → %s', (text, expected) => {
    expect(isUuid(text)).toBe(expected);
  });
});
