// The console kit's pure parts: a section's dictionary (the reader's language, `{name}` placeholders), a query
// parameter's text, and a list's pages and empty state.
import { describe, expect, it } from 'vitest';
import { dictionary, emptyList, pagePlace, pager, queryText } from '../../src/admin/console-kit.ts';
import type { SafeHtml } from '../../src/http/html.ts';

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

describe('a list’s pages', () => {
  const digits = (cursor: string) => /^[0-9]+$/.test(cursor);
  const text = (markup: SafeHtml) => markup.value;
  const links = (markup: SafeHtml) =>
    Object.fromEntries(
      [...markup.value.matchAll(/<a rel="(prev|next)" href="([^"]*)">/g)].map(([, rel, href]) => [
        rel,
        href.replaceAll('&#38;', '&'),
      ]),
    );

  it('reads the cursor and the earlier pages, dropping any that is not a cursor', () => {
    expect(pagePlace({}, digits)).toEqual({ trail: [] });
    expect(pagePlace({ starting_after: '30', back: '90,60' }, digits)).toEqual({ after: '30', trail: ['90', '60'] });
    expect(pagePlace({ starting_after: 'x', back: '90' }, digits)).toEqual({ trail: [] });
    expect(pagePlace({ starting_after: '30', back: '90,x' }, digits)).toEqual({ after: '30', trail: [] });
    expect(pagePlace({ starting_after: ['30', '60'] }, digits)).toEqual({ trail: [] });
  });

  it('goes on from the last row and back along the trail, keeping the filters and leaving out empty ones', () => {
    const filters = { q: 'a b', status: '', actor: undefined };
    expect(links(pager('en', { path: '/list', filters, place: { trail: [] }, last: '90' }))).toEqual({
      next: '/list?q=a+b&starting_after=90',
    });
    expect(links(pager('en', { path: '/list', filters, place: { after: '90', trail: [] }, last: '60' }))).toEqual({
      prev: '/list?q=a+b',
      next: '/list?q=a+b&starting_after=60&back=90',
    });
    expect(
      links(pager('en', { path: '/list', filters, place: { after: '30', trail: ['90', '60'] }, hash: '#log' })),
    ).toEqual({ prev: '/list?q=a+b&starting_after=60&back=90#log' });
  });

  it('says which page it is, in the reader’s language, and nothing on a list of one page', () => {
    expect(text(pager('ru', { path: '/l', place: { after: '30', trail: ['90'] } }))).toContain('Страница 3');
    expect(text(pager('en', { path: '/l', place: { trail: [] }, last: '1' }))).toContain('Page 1');
    expect(text(pager('en', { path: '/l', place: { trail: [] } }))).toBe('');
  });

  it('says an empty list matches no filter, with the way to the whole list, or has nothing yet', () => {
    const filtered = text(emptyList('ru', { filtered: true, none: 'Пусто.', path: '/l' }));
    expect(filtered).toContain('По этим фильтрам ничего не найдено.');
    expect(filtered).toContain('<a href="/l">Сбросить фильтры</a>');
    expect(text(emptyList('en', { filtered: false, none: 'No deals yet.', path: '/l' }))).toContain('No deals yet.');
  });
});
