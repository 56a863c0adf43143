// The console kit's pure parts: a section's dictionary (the reader's language, `{name}` placeholders) and a query
// parameter's text.
import { describe, expect, it } from 'vitest';
import { dictionary, queryText } from '../../src/admin/console-kit.ts';

const en = { hello: 'Hello, {name}!', count: '{count} of {count} left', plain: 'No placeholders' };
const ru: Record<keyof typeof en, string> = {
  hello: 'Здравствуйте, {name}!',
  count: 'Осталось {count} из {count}',
  plain: 'Без подстановок',
};
const words = dictionary(en, ru);

describe('dictionary', () => {
  it('answers the words of the reader’s language', () => {
    expect(words('en')('plain')).toBe('No placeholders');
    expect(words('ru')('plain')).toBe('Без подстановок');
  });

  it('puts values in every placeholder of their name, numbers as written', () => {
    expect(words('en')('hello', { name: 'Anna' })).toBe('Hello, Anna!');
    expect(words('ru')('hello', { name: 'Анна' })).toBe('Здравствуйте, Анна!');
    expect(words('en')('count', { count: 3 })).toBe('3 of 3 left');
    expect(words('en')('count', { count: 0 })).toBe('0 of 0 left');
  });

  it('leaves a placeholder without a value as written, inherited names included', () => {
    expect(words('en')('hello')).toBe('Hello, {name}!');
    expect(words('en')('hello', { other: 'x' })).toBe('Hello, {name}!');
    expect(dictionary({ a: '{constructor}' }, { a: '{toString}' })('ru')('a', {})).toBe('{toString}');
  });

  it('does not read a value as a pattern', () => {
    expect(words('en')('hello', { name: '$& {name} $1' })).toBe('Hello, $& {name} $1!');
  });

  it('refuses a Russian table that misses a key when type-checked', () => {
    // @ts-expect-error: `count` and `plain` are missing from the Russian table.
    const partial = dictionary(en, { hello: 'Привет' });
    expect(partial('en')('hello', { name: 'A' })).toBe('Hello, A!');
  });
});

describe('queryText', () => {
  it('trims and cuts a parameter to its length', () => {
    expect(queryText({ q: '  shop  ' }, 'q', 200)).toBe('shop');
    expect(queryText({ q: ' abcdef' }, 'q', 3)).toBe('abc');
  });

  it('is empty for an absent, repeated or blank parameter', () => {
    expect(queryText({}, 'q', 200)).toBe('');
    expect(queryText({ q: ['a', 'b'] }, 'q', 200)).toBe('');
    expect(queryText({ q: '   ' }, 'q', 200)).toBe('');
  });
});
