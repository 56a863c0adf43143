// Small pieces every console page shares: a moment in one format (the web kit's, in the reader's language), and a
// status badge (its words on a coloured ground; the colour only repeats what the words say).
import { html, type SafeHtml } from '../http/html.ts';
import { formatDate, type Lang } from '../web/i18n.ts';

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
