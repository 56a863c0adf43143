// Small pieces every console page shares: a section's words in two languages (`dictionary`), a query's text
// (`queryText`), a moment in one format (the web kit's, in the reader's language), and a status badge (its words on a
// coloured ground; the colour only repeats what the words say). A page's actions are `console-actions.ts`.
import { html, type SafeHtml } from '../http/html.ts';
import { formatDate, type Lang } from '../web/i18n.ts';
import type { DealStatus } from '../deals/model.ts';

/** A section's words: a key and the values of its `{name}` placeholders give the words in the reader's language. */
export type Words<K extends string> = (key: K, values?: Record<string, string | number>) => string;

/**
 * A section's dictionary: the English table and the Russian one typed against it (`Record<keyof typeof en, string>`,
 * so a missing key fails type-checking). `{name}` is replaced by `values.name`; a placeholder without a value stays as
 * it is written.
 */
export function dictionary<K extends string>(
  en: Readonly<Record<K, string>>,
  ru: Readonly<Record<NoInfer<K>, string>>,
): (lang: Lang) => Words<K> {
  const words =
    (table: Readonly<Record<K, string>>): Words<K> =>
    (key, values = {}) =>
      table[key].replace(/\{(\w+)\}/g, (whole, name: string) => {
        const value = Object.hasOwn(values, name) ? values[name] : undefined;
        return value === undefined ? whole : String(value);
      });
  const [english, russian] = [words(en), words(ru)];
  return (lang) => (lang === 'ru' ? russian : english);
}

/**
 * A query parameter's text as a page reads it: trimmed and cut to `max` characters; absent, repeated (`?q=a&q=b`) or
 * empty, it is ''.
 */
export function queryText(query: Readonly<Record<string, unknown>>, name: string, max: number): string {
  const value = query[name];
  return typeof value === 'string' ? value.trim().slice(0, max) : '';
}

/** A form field's text: trimmed and cut to `max` characters (all of it by default); absent, it is ''. */
export function formText(form: URLSearchParams, name: string, max = Infinity): string {
  return (form.get(name) ?? '').trim().slice(0, max);
}

/** A moment as every console page shows it, with the exact instant in `datetime` (and in a tooltip). */
export function when(lang: Lang, date: Date | string): SafeHtml {
  const iso = typeof date === 'string' ? new Date(date).toISOString() : date.toISOString();
  return html`<time datetime="${iso}" title="${iso.slice(0, 19).replace('T', ' ')} UTC">${formatDate(lang, iso)}</time>`;
}

export type BadgeTone = 'ok' | 'warn' | 'bad' | 'info' | 'muted';

/** Each deal status's colour, by what it asks of an operator (the console's and the cabinet's badges). */
export const DEAL_TONES: Readonly<Record<DealStatus, BadgeTone>> = {
  created: 'info',
  docs: 'info',
  approval: 'info',
  approved: 'info',
  rejected: 'muted',
  escrow_hold: 'warn',
  paid: 'ok',
  refunded: 'muted',
  disputed: 'bad',
  cancelled: 'muted',
};

/** A status as a badge: the words, coloured by their tone (cabinet.css, the console's section). */
export function badge(tone: BadgeTone, text: string): SafeHtml {
  return html`<span class="badge badge-${tone}">${text}</span>`;
}

