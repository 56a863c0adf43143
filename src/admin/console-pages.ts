// The console shell's pages: sign-in and sign-out, the setup of a new administrator (password and TOTP), the home
// page, the audit log, the administrators, and the mail outbox. Sections (marketplaces, deals, SSO clients, data
// accounts) add their own pages beside their JSON operations with the same wrapper (console.ts).
import QRCode from 'qrcode';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { html, SafeHtml } from '../http/html.ts';
import { Problem, problem } from '../http/problem.ts';
import { EmailSchema } from '../accounts/users.ts';
import { csrfField, message } from '../web/layout.ts';
import { readForm, redirect, safeNext, send } from '../web/page.ts';
import { preSessionCsrf, validPreSessionCsrf } from '../web/session.ts';
import { ADMIN_ROLES, type AdminRole } from './auth.ts';
import { listAudit, type AuditRecord } from './audit.ts';
import {
  ADMIN_SESSION_SECONDS,
  adminSignIn,
  completeSetup,
  createAdministrator,
  endAdminSession,
  findAdministrator,
  administratorPage,
  sendSetupLink,
  setupState,
  updateAdministrator,
  type Administrator,
} from './administrators.ts';
import {
  consoleForm,
  consolePage,
  consoleToken,
  publicConsolePage,
  setConsoleCookie,
  type ConsolePage,
} from './console.ts';
import type { ConsoleTranslate } from './console-i18n.ts';
import { readOutbox } from '../mail/routes.ts';
import { consoleAssets } from './console-assets.ts';
import {
  ageWords,
  badge,
  emptyList,
  formText,
  pagePlace,
  pager,
  queryText,
  when,
  type BadgeTone,
} from './console-kit.ts';
import { consoleAction, consoleActions, type ConsoleAction } from './console-actions.ts';
import { attention, type Attention } from './console-home.ts';
import { onceField, showOnce } from './console-once.ts';
import { isUuid } from '../uuid.ts';
import { secondFactorSettingLink } from '../mfa/console-page.ts';
import { peopleLink } from '../mfa/console-person.ts';

const AUDIT_PAGE = 50;
const MAIL_PAGE = 50;
const isRole = (value: unknown): value is AdminRole => ADMIN_ROLES.includes(value as AdminRole);
const consoleNext = (value: unknown, baseUrl: string) => {
  const next = safeNext(value, baseUrl);
  return next.startsWith('/admin') ? next : '/admin';
};

