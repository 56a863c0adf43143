// The SSO pages' own words (the login form, consent, errors, the connected sites), English and Russian, typed against
// each other like the cabinet's; the shared ones (the service's name, e-mail, password, the wrong-password limit, the
// layout) come from the cabinet's dictionary.
import { isLang, preferredLang, type Lang } from '../web/i18n.ts';

const en = {
  signInTo: 'Sign in to {service} to continue to {client}',
  returnTo: 'After signing in you return to {host}.',
  createAccount: 'Create an account',
  forgotPassword: 'Forgot your password?',
  // Consent, the first time a site asks
  consentTitle: 'Let {client} sign you in with {service}?',
  signedInAs: 'You are signed in to {service} as {email}.',
  otherAccount: 'Use another account',
  consentReceives: '{client} ({host}) will receive:',
  receivesSvcId: 'your svc ID, the permanent identifier of your account',
  receivesEmail: 'your e-mail address: {email}',
  receivesName: 'your name: {name}',
  receivesNoName: 'your name (you have not given one yet)',
  receivesOrg:
    'your organization: the name you take part in deals under as a private person ({org}), and its identifier',
  receivesOfflineAccess: 'to stay signed in (offline access): it keeps getting these until you disconnect it',
  allow: 'Allow',
  cancel: 'Cancel',
  consentHint:
    'Either way you return to {host}. You can disconnect the site at any time under Connected sites in your cabinet.',
  // An agent (a client naming the data server as its resource, RFC 8707)
  consentTools: '{client} will also use the tender data tools in your name, each call counted against your data quota:',
  consentSelfRegistered:
    'This application registered itself: {service} has not checked that its name is true. Allow it only if you started this sign-in.',
  // Connected sites
  sitesIntro:
    'Sites you signed in to with {service}. Each receives what you allowed it: your svc ID, and your name, e-mail address or organization if it asked for them.',
  noSites:
    'You have not signed in to any site with {service} yet. A site appears here once you sign in to it with {service} and allow it what it asks for.',
  connectedOn: 'Connected on {date}',
  lastSignIn: 'last sign-in on {date}',
  disconnect: 'Disconnect',
  disconnectTitle: 'Disconnect {site}?',
  disconnectText:
    '{site} stops getting your data at once: what it received at sign-in stops working. If you sign in there again, you are asked to allow it again.',
  disconnectButton: 'Yes, disconnect',
  disconnectBack: 'No, back to connected sites',
  disconnected: '{site} is disconnected.',
  notConnected: 'This site is not connected to your account: it may have been disconnected already.',
  errorTitle: 'This sign-in link does not work',
  unknown_client: 'The site that sent you here is not registered with us, so you cannot sign in to it this way.',
  redirect_uri_not_allowed:
    'The site asked us to send you to an address it has not registered. For your safety we stopped here. Tell the site about it.',
  state_required: 'The sign-in request is incomplete. Go back to the site and start signing in again.',
  unauthorized: 'Your sign-in has expired. Go back to the site and start signing in again.',
  csrf_failed: 'For your safety the form was not accepted. Go back to the site and start signing in again.',
  generic: 'The sign-in request could not be read. Go back to the site and start signing in again.',
  internal: 'Something went wrong on our side. Try again later.',
  // RP-initiated logout (/sso/oidc/logout)
  logoutTitle: 'You are signed out',
  logoutText: 'You are signed out of {service} in this browser.',
  logoutErrorTitle: 'This sign-out link does not work',
  logout_redirect_not_allowed:
    'The site asked to send you to an address it has not registered for sign-out. For your safety we stopped here, and nothing was changed. Tell the site about it.',
  logout_hint_invalid: 'We could not check which site sent you here. Go back to the site and sign out there again.',
  logout_client_unknown: 'The site that sent you here is not registered with us.',
  logoutConfirmTitle: 'Sign out of {service}?',
  logoutConfirmText: 'You are signed in as {email}. Signing out here also signs you out of {client}.',
  logoutConfirmButton: 'Sign out',
};

export type SsoMessage = keyof typeof en;

