// The depth rule and the text rule as functions (src/http/text.ts), without a server: the depth checker reads raw JSON
// text in one pass and names where it first goes too deep; the text walk has no recursion, walks a value of any depth
// or width in linear time, builds a path only for what it reports, and names at most MAX_TEXT_ERRORS strings.
import { describe, expect, it } from 'vitest';
import { Problem } from '../../src/http/problem.ts';
import {
  MAX_DEPTH,
  MAX_TEXT_ERRORS,
  assertText,
  badTextFields,
  badTextReason,
  jsonDepthError,
  nonBlank,
  tooDeep,
} from '../../src/http/text.ts';
import { parseJsonText } from '../../src/http/body.ts';

const arrays = (depth: number, inner = '') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const objects = (depth: number, key = 'a', inner = '1') => `${`{"${key}":`.repeat(depth)}${inner}${'}'.repeat(depth)}`;

/** A parsed value `depth` containers deep, built without recursion (JSON.parse would need the depth rule's text). */
function nested(depth: number, leaf: unknown, kind: 'array' | 'object' = 'array'): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

describe('the depth rule on raw JSON text (jsonDepthError)', () => {
  it('takes 32 levels and refuses the 33rd, naming the path to it', () => {
    expect(MAX_DEPTH).toBe(32);
    expect(jsonDepthError(arrays(32))).toBeUndefined();
    expect(jsonDepthError(objects(32))).toBeUndefined();
    expect(jsonDepthError(arrays(33))).toEqual({
      path: Array(32).fill('0').join('.'),
      message: expect.stringContaining('deeper than 32 levels'),
    });
    expect(jsonDepthError(objects(33))?.path).toBe(Array(32).fill('a').join('.'));
    // Scalars and empty containers are no deeper than they look.
    for (const text of ['1', '"x"', 'null', '[]', '{}', '[1,2,3]', '{"a":[{"b":{}}]}'])
      expect(jsonDepthError(text), text).toBeUndefined();
  });

  it('names array positions and field names as zod does, the current ones at each level', () => {
    const text = `{"first":[1,{"x":[]}],"second":[0,1,2,${arrays(31)}]}`;
    expect(jsonDepthError(text)?.path).toBe(['second', '3', ...Array(30).fill('0')].join('.'));
    // A value string is not a key; escaped keys are unescaped, keys that break the text rule quoted.
    expect(jsonDepthError(`{"k":"v","n\\u0061me":${arrays(32)}}`)?.path).toBe(
      ['name', ...Array(31).fill('0')].join('.'),
    );
    expect(jsonDepthError(`{"a\\u0001":${arrays(32)}}`)?.path.startsWith('"a\\u0001".0')).toBe(true);
    // A long field name is cut in the path, so the answer stays small.
    expect(jsonDepthError(`{"${'k'.repeat(10_000)}":${arrays(32)}}`)!.path.length).toBeLessThan(200);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthError(JSON.stringify({ text: '['.repeat(10_000) }))).toBeUndefined();
    expect(
      jsonDepthError(JSON.stringify(['\\"[[[[', '"{{{{', '\\', '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['])),
    ).toBeUndefined();
    expect(jsonDepthError(`["\\\\", ${arrays(32)}]`)?.path).toBe(['1', ...Array(31).fill('0')].join('.'));
  });

  it('reads 100,000 levels and a megabyte without recursion, and unbalanced text without complaint', () => {
    // How fast is for a benchmark, not a test; what this proves is that nothing recurses or gives up.
    expect(jsonDepthError(arrays(100_000))?.path.split('.')).toHaveLength(32);
    expect(jsonDepthError(objects(100_000))?.path.split('.')).toHaveLength(32);
    expect(jsonDepthError(`[${'"xxxxxxxxxxxxxx",'.repeat(60_000)}1]`)).toBeUndefined();
    for (const text of [']]]]]', '[[[[', '{"a":', '"unterminated [[[[', '}{'])
      expect(jsonDepthError(text), text).toBeUndefined();
  });
});

describe('the depth rule on parsed values (tooDeep)', () => {
  it('takes 32 levels and names the first container below them', () => {
    expect(tooDeep(nested(32, 1))).toBeUndefined();
    expect(tooDeep(nested(31, [], 'object'))).toBeUndefined(); // an empty array is a level too
    expect(tooDeep(nested(32, [], 'object'))?.path).toBe(Array(32).fill('a').join('.'));
    expect(tooDeep(nested(33, 1))?.path).toBe(Array(32).fill('0').join('.'));
    expect(tooDeep({ ok: [1, 2], deep: nested(32, {}, 'object') })?.path).toBe(
      ['deep', ...Array(31).fill('a')].join('.'),
    );
  });

  it('walks a value 200,000 deep without recursion', () => {
    expect(tooDeep(nested(200_000, 'x'))?.path.split('.')).toHaveLength(32);
  });
});