export function consolePages(api: Api, services: Services): void {
  const router = api.router;
  const base = () => services.config.BASE_URL;
  consoleAssets(api);

  // The keys a console form made, shown once after its redirect (console-once.ts); a reload says they are gone.
  router.get(
    '/admin/view/shown/:id',
    consolePage(services, (p) =>
      showOnce(p, services, {
        goneTitle: p.c('shownGoneTitle'),
        goneText: p.c('shownGoneText'),
        back: p.c('backToConsole'),
      }),
    ),
  );

  router.get(
    '/admin/sign-in',
    publicConsolePage(services, async (p) => {
      const next = consoleNext(p.ctx.query.next, base());
      const notice = p.ctx.query.signed_out ? p.c('signedOut') : undefined;
      send(
        p,
        200,
        p.c('signInTitle'),
        signInBody(p.c, { csrf: preSessionCsrf(p.ctx, services), next, email: '', notice }),
      );
    }),
  );

  router.post(
    '/admin/sign-in',
    publicConsolePage(services, async (p) => {
      const form = await readForm(p.ctx);
      if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined))
        throw problem('csrf_failed', 'The form token is missing or wrong.');
      const next = consoleNext(form.get('next'), base());
      const email = formText(form, 'email', 320);
      try {
        const parsed = EmailSchema.safeParse(email);
        if (!parsed.success) throw problem('unauthorized', 'Wrong credentials.');
        const session = await adminSignIn(services, {
          email: parsed.data,
          password: (form.get('password') ?? '').slice(0, 200),
          totp: form.get('totp') ?? '',
          ip: p.ctx.ip,
        });
        setConsoleCookie(p.ctx, services, session.token, ADMIN_SESSION_SECONDS);
        redirect(p.ctx, next);
      } catch (error) {
        if (!(error instanceof Problem) || (error.status !== 401 && error.status !== 429)) throw error;
        if (error.status === 429) p.ctx.set('Retry-After', error.headers['Retry-After']);
        const text =
          error.status === 429
            ? p.c('tooManyAttempts', { minutes: Math.ceil(Number(error.headers['Retry-After']) / 60) })
            : p.c('wrongCredentials');
        send(
          p,
          error.status,
          p.c('signInTitle'),
          signInBody(p.c, { csrf: preSessionCsrf(p.ctx, services), next, email, error: text }),
          '/admin/sign-in',
        );
      }
    }),
  );

  router.post(
    '/admin/sign-out',
    consolePage(
      services,
      async (p) => {
        await consoleForm(p);
        await endAdminSession(services, consoleToken(p.ctx)!);
        setConsoleCookie(p.ctx, services, '', 0);
        redirect(p.ctx, '/admin/sign-in?signed_out=1');
      },
      { may: ADMIN_ROLES },
    ),
  );

  router.get(
    '/admin/setup',
    publicConsolePage(services, async (p) => {
      const token = typeof p.ctx.query.token === 'string' ? p.ctx.query.token : '';
      const state = await setupState(services, token);
      if (!state)
        return send(
          p,
          400,
          p.c('setupInvalidTitle'),
          html`<h1>${p.c('setupInvalidTitle')}</h1><p>${p.c('setupInvalidText')}</p>`,
        );
      send(
        p,
        200,
        p.c('setupTitle'),
        await setupBody(p.c, { ...state, token, csrf: preSessionCsrf(p.ctx, services) }),
        '/admin/setup',
      );
    }),
  );

  router.post(
    '/admin/setup',
    publicConsolePage(services, async (p) => {
      const form = await readForm(p.ctx);
      if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined))
        throw problem('csrf_failed', 'The form token is missing or wrong.');
      const token = form.get('token') ?? '';
      // The page asks for a new password twice; two that differ change nothing and say so.
      const repeat = form.get('password_repeat');
      if (repeat !== null && repeat !== form.get('password')) {
        const state = await setupState(services, token);
        if (state?.needsPassword) {
          const body = await setupBody(p.c, {
            ...state,
            token,
            csrf: preSessionCsrf(p.ctx, services),
            error: p.c('passwordsDiffer'),
          });
          return send(p, 400, p.c('setupTitle'), body, '/admin/setup');
        }
      }
      const result = await completeSetup(services, {
        token,
        password: (form.get('password') ?? '').slice(0, 200),
        code: form.get('totp') ?? '',
        ip: p.ctx.ip,
      });
      if ('session' in result) {
        setConsoleCookie(p.ctx, services, result.session.token, ADMIN_SESSION_SECONDS);
        return redirect(p.ctx, '/admin');
      }
      const state = await setupState(services, token);
      if (!state)
        return send(
          p,
          400,
          p.c('setupInvalidTitle'),
          html`<h1>${p.c('setupInvalidTitle')}</h1><p>${p.c('setupInvalidText')}</p>`,
        );
      const words = {
        wrong_code: 'wrongCode',
        wrong_password: 'wrongPassword',
        password_required: 'passwordTooShort',
        invalid_link: 'setupInvalidText',
      } as const;
      let error: string;
      if ('retryAfter' in result) {
        p.ctx.set('Retry-After', String(result.retryAfter));
        error = p.c('tooManyAttempts', { minutes: Math.ceil(result.retryAfter / 60) });
      } else error = p.c(words[result.refusal]);
      const body = await setupBody(p.c, { ...state, token, csrf: preSessionCsrf(p.ctx, services), error });
      send(p, 'retryAfter' in result ? 429 : 400, p.c('setupTitle'), body, '/admin/setup');
    }),
  );

  router.get(
    '/admin',
    consolePage(services, async (p) => {
      const body = html`<h1>${p.c('homeTitle')}</h1>
<p>${p.c('homeIntro', { email: p.admin.email, role: p.c(`roleName_${p.admin.role}`) })}</p>
${attentionBody(p, await attention(services.db))}
${secondFactorSettingLink(p.lang)}
${peopleLink(p.lang)}`;
      send(p, 200, p.c('homeTitle'), body, undefined, p.admin);
    }),
  );

  router.get(
    '/admin/view/audit',
    consolePage(services, async (p) => {
      const day = (name: string) => {
        const value = queryText(p.ctx.query, name, 10);
        return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)) ? value : '';
      };
      const filter: AuditListFilter = {
        actor: queryText(p.ctx.query, 'actor', 320),
        action: queryText(p.ctx.query, 'action', 320),
        object_id: queryText(p.ctx.query, 'object_id', 320),
        from: day('from'),
        to: day('to'),
      };
      const place = pagePlace(p.ctx.query, (cursor) => /^[0-9]{1,18}$/.test(cursor));
      // The form picks days; the log takes moments: the whole of each day, in UTC as the times' tooltips say.
      const page = await listAudit(services.db, {
        actor: filter.actor || undefined,
        action: filter.action || undefined,
        object_id: filter.object_id || undefined,
        at_gte: filter.from ? `${filter.from}T00:00:00Z` : undefined,
        at_lt: filter.to ? new Date(Date.parse(`${filter.to}T00:00:00Z`) + 86_400_000).toISOString() : undefined,
        starting_after: place.after,
        limit: AUDIT_PAGE,
      });
      const pages = pager(p.lang, {
        path: '/admin/view/audit',
        filters: filter,
        place,
        last: page.has_more ? page.items.at(-1)!.id : undefined,
      });
      send(p, 200, p.c('auditTitle'), auditBody(p, filter, page, pages), undefined, p.admin);
    }),
  );

  router.get(
    '/admin/view/administrators',
    consolePage(services, async (p) => {
      const done = p.ctx.query.done;
      const notice =
        done === 'added'
          ? p.c('added')
          : done === 'saved'
            ? p.c('saved')
            : done === 'setup_sent'
              ? p.c('setupSent')
              : undefined;
      const filter: AdministratorFilter = {
        q: queryText(p.ctx.query, 'q', 254),
        role: ADMIN_ROLES.find((role) => role === p.ctx.query.role) ?? '',
        status: ADMINISTRATOR_STATUSES.find((status) => status === p.ctx.query.status) ?? '',
      };
      const place = pagePlace(p.ctx.query, isUuid);
      const page = await administratorPage(services.db, {
        q: filter.q || undefined,
        role: filter.role || undefined,
        status: filter.status || undefined,
        startingAfter: place.after,
        limit: ADMINISTRATORS_PAGE,
      });
      const pages = pager(p.lang, {
        path: '/admin/view/administrators',
        filters: filter,
        place,
        last: page.has_more ? page.items.at(-1)!.id : undefined,
      });
      send(
        p,
        200,
        p.c('administratorsTitle'),
        administratorsBody(p, { filter, items: page.items, pages }, notice),
        undefined,
        p.admin,
      );
    }),
  );

  router.post(
    '/admin/view/administrators',
    consoleAction(services, {
      page: (p) => p,
      path: () => '/admin/view/administrators',
      action: (p, _, form) => {
        const email = EmailSchema.safeParse(formText(form, 'email'));
        const role = form.get('role');
        if (!email.success || !isRole(role)) throw problem('validation_failed', 'An e-mail address and a role.');
        return {
          once: true,
          run: async () => {
            // The invitation is written in the console's language of the administrator who invites.
            const created = await createAdministrator(services, p.admin.actor, {
              email: email.data,
              role,
              locale: p.lang,
            });
            return {
              audit: {
                action: 'createAdministrator',
                object_type: 'administrator',
                object_id: created.id,
                after: created,
              },
              location: '/admin/view/administrators?done=added',
            };
          },
        };
      },
    }),
  );

  router.post(
    '/admin/view/administrators/:id',
    consoleActions(services, {
      page: (p) => p,
      load: async (p) => String(p.ctx.params.id),
      path: (id) => `/admin/view/administrators/${id}`,
      cancel: () => '/admin/view/administrators',
      unknown: 'A role, or disable or enable.',
      actions: (p, id, form) => {
        const update = (changes: { disabled: boolean } | { role: AdminRole }): ConsoleAction => ({
          run: async () => {
            const { before, after } = await updateAdministrator(services, id, changes);
            return {
              audit: { action: 'updateAdministrator', object_type: 'administrator', object_id: id, before, after },
              location: '/admin/view/administrators?done=saved',
            };
          },
        });
        return {
          'resend-setup': async () => {
            const administrator = await findAdministrator(services.db, id);
            if (!administrator || administrator.status !== 'invited')
              throw problem('not_found', 'No administrator waiting for setup.');
            return {
              run: async () => {
                await sendSetupLink(services, id);
                return {
                  audit: {
                    action: 'sendAdministratorSetupLink',
                    object_type: 'administrator',
                    object_id: id,
                    after: administrator,
                  },
                  location: '/admin/view/administrators?done=setup_sent',
                };
              },
            };
          },
          role: () => {
            const role = form.get('role');
            if (!isRole(role)) throw problem('validation_failed', 'A role, or disable or enable.');
            return update({ role });
          },
          enable: () => update({ disabled: false }),
          disable: () => ({
            ...update({ disabled: true }),
            confirm: async () => {
              const administrator = await findAdministrator(services.db, id);
              if (!administrator) throw problem('not_found', 'No such administrator.');
              return {
                title: p.c('disableConfirmTitle', { email: administrator.email }),
                text: p.c('disableConfirmText'),
                button: p.c('disableConfirmButton'),
                fields: { intent: 'disable' },
              };
            },
          }),
        };
      },
    }),
  );

  router.get(
    '/admin/view/mail',
    consolePage(services, async (p) => {
      const to = queryText(p.ctx.query, 'to', 320);
      const place = pagePlace(p.ctx.query, isUuid);
      const {
        items: mails,
        links,
        hasMore,
      } = await readOutbox(services, p.admin, { to: to || undefined, limit: MAIL_PAGE, startingAfter: place.after });
      const pages = pager(p.lang, {
        path: '/admin/view/mail',
        filters: { to },
        place,
        last: hasMore ? mails.at(-1)!.id : undefined,
      });
      const body = html`<h1>${p.c('mailTitle')}</h1><p class="muted">${p.c('mailIntro')}</p>
<p class="notice" id="mail-links">${p.c(links === 'whole' ? 'mailLinksWhole' : 'mailLinksMasked')}</p>
<form method="get" action="/admin/view/mail" class="inline"><label for="to">${p.c('to')}</label> <input id="to" name="to" type="email" value="${to}"> <button type="submit">${p.c('filter')}</button></form>
${
  mails.length === 0
    ? emptyList(p.lang, { filtered: !!to, none: p.c('noMail'), path: '/admin/view/mail' })
    : html`<ul class="plain">${mails.map(
        (mail) =>
          html`<li><details><summary>${when(p.lang, mail.created_at)} · ${mail.to} · ${mail.subject}</summary><pre class="text">${mail.text}</pre></details></li>`,
      )}</ul>`
}
${pages}`;
      send(p, 200, p.c('mailTitle'), body, undefined, p.admin);
    }),
  );
}