/** How long ago, in the reader's words, to the largest whole unit: minutes, hours, then days. */
export function ageWords(lang: Lang, milliseconds: number): string {
  const minutes = Math.max(0, Math.floor(milliseconds / 60_000));
  const [count, unit]: [number, 'minute' | 'hour' | 'day'] =
    minutes < 60
      ? [minutes, 'minute']
      : minutes < 48 * 60
        ? [Math.floor(minutes / 60), 'hour']
        : [Math.floor(minutes / (24 * 60)), 'day'];
  if (lang === 'ru') {
    const forms = {
      minute: ['минута', 'минуты', 'минут'],
      hour: ['час', 'часа', 'часов'],
      day: ['день', 'дня', 'дней'],
    }[unit];
    const tens = count % 100;
    const ones = count % 10;
    const form = tens >= 11 && tens <= 14 ? 2 : ones === 1 ? 0 : ones >= 2 && ones <= 4 ? 1 : 2;
    return `${count} ${forms[form]}`;
  }
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

const pagerWords = dictionary(
  {
    pages: 'Pages',
    previous: '← Previous page',
    next: 'Next page →',
    page: 'Page {n}',
    noMatch: 'Nothing matches these filters.',
    showAll: 'Clear the filters',
  },
  {
    pages: 'Страницы',
    previous: '← Предыдущая страница',
    next: 'Следующая страница →',
    page: 'Страница {n}',
    noMatch: 'По этим фильтрам ничего не найдено.',
    showAll: 'Сбросить фильтры',
  },
);

/** Where a keyset-paged list is: the cursor its page starts after, and the cursors of the pages before it. */
export interface PagePlace {
  /** The `starting_after` of this page; none on the first page. */
  after?: string;
  /** The `starting_after` of each earlier page but the first, oldest first: "Previous" goes back along them. */
  trail: string[];
}

/** Pages a "Previous" link can go back along; beyond them it goes to the first page. */
const TRAIL_MAX = 40;

/**
 * A list page's place from its query: `starting_after` and `back` (the earlier pages' cursors, comma-separated), each
 * kept only when `valid` takes it (a cursor of another shape, or any after a bad one, starts from the first page).
 */
export function pagePlace(query: Readonly<Record<string, unknown>>, valid: (cursor: string) => boolean): PagePlace {
  const after = queryText(query, 'starting_after', 200);
  if (!after || !valid(after)) return { trail: [] };
  const back = queryText(query, 'back', 200 * TRAIL_MAX);
  const trail = back ? back.split(',').slice(-TRAIL_MAX) : [];
  return { after, trail: trail.every(valid) ? trail : [] };
}

/**
 * A keyset-paged list's links: "Previous" back along the trail, "Next" on from `last` (the page's last row, when
 * there are more), both keeping the list's `filters` (empty ones left out), and which page this is.
 */
export function pager<F extends { [K in keyof F]: string | undefined }>(
  lang: Lang,
  list: { path: string; filters?: F; place: PagePlace; last?: string; hash?: string },
): SafeHtml {
  const { place } = list;
  if (!place.after && !list.last) return html``;
  const w = pagerWords(lang);
  const filters = Object.entries<string | undefined>(list.filters ?? {}).filter(
    (entry): entry is [string, string] => !!entry[1],
  );
  const href = (after: string | undefined, trail: string[]) => {
    const query = new URLSearchParams(filters);
    if (after) query.set('starting_after', after);
    if (trail.length > 0) query.set('back', trail.join(','));
    const search = query.toString();
    return `${list.path}${search ? `?${search}` : ''}${list.hash ?? ''}`;
  };
  const previous = place.after ? href(place.trail.at(-1), place.trail.slice(0, -1)) : undefined;
  const next = list.last ? href(list.last, place.after ? [...place.trail, place.after] : []) : undefined;
  const number = place.after ? place.trail.length + 2 : 1;
  return html`<nav class="pager" aria-label="${w('pages')}">${previous && html`<a rel="prev" href="${previous}">${w('previous')}</a>`}<span class="muted">${w('page', { n: number })}</span>${next && html`<a rel="next" href="${next}">${w('next')}</a>`}</nav>`;
}

/**
 * What an empty list says: with filters set, that nothing matches them and a link to the whole list; without, the
 * list's own words for having nothing yet.
 */
export function emptyList(lang: Lang, list: { filtered: boolean; none: string; path: string }): SafeHtml {
  const w = pagerWords(lang);
  return list.filtered
    ? html`<p class="empty" id="empty">${w('noMatch')} <a href="${list.path}">${w('showAll')}</a></p>`
    : html`<p class="empty" id="empty">${list.none}</p>`;
}