describe('the text walk (badTextFields)', () => {
  it('names each refused string and field name in document order, paths as zod writes them', () => {
    const errors = badTextFields({
      a: [{ b: 'ok' }, { b: 'x\u0000' }],
      'k\u0001': 'ignored',
      c: { d: 'y\ud800' },
      e: 'fine',
    });
    expect(errors.map((error) => error.path)).toEqual(['a.1.b', '"k\\u0001"', 'c.d']);
    expect(errors[0].message).toContain('U+0000');
    expect(errors[1].message).toMatch(/^has a field name that/);
    expect(errors[2].message).toContain('lone surrogate');
    expect(badTextFields('\u0007')).toEqual([{ path: '', message: expect.stringContaining('U+0007') }]);
    expect(badTextFields({ a: ['tab\tline\nreturn\r', 1, null, true, { b: '😀' }] })).toEqual([]);
  });

  it('walks a value 100,000 levels deep without recursion', () => {
    // The walk before this one recursed (RangeError a few thousand levels down) and copied its path at every level.
    const result = badTextFields(nested(100_000, 'bad\u0000', 'object'));
    expect(result).toHaveLength(1);
    expect(result[0].path.split('.')).toHaveLength(100_000);
  });

  it(`stops at ${MAX_TEXT_ERRORS} errors, however many strings are bad`, () => {
    expect(MAX_TEXT_ERRORS).toBe(20);
    const result = badTextFields(Array.from({ length: 300_000 }, () => 'x\u0001'));
    expect(result.map((error) => error.path)).toEqual(Array.from({ length: 20 }, (_, index) => String(index)));
    expect(badTextFields(['\u0001', '\u0002', '\u0003'], 2)).toHaveLength(2);
  });

  it('walks wide values (many fields, long arrays, long strings)', () => {
    const manyFields = Object.fromEntries(
      Array.from({ length: 200_000 }, (_, index) => [`field${index}`, `value ${index}`]),
    );
    const longArrays = nested(
      30,
      Array.from({ length: 300_000 }, (_, index) => (index % 2 ? 'text' : index)),
    );
    const longString = { text: 'x'.repeat(10_000_000) };
    for (const value of [manyFields, longArrays, longString]) expect(badTextFields(value)).toEqual([]);
  });
});

