// A person's page in the operators' console: found by e-mail address from the console home, it shows the person's
// second factors, and lets the admin role reset them for someone who lost every factor and every recovery code
// (after support checked who is asking: the console cannot). The reset asks for a confirmation naming the person,
// removes the app, the passkeys and the recovery codes, signs the person out everywhere, mails them in their language,
// and is audited as `resetSecondFactors`. Every role reads the page.
import { randomUUID } from 'node:crypto';
import type { Api } from '../http/api.ts';
import { html, type SafeHtml } from '../http/html.ts';
import type { Lang } from '../web/i18n.ts';
import type { Services } from '../services.ts';
import { csrfField, message } from '../web/layout.ts';
import { redirect, send } from '../web/page.ts';
import { consolePage, notInConsole, type ConsolePage } from '../admin/console.ts';
import { dictionary, queryText, when } from '../admin/console-kit.ts';
import { consoleAction } from '../admin/console-actions.ts';
import { findUserByEmail, findUserById, type User } from '../accounts/users.ts';
import { links } from '../accounts/self-service.ts';
import { secondFactorsResetMail } from '../mail/templates.ts';
import { isUuid } from '../uuid.ts';
import { factorsOf, resetSecondFactors } from './factors.ts';

export const PEOPLE_PATH = '/admin/view/people';
const personPath = (id: string) => `${PEOPLE_PATH}/${id}`;

const en = {
  title: 'People',
  intro: 'Find a person by the e-mail address they sign in with.',
  email: 'E-mail address',
  find: 'Find',
  noPerson: 'No person signs in with {email}.',
  signedUp: 'Signed up',
  language: 'Language of mail',
  factors: 'Second factors',
  app: 'Authenticator app',
  on: 'on',
  off: 'off',
  passkeys: 'Passkeys',
  recoveryCodes: 'Recovery codes left',
  reset: 'Reset second factors…',
  resetHint:
    'Only for a person who lost every factor and every recovery code, once support is sure it is them: the person then signs in with the password alone.',
  confirmTitle: 'Reset the second factors of {name} ({email})?',
  confirmText:
    'The authenticator app, the passkeys ({passkeys}) and the recovery codes ({codes}) are removed for good, and {name} is signed out everywhere (the cabinet and every site). A mail tells them.',
  confirmButton: 'Yes, reset',
  done_reset: 'The second factors were removed and the person was signed out everywhere; a mail told them.',
  homeLink: 'People: find a person, reset their second factors',
};
const ru: Record<keyof typeof en, string> = {
  title: 'Люди',
  intro: 'Найдите человека по адресу электронной почты, с которым он входит.',
  email: 'Адрес электронной почты',
  find: 'Найти',
  noPerson: 'С адресом {email} никто не входит.',
  signedUp: 'Зарегистрирован',
  language: 'Язык писем',
  factors: 'Вторые факторы',
  app: 'Приложение-аутентификатор',
  on: 'подключено',
  off: 'не подключено',
  passkeys: 'Ключи доступа',
  recoveryCodes: 'Осталось кодов восстановления',
  reset: 'Сбросить вторые факторы…',
  resetHint:
    'Только для человека, который потерял все факторы и все коды восстановления, когда поддержка убедилась, что это он: после этого он входит только с паролем.',
  confirmTitle: 'Сбросить вторые факторы: {name} ({email})?',
  confirmText:
    'Приложение-аутентификатор, ключи доступа ({passkeys}) и коды восстановления ({codes}) будут удалены навсегда, а {name} выйдет на всех устройствах (в кабинете и на всех сайтах). Об этом придёт письмо.',
  confirmButton: 'Да, сбросить',
  done_reset: 'Вторые факторы удалены, человек вышел на всех устройствах; ему отправлено письмо.',
  homeLink: 'Люди: найти человека, сбросить вторые факторы',
};
const words = dictionary(en, ru);

/** The console home's link to the people page. */
export function peopleLink(lang: Lang): SafeHtml {
  return html`<p><a href="${PEOPLE_PATH}">${words(lang)('homeLink')}</a></p>`;
}

