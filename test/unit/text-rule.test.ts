// The depth rule and the text rule as functions (src/http/text.ts), without a server: the depth checker reads raw JSON
// text in one pass and names where it first goes too deep; the text walk has no recursion, walks a value of any depth
// or width in linear time, builds a path only for what it reports, and names at most MAX_TEXT_ERRORS strings.
import { describe, expect, it } from 'vitest';
import { Problem } from '../../src/http/problem.ts';
import { MAX_DEPTH, MAX_TEXT_ERRORS, assertText, badTextFields, jsonDepthError, tooDeep } from '../../src/http/text.ts';
import { parseJsonText } from '../../src/http/body.ts';

const arrays = (depth: number, inner = '') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const objects = (depth: number, key = 'a', inner = '1') => `${`{"${key}":`.repeat(depth)}${inner}${'}'.repeat(depth)}`;

/** A parsed value `depth` containers deep, built without recursion (JSON.parse would need the depth rule's text). */
function nested(depth: number, leaf: unknown, kind: 'array' | 'object' = 'array'): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

function timed<T>(run: () => T): { result: T; ms: number } {
  const started = performance.now();
  const result = run();
  return { result, ms: performance.now() - started };
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

  it('reads 100,000 levels and a megabyte in one linear pass, and unbalanced text without complaint', () => {
    const deepArrays = timed(() => jsonDepthError(arrays(100_000)));
    const deepObjects = timed(() => jsonDepthError(objects(100_000)));
    const wide = timed(() => jsonDepthError(`[${'"xxxxxxxxxxxxxx",'.repeat(60_000)}1]`));
    expect(deepArrays.result?.path.split('.')).toHaveLength(32);
    expect(deepObjects.result?.path.split('.')).toHaveLength(32);
    expect(wide.result).toBeUndefined();
    // Linear work is a few milliseconds here; the bound is generous for a loaded machine.
    for (const { ms } of [deepArrays, deepObjects, wide]) expect(ms).toBeLessThan(250);
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
    const { result, ms } = timed(() => tooDeep(nested(200_000, 'x')));
    expect(result?.path.split('.')).toHaveLength(32);
    expect(ms).toBeLessThan(250);
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

  it('walks a value 100,000 levels deep without recursion, in linear time', () => {
    // The walk before this one recursed (RangeError a few thousand levels down) and copied its path at every level.
    const { result, ms } = timed(() => badTextFields(nested(100_000, 'bad\u0000', 'object')));
    expect(result).toHaveLength(1);
    expect(result[0].path.split('.')).toHaveLength(100_000);
    expect(ms).toBeLessThan(500);
  });

  it(`stops at ${MAX_TEXT_ERRORS} errors, however many strings are bad`, () => {
    expect(MAX_TEXT_ERRORS).toBe(20);
    const { result, ms } = timed(() => badTextFields(Array.from({ length: 300_000 }, () => 'x\u0001')));
    expect(result.map((error) => error.path)).toEqual(Array.from({ length: 20 }, (_, index) => String(index)));
    expect(ms).toBeLessThan(250);
    expect(badTextFields(['\u0001', '\u0002', '\u0003'], 2)).toHaveLength(2);
  });

  it('walks wide values (many fields, long arrays, long strings) in linear time', () => {
    const manyFields = Object.fromEntries(
      Array.from({ length: 200_000 }, (_, index) => [`field${index}`, `value ${index}`]),
    );
    const longArrays = nested(
      30,
      Array.from({ length: 300_000 }, (_, index) => (index % 2 ? 'text' : index)),
    );
    const longString = { text: 'x'.repeat(10_000_000) };
    for (const value of [manyFields, longArrays, longString]) {
      const { result, ms } = timed(() => badTextFields(value));
      expect(result).toEqual([]);
      expect(ms).toBeLessThan(1000);
    }
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
