// HTML made safe by construction: html`…` escapes every interpolated value unless it is already SafeHtml, so user
// text (titles, names, comments) can never become markup.

export class SafeHtml {
  constructor(readonly value: string) {}
}

type Part = SafeHtml | string | number | null | undefined | false | readonly Part[];

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  return new SafeHtml(strings.reduce((out, text, i) => out + text + (i < values.length ? render(values[i]) : ''), ''));
}