describe('assertText and parseJsonText', () => {
  it('refuses a value beyond the depth rule as 400 validation_failed naming where, before the text walk', () => {
    const refusal = (() => {
      try {
        assertText(nested(40, '\u0000'), 'body');
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(Problem);
    expect(refusal).toMatchObject({
      status: 400,
      code: 'validation_failed',
      errors: [{ path: Array(32).fill('0').join('.') }],
    });
    expect((refusal as Problem).errors).toHaveLength(1); // the depth, not the string below it
  });

  it('names at most the first 20 bad strings and says so', () => {
    try {
      assertText(
        Array.from({ length: 1000 }, () => '\u0001'),
        'body',
      );
      expect.unreachable();
    } catch (error) {
      expect((error as Problem).errors).toHaveLength(20);
      expect((error as Problem).message).toContain('the first 20');
    }
  });

  it('checks depth on the text before JSON.parse: deep and malformed is still validation_failed', () => {
    expect(() => parseJsonText(arrays(100_000))).toThrow(
      expect.objectContaining({ status: 400, code: 'validation_failed' }),
    );
    expect(() => parseJsonText(`${'['.repeat(50)}oops`)).toThrow(
      expect.objectContaining({ code: 'validation_failed' }),
    );
    expect(() => parseJsonText('[1,')).toThrow(expect.objectContaining({ code: 'invalid_json' }));
    expect(parseJsonText(objects(32))).toEqual(nested(32, 1, 'object'));
  });
});

describe('the text rule, character by character (badTextReason)', () => {
  // Of the C0 controls only these three may enter: written out, so widening the rule is a decision made here too.
  const ALLOWED_C0 = new Set([0x09, 0x0a, 0x0d]);

  const C0 = Array.from({ length: 0x20 }, (_, code) => ({
    code,
    name: `U+${code.toString(16).toUpperCase().padStart(4, '0')}`,
  }));

  it.each(C0)('$name', ({ code, name }) => {
    const reason = badTextReason(`ok${String.fromCharCode(code)}`);
    if (ALLOWED_C0.has(code)) expect(reason).toBeUndefined();
    else
      expect(reason).toBe(
        `must not contain control characters; it holds ${name} at position 2 (only tab, line feed and carriage return are allowed)`,
      );
  });

  // What the rule lets through today: it guards the database, the workflows and the logs, not how text looks (pages
  // escape text, but nothing isolates its direction). Pinned so that a change to the rule is a change to this table.
  it.each([
    ['DEL', '\u007f'],
    ['C1 controls (NEL, U+009F)', '\u0085\u009f'],
    ['line and paragraph separators', '\u2028\u2029'],
    ['bidi embeddings and overrides (LRE, RLE, PDF, LRO, RLO)', '\u202a\u202b\u202c\u202d\u202e'],
    ['bidi isolates (LRI, RLI, FSI, PDI)', '\u2066\u2067\u2068\u2069'],
    ['bidi marks (LRM, RLM, ALM)', '\u200e\u200f\u061c'],
    ['zero-width space and joiner', '\u200b\u200d'],
    ['byte order mark', '\ufeff'],
    ['noncharacters', '\ufffe\uffff'],
    ['a surrogate pair', '\ud83d\ude00'],
    ['a tab, a line feed, a carriage return', '\t\n\r'],
  ])('lets %s through', (_what, text) => {
    expect(badTextReason(`a${text}b`)).toBeUndefined();
  });

  // [text, where the lone surrogate is, which]
  it.each([
    ['\ud83d', 0, 'U+D83D'],
    ['\ude00', 0, 'U+DE00'],
    ['\ude00\ud83d', 0, 'U+DE00'], // a pair in the wrong order is two lone halves
    ['a\ud83d', 1, 'U+D83D'],
    ['\ud83d\ud83d\ude00', 0, 'U+D83D'], // a high half followed by a full pair
    ['😀\ude00', 2, 'U+DE00'],
  ])('refuses the lone surrogate in %j at %s (%s)', (text, position, name) => {
    expect(badTextReason(text)).toBe(
      `must be valid Unicode text; it holds a lone surrogate (${name}) at position ${position}`,
    );
  });

  it('names the first refused character of many', () => {
    expect(badTextReason('ok\u0001\u0000\ud800')).toContain('U+0001 at position 2');
  });
});

describe('free text that must say something (nonBlank)', () => {
  const five = nonBlank(5);
  // [input, what enters, or the refusal]
  it.each<[string, string | RegExp]>([
    ['12345', '12345'],
    [' a ', 'a'],
    ['😀😀😀😀😀', '😀😀😀😀😀'], // characters, as JSON Schema's maxLength counts them, not UTF-16 units
    ['123456', /<=5 characters/],
    ['😀😀😀😀😀😀', /<=5 characters/],
    // The length is counted before trimming, as maxLength counts: what the schema refuses, the server refuses.
    [' 1234 ', /<=5 characters/],
    ['', /must not be blank/],
    ['   ', /must not be blank/],
    ['\t\n', /must not be blank/],
    ['\u00a0', /must not be blank/], // no-break space
    ['\u3000', /must not be blank/], // ideographic space
    // Not whitespace to JavaScript, so not blank: a zero-width space alone says nothing, yet enters.
    ['\u200b', '\u200b'],
  ])('%j → %s', (input, expected) => {
    const result = five.safeParse(input);
    if (typeof expected === 'string') expect(result).toEqual({ success: true, data: expected });
    else expect(result.error?.issues.map((issue) => issue.message).join('; ')).toMatch(expected);
  });
});

describe('the depth rule at other limits, and where refusals are named', () => {
  it('counts arrays and objects alike, at any limit', () => {
    expect(jsonDepthError('[]', 1)).toBeUndefined();
    expect(jsonDepthError('[[]]', 1)?.path).toBe('0');
    expect(jsonDepthError('[]', 0)?.path).toBe('');
    expect(jsonDepthError('{"a":[{"b":[[]]}]}', 4)?.path).toBe('a.0.b.0');
    expect(jsonDepthError('{"a":[{"b":[[]]}]}', 5)).toBeUndefined();
    expect(tooDeep([], 0)?.path).toBe('');
    expect(tooDeep('scalar', 0)).toBeUndefined();
    expect(tooDeep({ a: [{ b: [[]] }] }, 4)?.path).toBe('a.0.b.0');
    expect(tooDeep({ a: [{ b: [[]] }] }, 5)).toBeUndefined();
  });

  it('names the part of the request a bare value came from', () => {
    for (const where of ['query', 'header', 'form', 'arguments'] as const) {
      expect(() => assertText('\u0001', where)).toThrow(
        expect.objectContaining({ code: 'validation_failed', errors: [expect.objectContaining({ path: where })] }),
      );
    }
  });

  it('quotes a refused field name and cuts a long one', () => {
    const errors = badTextFields({ [`\u0000${'k'.repeat(100)}`]: 1 });
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(error.path.startsWith('"\\u0000kkk')).toBe(true);
    expect(error.path.length).toBeLessThanOrEqual(65);
    expect(error.message).toMatch(/^has a field name that must not contain control characters/);
  });
});