/** The home page: what needs attention now, each with a link to where it is dealt with. */
function attentionBody(p: ConsolePage, a: Attention): SafeHtml {
  const c = p.c;
  const item = (
    id: string,
    bad: boolean,
    count: number,
    title: string,
    text: SafeHtml | string,
    href: string,
    link: string,
  ) =>
    html`<li id="${id}" class="${bad ? 'bad' : 'ok'}"><span class="count">${count}</span><strong>${title}</strong>
<p>${text}</p><p><a href="${href}">${link}</a></p></li>`;
  const oldest = a.disputes.oldestOpenedAt;
  const run = a.reconciliation;
  return html`<h2 id="attention">${c('attentionTitle')}</h2>
<ul class="attention">
${item(
  'attention-disputes',
  a.disputes.open > 0,
  a.disputes.open,
  c('attentionDisputes'),
  oldest
    ? html`${c('attentionOldestDispute', { age: ageWords(p.lang, Date.now() - oldest.getTime()) })} (${when(p.lang, oldest)})`
    : c('attentionNoDisputes'),
  '/admin/view/disputes',
  c('attentionDisputesLink'),
)}
${item(
  'attention-webhooks',
  a.webhooks.failing > 0,
  a.webhooks.failing,
  c('attentionWebhooks'),
  a.webhooks.marketplaces.length === 0
    ? c('attentionNoWebhooks')
    : html`${a.webhooks.marketplaces.map(
        (m, index) =>
          html`${index > 0 ? ', ' : ''}<a href="/admin/view/marketplaces/${m.id}#log">${m.name}</a> (${m.failing})`,
      )}`,
  '/admin/view/marketplaces',
  c('attentionWebhooksLink'),
)}
${item(
  'attention-reconciliation',
  !!run && run.mismatches + run.errors > 0,
  run ? run.mismatches : 0,
  c('attentionReconciliation'),
  run
    ? html`${c('attentionReconciliationRun', { errors: run.errors })} ${when(p.lang, run.runAt)} ${
        run.mismatches + run.errors > 0 ? badge('bad', c('attentionCheck')) : badge('ok', c('attentionAllMatch'))
      }`
    : c('attentionNoRun'),
  '/admin/view/reconciliation',
  c('attentionReconciliationLink'),
)}
</ul>`;
}

