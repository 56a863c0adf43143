// Console forms that create something are safe to send twice: post/redirect/get, with a one-time key in the form.
// A form carries `_once` (a fresh UUID each time the form is drawn); the post claims it in `console_once` before it
// changes anything, and a second post of the same form (a reload, the back button, a double click) finds the claim and
// is redirected to the first one's result: nothing is created again. A key or secret the change made is shown on the
// page the post redirects to, read from the claim once (sealed with SVC_MASTER_KEY until then) and never again; a
// reload of that page says so in words. Claims live in PostgreSQL, so every instance of the service sees them.
import { randomUUID } from 'node:crypto';
import { html, type SafeHtml } from '../http/html.ts';
import { problem } from '../http/problem.ts';
import type { Services } from '../services.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import { isUuid } from '../uuid.ts';
import { redirect, send } from '../web/page.ts';
import type { ConsolePage } from './console.ts';

export const ONCE_FIELD = '_once';
const SHOWN_PATH = '/admin/view/shown';

/** The hidden field of a form that creates something: a new key each time the form is drawn. */
export function onceField(): SafeHtml {
  return html`<input type="hidden" name="${ONCE_FIELD}" value="${randomUUID()}">`;
}

/** Keys and secrets to show once on the page after the redirect, with the words around them. */
export interface Reveal {
  title: string;
  /** The warning above the keys ("shown only this once"). */
  warning: string;
  items: [label: string, id: string, value: string][];
  /** A sentence below the keys (when an overlap ends), if any. */
  note?: string;
  back: { href: string; label: string };
}

/** What a change did: where to go next, and the keys to show there once (then the redirect goes to them). */
export type OnceResult = { location: string; reveal?: undefined } | { reveal: Reveal; location?: undefined };

/**
 * Runs a change at most once per form: claims the form's `_once` key (a form without one, e.g. a script's post, is
 * not deduplicated), makes the change, and redirects (303) to its result. A repeated key redirects to the first post's
 * result without running `change`; a change that fails frees its key, so the corrected form can be sent again.
 */
export async function runOnce(
  p: ConsolePage,
  services: Services,
  form: URLSearchParams,
  change: () => Promise<OnceResult>,
): Promise<void> {
  const { db } = services;
  const key = form.get(ONCE_FIELD) ?? '';
  const administrator = p.admin.administratorId ?? p.admin.actor;
  let claim: string | undefined;
  if (isUuid(key)) {
    await db.query("DELETE FROM console_once WHERE expires_at < now() - interval '1 day'");
    const claimed = await db.query<{ id: string }>(
      `INSERT INTO console_once (administrator_id, form_key) VALUES ($1, $2)
       ON CONFLICT (administrator_id, form_key) DO NOTHING RETURNING id`,
      [administrator, key],
    );
    if (claimed.rows.length === 0) {
      const first = await db.query<{ location: string | null }>(
        'SELECT location FROM console_once WHERE administrator_id = $1 AND form_key = $2',
        [administrator, key],
      );
      const location = first.rows[0]?.location;
      if (!location) throw problem('idempotency_key_in_use', 'This form is being sent already.');
      return redirect(p.ctx, location);
    }
    claim = claimed.rows[0].id;
  }
  let result: OnceResult;
  try {
    result = await change();
  } catch (error) {
    if (claim) await db.query('DELETE FROM console_once WHERE id = $1', [claim]);
    throw error;
  }
  if (result.reveal) {
    const { back } = result.reveal;
    const sealed = encryptSecret(services.masterKey, JSON.stringify(result.reveal));
    const id = claim ?? randomUUID();
    const location = `${SHOWN_PATH}/${id}`;
    await db.query(
      `INSERT INTO console_once (id, administrator_id, form_key, reveal_sealed, back_href, back_label, location)
       VALUES ($1::uuid, $2, $7, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET reveal_sealed = $3, back_href = $4, back_label = $5, location = $6`,
      [id, administrator, sealed, back.href, back.label, location, id],
    );
    return redirect(p.ctx, location);
  }
  if (claim) await db.query('UPDATE console_once SET location = $2 WHERE id = $1', [claim, result.location]);
  redirect(p.ctx, result.location);
}

/** Words of the page that shows keys once, in the console's language. */
export interface ShownWords {
  goneTitle: string;
  goneText: string;
  back: string;
}

/**
 * GET /admin/view/shown/{id}: the keys of a change, to the administrator who made it, once. The row is blanked in the
 * same statement that reads it; a second read (a reload) and an expired one say the keys are not shown again.
 */
export async function showOnce(p: ConsolePage, services: Services, words: ShownWords): Promise<void> {
  const id = String(p.ctx.params.id);
  if (!isUuid(id)) throw problem('not_found', 'No such page.');
  const administrator = p.admin.administratorId ?? p.admin.actor;
  const { rows } = await services.db.query<{
    sealed: string | null;
    back_href: string | null;
    back_label: string | null;
    fresh: boolean;
  }>(
    `UPDATE console_once o SET reveal_sealed = NULL, shown_at = coalesce(o.shown_at, now())
       FROM (SELECT id, reveal_sealed, expires_at > now() AS fresh FROM console_once WHERE id = $1 AND administrator_id = $2 FOR UPDATE) old
      WHERE o.id = old.id
      RETURNING old.reveal_sealed AS sealed, o.back_href, o.back_label, old.fresh`,
    [id, administrator],
  );
  const row = rows[0];
  if (!row) throw problem('not_found', 'No such page.');
  const back = { href: row.back_href ?? '/admin', label: row.back_label ?? words.back };
  if (!row.sealed || !row.fresh) {
    const body = html`<h1>${words.goneTitle}</h1>
<p class="notice" role="status">${words.goneText}</p>
<p><a class="button secondary" href="${back.href}">${back.label}</a></p>`;
    return send(p, 200, words.goneTitle, body, back.href, p.admin);
  }
  const reveal = JSON.parse(decryptSecret(services.masterKey, row.sealed)) as Reveal;
  send(p, 200, reveal.title, revealBody(p, reveal), back.href, p.admin);
}

/** Keys in a monospace block each, with a copy button beside it (console.js; without it the key stays selectable). */
export function secretBlock(p: ConsolePage, id: string, value: string): SafeHtml {
  return html`<div class="secret"><code id="${id}" class="secret-value">${value}</code><button type="button" class="secondary copy" data-copy-target="${id}" data-copied="${p.c('copied')}" data-copy-failed="${p.c('copyFailed')}" hidden>${p.c('copy')}</button></div>`;
}

/** The live region the copy buttons report in (once per page). */
export function copyStatus(): SafeHtml {
  return html`<p class="copy-status" id="copy-status" aria-live="polite"></p><script src="/admin/assets/console.js" defer></script>`;
}

function revealBody(p: ConsolePage, reveal: Reveal): SafeHtml {
  return html`<h1>${reveal.title}</h1>
<p class="error" role="alert">${reveal.warning}</p>
<dl class="secrets">${reveal.items.map(([label, id, value]) => html`<dt>${label}</dt><dd>${secretBlock(p, id, value)}</dd>`)}</dl>
${copyStatus()}
${reveal.note && html`<p>${reveal.note}</p>`}
<p><a class="button secondary" href="${reveal.back.href}">${reveal.back.label}</a></p>`;
}
