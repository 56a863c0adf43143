// The operators' console page of the one operator-wide setting of second factors: whether every marketplace's money
// moves in the cabinet need a second factor (src/mfa/escrow-policy.ts). Every role reads it; the admin role changes
// it, after a confirmation, audited as `setSecondFactorRequirement`.
import type { Api } from '../http/api.ts';
import { html, type SafeHtml } from '../http/html.ts';
import type { Lang } from '../web/i18n.ts';
import type { Services } from '../services.ts';
import { csrfField, message } from '../web/layout.ts';
import { send } from '../web/page.ts';
import { consolePage, type ConsolePage } from '../admin/console.ts';
import { dictionary } from '../admin/console-kit.ts';
import { consoleAction } from '../admin/console-actions.ts';
import { setOperatorRequirement } from './escrow-policy.ts';

export const SECOND_FACTOR_SETTING_PATH = '/admin/view/settings/second-factor';

const en = {
  title: 'Second factor before money moves',
  intro:
    'When it is required, a buyer’s or seller’s Pay, Release or Refund in the cabinet needs a sign-in with a second factor (an authenticator app or a passkey), or asks for one first. A marketplace can also require it for its own deals through its API (PUT /api/mkt/settings/second-factor).',
  requiredNow: 'Now: required for every marketplace.',
  notRequiredNow: 'Now: not required by the operator; each marketplace decides for its own deals.',
  require: 'Require for every marketplace…',
  stopRequiring: 'Stop requiring for every marketplace…',
  confirmRequireTitle: 'Require a second factor before money moves?',
  confirmRequireText:
    'From the next move on, every buyer and seller without a second factor in their session is asked for one before paying, releasing or refunding; people without one must set one up first.',
  confirmStopTitle: 'Stop requiring a second factor?',
  confirmStopText:
    'Money moves in the cabinet again need only a sign-in, except in marketplaces that require it themselves.',
  confirmButton: 'Yes, change it',
  done_required: 'A second factor is now required before money moves, for every marketplace.',
  done_not_required: 'The operator no longer requires a second factor before money moves.',
  homeLink: 'Settings: a second factor before money moves',
};
const ru: Record<keyof typeof en, string> = {
  title: 'Второй фактор перед движением денег',
  intro:
    'Если он обязателен, оплата, перевод продавцу или возврат в кабинете покупателя или продавца требуют входа со вторым фактором (приложение-аутентификатор или ключ доступа) либо сначала просят его. Магазин может потребовать того же для своих сделок через API (PUT /api/mkt/settings/second-factor).',
  requiredNow: 'Сейчас: обязателен для всех магазинов.',
  notRequiredNow: 'Сейчас: оператор его не требует; каждый магазин решает для своих сделок.',
  require: 'Требовать для всех магазинов…',
  stopRequiring: 'Не требовать для всех магазинов…',
  confirmRequireTitle: 'Требовать второй фактор перед движением денег?',
  confirmRequireText:
    'Начиная со следующего действия, каждого покупателя и продавца без второго фактора в сеансе попросят его перед оплатой, переводом или возвратом; у кого его нет, сначала должны его подключить.',
  confirmStopTitle: 'Не требовать второй фактор?',
  confirmStopText: 'Для движения денег в кабинете снова достаточно входа, кроме магазинов, которые требуют его сами.',
  confirmButton: 'Да, изменить',
  done_required: 'Теперь второй фактор обязателен перед движением денег во всех магазинах.',
  done_not_required: 'Оператор больше не требует второй фактор перед движением денег.',
  homeLink: 'Настройки: второй фактор перед движением денег',
};
const words = dictionary(en, ru);

/** The console home's link to this page: the operator's one setting of second factors. */
export function secondFactorSettingLink(lang: Lang): SafeHtml {
  return html`<p><a href="${SECOND_FACTOR_SETTING_PATH}">${words(lang)('homeLink')}</a></p>`;
}

type SettingPage = ConsolePage & { w: ReturnType<typeof words> };
const withWords = (p: ConsolePage): SettingPage => ({ ...p, w: words(p.lang) });

async function operatorRequires(services: Services): Promise<boolean> {
  const result = await services.db.query<{ required: boolean }>(
    'SELECT require_second_factor AS required FROM operator_settings',
  );
  return result.rows[0]?.required ?? false;
}

export function secondFactorConsolePage(api: Api, services: Services): void {
  const router = api.router;

  router.get(
    SECOND_FACTOR_SETTING_PATH,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const required = await operatorRequires(services);
      const done = p.ctx.query.done;
      const notice =
        done === 'required' ? p.w('done_required') : done === 'not_required' ? p.w('done_not_required') : undefined;
      const body = html`<h1>${p.w('title')}</h1>
${message('notice', notice)}
<p>${p.w('intro')}</p>
<p id="second-factor-setting"><strong>${required ? p.w('requiredNow') : p.w('notRequiredNow')}</strong></p>
${
  p.admin.role === 'admin'
    ? html`<form method="post" action="${SECOND_FACTOR_SETTING_PATH}">
${csrfField(p.admin.csrf)}<input type="hidden" name="required" value="${required ? 'no' : 'yes'}">
<button type="submit" class="${required ? 'secondary' : ''}">${required ? p.w('stopRequiring') : p.w('require')}</button>
</form>`
    : undefined
}`;
      send(p, 200, p.w('title'), body, SECOND_FACTOR_SETTING_PATH, p.admin);
    }),
  );

  router.post(
    SECOND_FACTOR_SETTING_PATH,
    consoleAction(services, {
      may: ['admin'],
      page: withWords,
      path: () => SECOND_FACTOR_SETTING_PATH,
      action: (p, _subject, form) => {
        const required = form.get('required') === 'yes';
        return {
          confirm: () => ({
            title: required ? p.w('confirmRequireTitle') : p.w('confirmStopTitle'),
            text: required ? p.w('confirmRequireText') : p.w('confirmStopText'),
            button: p.w('confirmButton'),
            fields: { required: required ? 'yes' : 'no' },
            tone: required ? 'plain' : 'danger',
          }),
          run: async () => {
            const { before } = await setOperatorRequirement(services.db, required);
            return {
              audit: {
                action: 'setSecondFactorRequirement',
                object_type: 'operator_settings',
                object_id: null,
                before: { require_second_factor: before },
                after: { require_second_factor: required },
              },
              location: `${SECOND_FACTOR_SETTING_PATH}?done=${required ? 'required' : 'not_required'}`,
            };
          },
        };
      },
    }),
  );
}