function signInBody(
  c: ConsoleTranslate,
  form: { csrf: string; next: string; email: string; error?: string; notice?: string },
): SafeHtml {
  return html`<h1>${c('signInTitle')}</h1>
${message('notice', form.notice)}${message('error', form.error)}
<form method="post" action="/admin/sign-in">
${csrfField(form.csrf)}<input type="hidden" name="next" value="${form.next}">
<label for="email">${c('email')}</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${form.email}">
<label for="password">${c('password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200">
<label for="totp">${c('totp')}</label>
<input id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9 ]{6,7}" maxlength="7" aria-describedby="totp-hint">
<p class="hint" id="totp-hint">${c('totpHint')}</p>
<div><button type="submit">${c('signInButton')}</button></div>
</form>`;
}

/** A TOTP key in groups of four, as authenticator apps show and accept it. */
export function groupedKey(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

async function setupBody(
  c: ConsoleTranslate,
  state: {
    email: string;
    needsPassword: boolean;
    secret: string;
    uri: string;
    token: string;
    csrf: string;
    error?: string;
  },
): Promise<SafeHtml> {
  // The QR code is an inline SVG made here: nothing is loaded from elsewhere, and the key never leaves the page.
  const qr = await QRCode.toString(state.uri, { type: 'svg', margin: 1, width: 200 });
  return html`<h1>${c('setupTitle')}</h1>
${message('error', state.error)}
<p>${c('setupIntro', { email: state.email })}</p>
<figure class="qr" aria-label="${state.uri}">${new SafeHtml(qr)}</figure>
<p><a class="button secondary" id="otpauth-link" href="${state.uri}">${c('setupOpenApp')}</a></p>
<p class="hint">${c('setupOpenAppHint')}</p>
<p>${c('setupKey')}:</p><p><code id="totp-secret" class="secret-value">${groupedKey(state.secret)}</code></p>
<form method="post" action="/admin/setup">
${csrfField(state.csrf)}<input type="hidden" name="token" value="${state.token}">
<label for="password">${state.needsPassword ? c('setupNewPassword') : c('setupCurrentPassword')}</label>
<input id="password" name="password" type="password" autocomplete="${state.needsPassword ? 'new-password' : 'current-password'}" required ${state.needsPassword ? html`minlength="8"` : ''} maxlength="200">
${
  state.needsPassword &&
  html`<p class="hint">${c('setupPasswordHint')}</p>
<label for="password_repeat">${c('setupRepeatPassword')}</label>
<input id="password_repeat" name="password_repeat" type="password" autocomplete="new-password" required minlength="8" maxlength="200">`
}
<label for="totp">${c('totp')}</label>
<input id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9 ]{6,7}" maxlength="7">
<div><button type="submit">${c('setupButton')}</button></div>
</form>`;
}

/** The audit log's filters as the form has them ('' for any); the days are the whole of each day in UTC. */
interface AuditListFilter {
  actor: string;
  action: string;
  object_id: string;
  from: string;
  to: string;
}

function auditBody(
  p: ConsolePage,
  filter: AuditListFilter,
  page: { items: AuditRecord[]; has_more: boolean },
  pages: SafeHtml,
): SafeHtml {
  const c = p.c;
  const field = (name: keyof AuditListFilter, label: string, type = 'text') =>
    html`<div><label for="${name}">${label}</label><input id="${name}" name="${name}" type="${type}" value="${filter[name]}" maxlength="320"></div>`;
  return html`<h1>${c('auditTitle')}</h1><p class="muted">${c('auditIntro')}</p>
<form method="get" action="/admin/view/audit" class="filters">${field('actor', c('actor'))}${field('action', c('action'))}${field('object_id', c('object'))}${field('from', c('fromDay'), 'date')}${field('to', c('toDay'), 'date')}<div><button type="submit">${c('filter')}</button></div></form>
${
  page.items.length === 0
    ? emptyList(p.lang, {
        filtered: Object.values(filter).some(Boolean),
        none: c('noRecords'),
        path: '/admin/view/audit',
      })
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${c('at')}</th><th>${c('actor')}</th><th>${c('action')}</th><th>${c('object')}</th><th>${c('changes')}</th></tr></thead>
<tbody>${page.items.map(
        (record) => html`<tr><td>${when(p.lang, record.at)}</td><td>${record.actor}</td><td>${record.action}</td>
<td>${record.object_type}${record.object_id && html` <code>${record.object_id}</code>`}</td>
<td><details><summary>${c('changes')}</summary><pre class="text">${JSON.stringify({ before: record.before, after: record.after }, null, 2)}</pre></details></td></tr>`,
      )}</tbody></table></div>`
}
${pages}`;
}

const ADMINISTRATOR_STATUSES = ['invited', 'active', 'disabled'] as const;
const ADMINISTRATOR_TONES = { invited: 'info', active: 'ok', disabled: 'muted' } as const satisfies Record<
  Administrator['status'],
  BadgeTone
>;
const ADMINISTRATORS_PAGE = 25;

/** The administrators list's filters as the form has them ('' for any). */
interface AdministratorFilter {
  q: string;
  role: AdminRole | '';
  status: Administrator['status'] | '';
}

function administratorsBody(
  p: ConsolePage,
  list: { filter: AdministratorFilter; items: Administrator[]; pages: SafeHtml },
  notice?: string,
): SafeHtml {
  const c = p.c;
  const { filter } = list;
  const roleSelect = (id: string, current: AdminRole) =>
    html`<select id="${id}" name="role">${ADMIN_ROLES.map((role) => html`<option value="${role}"${role === current ? html` selected` : ''}>${c(`role_${role}`)}</option>`)}</select>`;
  const option = (value: string, label: string, current: string) =>
    html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
  return html`<h1>${c('administratorsTitle')}</h1>
${message('notice', notice)}
<form method="get" action="/admin/view/administrators" class="filters">
<div><label for="q">${c('emailPart')}</label><input id="q" name="q" type="search" value="${filter.q}" maxlength="254"></div>
<div><label for="f-role">${c('role')}</label><select id="f-role" name="role">${option('', c('anyRole'), filter.role)}${ADMIN_ROLES.map((role) => option(role, c(`role_${role}`), filter.role))}</select></div>
<div><label for="f-status">${c('adminStatus')}</label><select id="f-status" name="status">${option('', c('anyAdminStatus'), filter.status)}${ADMINISTRATOR_STATUSES.map((status) => option(status, c(`status_${status}`), filter.status))}</select></div>
<div><button type="submit">${c('filter')}</button></div></form>
${list.items.length === 0 && emptyList(p.lang, { filtered: Object.values(filter).some(Boolean), none: c('noAdministrators'), path: '/admin/view/administrators' })}
<ul class="plain cards">${list.items.map(
    (
      a,
    ) => html`<li class="card"><p><strong>${a.email}</strong>${a.name && html` (${a.name})`} · ${badge(ADMINISTRATOR_TONES[a.status], c(`status_${a.status}`))}</p>
<p class="muted">${c('createdBy')}: ${a.created_by}</p>
<form method="post" action="/admin/view/administrators/${a.id}">${csrfField(p.admin.csrf)}<input type="hidden" name="intent" value="role">
<label for="role-${a.id}">${c('role')}</label>${roleSelect(`role-${a.id}`, a.role)} <button type="submit">${c('save')}</button></form>
<div class="actions">
${a.status === 'invited' && html`<form method="post" action="/admin/view/administrators/${a.id}" class="inline">${csrfField(p.admin.csrf)}<input type="hidden" name="intent" value="resend-setup"><button type="submit" class="secondary">${c('resendSetup')}</button></form>`}
${
  a.status === 'disabled'
    ? html`<form method="post" action="/admin/view/administrators/${a.id}" class="inline">${csrfField(p.admin.csrf)}<input type="hidden" name="intent" value="enable"><button type="submit" class="secondary">${c('enable')}</button></form>`
    : html`<form method="post" action="/admin/view/administrators/${a.id}" class="inline">${csrfField(p.admin.csrf)}<input type="hidden" name="intent" value="disable"><button type="submit" class="danger">${c('disable')}</button></form>`
}
</div></li>`,
  )}</ul>
${list.pages}
<section aria-labelledby="add"><h2 id="add">${c('addAdministrator')}</h2>
<form method="post" action="/admin/view/administrators">${csrfField(p.admin.csrf)}${onceField()}
<label for="new-email">${c('email')}</label><input id="new-email" name="email" type="email" required maxlength="254">
<label for="new-role">${c('role')}</label>${roleSelect('new-role', 'support')}
<div><button type="submit">${c('addButton')}</button></div></form></section>`;
}