const ru: Record<SsoMessage, string> = {
  signInTo: 'Войдите в {service}, чтобы продолжить на {client}',
  returnTo: 'После входа вы вернётесь на {host}.',
  createAccount: 'Создать учётную запись',
  forgotPassword: 'Забыли пароль?',
  // A site's name is quoted, so any name reads as one: «Разрешить сайту «Форум велосипедистов» вход через svc ID?»
  consentTitle: 'Разрешить сайту «{client}» вход через {service}?',
  signedInAs: 'Вы вошли в {service} как {email}.',
  otherAccount: 'Войти с другой учётной записью',
  consentReceives: '{client} ({host}) получит:',
  receivesSvcId: 'ваш svc ID — постоянный идентификатор вашей учётной записи',
  receivesEmail: 'адрес электронной почты: {email}',
  receivesName: 'ваше имя: {name}',
  receivesNoName: 'ваше имя (вы его пока не указали)',
  receivesOrg:
    'вашу организацию: имя, под которым вы участвуете в сделках как частное лицо ({org}), и его идентификатор',
  receivesOfflineAccess: 'право оставаться в системе (офлайн-доступ): получать это, пока вы не отключите сайт',
  allow: 'Разрешить',
  cancel: 'Отмена',
  consentHint:
    'В любом случае вы вернётесь на {host}. Отключить сайт можно в любой момент в разделе «Подключённые сайты» вашего кабинета.',
  consentTools:
    '{client} также будет пользоваться инструментами данных о закупках от вашего имени; каждый вызов учитывается в вашей квоте данных:',
  consentSelfRegistered:
    'Это приложение зарегистрировалось само: {service} не проверял, что его название настоящее. Разрешайте, только если вход начали вы.',
  sitesIntro:
    'Сайты, на которые вы входили через {service}. Каждый получает то, что вы ему разрешили: ваш svc ID, а также имя, адрес электронной почты или организацию, если он их просил.',
  noSites:
    'Вы ещё не входили ни на один сайт через {service}. Сайт появится здесь, когда вы войдёте на него через {service} и разрешите ему то, что он просит.',
  connectedOn: 'Подключён {date}',
  lastSignIn: 'последний вход {date}',
  disconnect: 'Отключить',
  disconnectTitle: 'Отключить {site}?',
  disconnectText:
    '{site} сразу перестанет получать ваши данные: то, что он получил при входе, перестанет действовать. Если вы снова войдёте туда, разрешение спросят ещё раз.',
  disconnectButton: 'Да, отключить',
  disconnectBack: 'Нет, вернуться к подключённым сайтам',
  disconnected: '{site} отключён.',
  notConnected: 'Этот сайт не подключён к вашей учётной записи: возможно, его уже отключили.',
  errorTitle: 'Эта ссылка для входа не работает',
  unknown_client: 'Сайт, который направил вас сюда, у нас не зарегистрирован, поэтому войти на него так нельзя.',
  redirect_uri_not_allowed:
    'Сайт попросил отправить вас на адрес, который он не регистрировал. Ради вашей безопасности мы остановились здесь. Сообщите об этом сайту.',
  state_required: 'Запрос на вход неполный. Вернитесь на сайт и начните вход заново.',
  unauthorized: 'Срок действия входа истёк. Вернитесь на сайт и начните вход заново.',
  csrf_failed: 'Ради вашей безопасности форма не принята. Вернитесь на сайт и начните вход заново.',
  generic: 'Не удалось прочитать запрос на вход. Вернитесь на сайт и начните вход заново.',
  internal: 'На нашей стороне что-то пошло не так. Попробуйте позже.',
  // RP-initiated logout (/sso/oidc/logout)
  logoutTitle: 'Вы вышли',
  logoutText: 'Вы вышли из {service} в этом браузере.',
  logoutErrorTitle: 'Эта ссылка для выхода не работает',
  logout_redirect_not_allowed:
    'Сайт попросил отправить вас на адрес, который он не регистрировал для выхода. Ради вашей безопасности мы остановились здесь и ничего не изменили. Сообщите об этом сайту.',
  logout_hint_invalid: 'Не удалось проверить, какой сайт направил вас сюда. Вернитесь на сайт и выйдите там ещё раз.',
  logout_client_unknown: 'Сайт, который направил вас сюда, у нас не зарегистрирован.',
  logoutConfirmTitle: 'Выйти из {service}?',
  logoutConfirmText: 'Вы вошли как {email}. Выход здесь означает и выход из {client}.',
  logoutConfirmButton: 'Выйти',
};

const MESSAGES: Record<Lang, Record<SsoMessage, string>> = { en, ru };

export type SsoTranslate = (key: SsoMessage, values?: Record<string, string | number>) => string;

export function ssoTranslator(lang: Lang): SsoTranslate {
  return (key, values = {}) =>
    MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole));
}

export function isSsoMessage(value: string): value is SsoMessage {
  return Object.hasOwn(en, value);
}

/** `lang`, then OpenID Connect's `ui_locales` (first of en/ru), then Accept-Language. */
export function ssoLang(lang: string | undefined, uiLocales: string | undefined, acceptLanguage: string): Lang {
  if (isLang(lang)) return lang;
  const asked = (uiLocales ?? '')
    .split(' ')
    .map((tag) => tag.split('-')[0].toLowerCase())
    .find(isLang);
  return asked ?? preferredLang(acceptLanguage);
}
