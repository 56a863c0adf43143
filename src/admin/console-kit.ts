// Small pieces every console page shares: a section's words in two languages (`dictionary`), a query's text
// (`queryText`), a moment in one format (the web kit's, in the reader's language), and a status badge (its words on a
// coloured ground; the colour only repeats what the words say). A page's actions are `console-actions.ts`.
import { html, type SafeHtml } from '../http/html.ts';
import { formatDate, type Lang } from '../web/i18n.ts';

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