type PersonPage = ConsolePage & { w: ReturnType<typeof words> };
const withWords = (p: ConsolePage): PersonPage => ({ ...p, w: words(p.lang) });

async function loadPerson(services: Services, id: string): Promise<User> {
  const person = isUuid(id) ? await findUserById(services.db, id) : undefined;
  if (!person) throw notInConsole('person');
  return person;
}

export function personConsolePages(api: Api, services: Services): void {
  const router = api.router;

  router.get(
    PEOPLE_PATH,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const email = queryText(p.ctx.query, 'email', 254);
      const found = email ? await findUserByEmail(services.db, email) : undefined;
      if (found) return redirect(p.ctx, personPath(found.id));
      const body = html`<h1>${p.w('title')}</h1>
${message('error', email ? p.w('noPerson', { email }) : undefined)}
<p>${p.w('intro')}</p>
<form method="get" action="${PEOPLE_PATH}" class="inline"><label for="email">${p.w('email')}</label> <input id="email" name="email" type="email" maxlength="254" value="${email}" required> <button type="submit">${p.w('find')}</button></form>`;
      send(p, email ? 404 : 200, p.w('title'), body, PEOPLE_PATH, p.admin);
    }),
  );

  router.get(
    `${PEOPLE_PATH}/:id`,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const person = await loadPerson(services, String(p.ctx.params.id));
      const factors = await factorsOf(services.db, person.id);
      const notice = p.ctx.query.done === 'reset' ? p.w('done_reset') : undefined;
      const body = html`<h1>${person.name || person.email}</h1>
${message('notice', notice)}
<dl>
<dt>${p.w('email')}</dt><dd>${person.email}</dd>
<dt>${p.w('signedUp')}</dt><dd>${when(p.lang, person.created_at)}</dd>
<dt>${p.w('language')}</dt><dd>${person.locale}</dd>
</dl>
<h2>${p.w('factors')}</h2>
<dl id="second-factors">
<dt>${p.w('app')}</dt><dd>${factors.totp ? p.w('on') : p.w('off')}</dd>
<dt>${p.w('passkeys')}</dt><dd>${factors.passkeys}</dd>
<dt>${p.w('recoveryCodes')}</dt><dd>${factors.recovery_codes_left}</dd>
</dl>
${
  p.admin.role === 'admin'
    ? html`<p>${p.w('resetHint')}</p>
<form method="post" action="${personPath(person.id)}">${csrfField(p.admin.csrf)}<button type="submit" class="danger">${p.w('reset')}</button></form>`
    : undefined
}`;
      send(p, 200, person.name || person.email, body, personPath(person.id), p.admin);
    }),
  );

  router.post(
    `${PEOPLE_PATH}/:id`,
    consoleAction(services, {
      may: ['admin'],
      page: withWords,
      load: (p) => loadPerson(services, String(p.ctx.params.id)),
      path: (person) => personPath(person.id),
      action: (p, person) => ({
        confirm: async () => {
          const factors = await factorsOf(services.db, person.id);
          return {
            title: p.w('confirmTitle', { name: person.name || person.email, email: person.email }),
            text: p.w('confirmText', {
              name: person.name || person.email,
              passkeys: factors.passkeys,
              codes: factors.recovery_codes_left,
            }),
            button: p.w('confirmButton'),
            fields: {},
          };
        },
        run: async () => {
          const before = await resetSecondFactors(services.db, person.id);
          const mail = secondFactorsResetMail(person.locale, person.name, {
            ...links(services),
            security: `${services.config.BASE_URL}/cabinet/view/security`,
          });
          await services.mailer.send({ key: `second-factors-reset/${randomUUID()}`, to: person.email, ...mail });
          return {
            // Field names the log keeps (audit.ts redacts any named like totp).
            audit: {
              action: 'resetSecondFactors',
              object_type: 'user',
              object_id: person.id,
              before: {
                authenticator_app: before.totp,
                passkeys: before.passkeys,
                recovery_codes_left: before.recovery_codes_left,
              },
              after: { authenticator_app: false, passkeys: 0, recovery_codes_left: 0, ended_sessions: before.sessions },
            },
            location: `${personPath(person.id)}?done=reset`,
          };
        },
      }),
    }),
  );
}
