// The SSO pages' own words, English and Russian (typed against each other like the cabinet's); the shared ones
// (the sign-in title, e-mail, password, the wrong-password limit, the layout) come from the cabinet's dictionary.
import { isLang, preferredLang, type Lang } from '../web/i18n.ts';

const en = {
  continueTo: 'to continue to {client}',
  returnTo: 'After signing in you return to {host}.',
  errorTitle: 'This sign-in link does not work',
  unknown_client: 'The site that sent you here is not registered with us, so you cannot sign in to it this way.',
  redirect_uri_not_allowed:
    'The site asked us to send you to an address it has not registered. For your safety we stopped here. Tell the site about it.',
  state_required: 'The sign-in request is incomplete. Go back to the site and start signing in again.',
  unauthorized: 'Your sign-in has expired. Go back to the site and start signing in again.',
  csrf_failed: 'For your safety the form was not accepted. Go back to the site and start signing in again.',
  generic: 'The sign-in request could not be read. Go back to the site and start signing in again.',
  internal: 'Something went wrong on our side. Try again later.',
};

export type SsoMessage = keyof typeof en;

const ru: Record<SsoMessage, string> = {
  continueTo: 'чтобы продолжить на {client}',
  returnTo: 'После входа вы вернётесь на {host}.',
  errorTitle: 'Эта ссылка для входа не работает',
  unknown_client: 'Сайт, который направил вас сюда, у нас не зарегистрирован, поэтому войти на него так нельзя.',
  redirect_uri_not_allowed:
    'Сайт попросил отправить вас на адрес, который он не регистрировал. Ради вашей безопасности мы остановились здесь. Сообщите об этом сайту.',
  state_required: 'Запрос на вход неполный. Вернитесь на сайт и начните вход заново.',
  unauthorized: 'Срок действия входа истёк. Вернитесь на сайт и начните вход заново.',
  csrf_failed: 'Ради вашей безопасности форма не принята. Вернитесь на сайт и начните вход заново.',
  generic: 'Не удалось прочитать запрос на вход. Вернитесь на сайт и начните вход заново.',
  internal: 'На нашей стороне что-то пошло не так. Попробуйте позже.',
};

const MESSAGES: Record<Lang, Record<SsoMessage, string>> = { en, ru };

export type SsoTranslate = (key: SsoMessage, values?: Record<string, string | number>) => string;

export function ssoTranslator(lang: Lang): SsoTranslate {
  return (key, values = {}) => MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole));
}

export function isSsoMessage(value: string): value is SsoMessage {
  return Object.hasOwn(en, value);
}

/** `lang`, then OpenID Connect's `ui_locales` (first of en/ru), then Accept-Language. */
export function ssoLang(lang: string | undefined, uiLocales: string | undefined, acceptLanguage: string): Lang {
  if (isLang(lang)) return lang;
  const asked = (uiLocales ?? '').split(' ').map((tag) => tag.split('-')[0]!.toLowerCase()).find(isLang);
  return asked ?? preferredLang(acceptLanguage);
}
