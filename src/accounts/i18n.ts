// The account pages' own words (sign-up, passwords, profile, sessions), English and Russian, typed against each other;
// the shared ones (e-mail, password fields and their rules, the sign-in title) come from the cabinet's dictionary.
import type { Lang } from '../web/i18n.ts';

const en = {
  // On the sign-in page
  forgotPasswordLink: 'Forgot your password?',
  createAccountLink: 'Create an account',
  signedOutEverywhere: 'You have signed out on every device.',
  // Sign-up
  signUpTitle: 'Create an account',
  signUpIntro:
    'One svc ID for safe deals and the sites that offer "Sign in with svc ID". We mail you a link to confirm the address.',
  nameOptional: 'Your name (optional)',
  signUpButton: 'Create the account',
  signUpSent:
    'Check your mail: a message is on its way to that address. Open the link in it within 24 hours to finish. Nothing came? Look in the spam folder, or try again in an hour.',
  haveAccount: 'Already have an account?',
  invalidEmail: 'Enter an e-mail address, like name@example.com.',
  nameTooLong: 'The name is too long: use at most {max} characters.',
  // Confirming a sign-up
  confirmTitle: 'Confirm your e-mail address',
  confirmText: 'One more step: press the button to create your account and sign in.',
  confirmButton: 'Confirm and sign in',
  // A link from a mail that does not work
  linkInvalidTitle: 'This link does not work',
  linkInvalidText:
    'The link is incomplete, was already used, or has expired: a sign-up link lasts 24 hours, a link to set a new password one hour.',
  linkInvalidSignIn: 'If you know your password, sign in.',
  linkInvalidAgain: 'Otherwise ask for a new link:',
  // Forgotten password
  forgotTitle: 'Forgot your password?',
  forgotIntro:
    'Enter the e-mail address of your account. We mail you a link to set a new password; it works once, within an hour.',
  forgotButton: 'Send the link',
  forgotSent:
    'Check your mail: if an account uses that address, a link to set a new password is on its way; it works once, within an hour. Nothing came? Look in the spam folder.',
  // Reset
  resetTitle: 'Set a new password',
  resetIntro: 'Choose a new password. Every device signed in to your account will be signed out.',
  resetButton: 'Save the password and sign in',
  // Profile
  profileTitle: 'Profile',
  svcId: 'svc ID',
  // What the personal organization is to a private person: the name they take part in deals under.
  personalOrg: 'Name in deals',
  name: 'Name',
  language: 'Language of pages and mail',
  timeZone: 'Time zone of the times in pages and mail',
  moscowTime: 'Moscow time (Europe/Moscow)',
  timeZoneHint: 'Every time shown to you names its zone.',
  badTimeZone: 'Choose a time zone from the list.',
  save: 'Save',
  profileSaved: 'Your profile is saved.',
  // Password and sessions
  securityTitle: 'Password and sessions',
  changePasswordHeading: 'Change the password',
  currentPassword: 'Current password',
  changePasswordButton: 'Change the password',
  passwordChanged: 'Your password is changed. Your other sessions were signed out.',
  passwordReset: 'Your new password is set, and every other session was signed out.',
  signedUp: 'Welcome! Your account is ready and you are signed in.',
  wrongCurrentPassword: 'The current password is wrong. Type it again.',
  sessionsHeading: 'Where you are signed in',
  thisDevice: 'this device',
  unknownBrowser: 'Unknown browser',
  browserOnSystem: '{browser} on {os}',
  sessionTimes: 'Signed in {created}; last active {used}',
  revoke: 'Sign out',
  sessionRevoked: 'That session is signed out.',
  everywhereHeading: 'Sign out everywhere',
  everywhereHint: 'Signs out every device signed in to your account, this one too.',
  everywhereButton: 'Sign out everywhere…',
  everywhereConfirmText:
    'Every device signed in to your account, this one included, will be signed out. You can sign in again with your password.',
  everywhereConfirmButton: 'Yes, sign out everywhere',
  cancel: 'Cancel',
};

export type AccountMessage = keyof typeof en;

const ru: Record<AccountMessage, string> = {
  forgotPasswordLink: 'Забыли пароль?',
  createAccountLink: 'Создать учётную запись',
  signedOutEverywhere: 'Вы вышли на всех устройствах.',
  signUpTitle: 'Создать учётную запись',
  signUpIntro:
    'Один svc ID для безопасных сделок и сайтов с кнопкой «Войти через svc ID». Мы пришлём ссылку, чтобы подтвердить адрес.',
  nameOptional: 'Ваше имя (необязательно)',
  signUpButton: 'Создать учётную запись',
  signUpSent:
    'Проверьте почту: на этот адрес отправлено письмо. Откройте ссылку из него в течение 24 часов, чтобы завершить регистрацию. Письма нет? Загляните в папку «Спам» или попробуйте снова через час.',
  haveAccount: 'Уже есть учётная запись?',
  invalidEmail: 'Введите адрес электронной почты, например name@example.com.',
  nameTooLong: 'Имя слишком длинное: не больше {max} символов.',
  confirmTitle: 'Подтвердите адрес электронной почты',
  confirmText: 'Последний шаг: нажмите кнопку, чтобы создать учётную запись и войти.',
  confirmButton: 'Подтвердить и войти',
  linkInvalidTitle: 'Эта ссылка не работает',
  linkInvalidText:
    'Ссылка неполная, уже использована или устарела: ссылка для регистрации действует 24 часа, ссылка для нового пароля — один час.',
  linkInvalidSignIn: 'Если вы помните пароль, войдите.',
  linkInvalidAgain: 'Иначе запросите новую ссылку:',
  forgotTitle: 'Забыли пароль?',
  forgotIntro:
    'Введите адрес электронной почты учётной записи. Мы пришлём ссылку для нового пароля; она работает один раз в течение часа.',
  forgotButton: 'Отправить ссылку',
  forgotSent:
    'Проверьте почту: если этот адрес принадлежит учётной записи, на него отправлена ссылка для нового пароля; она работает один раз в течение часа. Письма нет? Загляните в папку «Спам».',
  resetTitle: 'Новый пароль',
  resetIntro: 'Придумайте новый пароль. На всех устройствах, где выполнен вход, произойдёт выход.',
  resetButton: 'Сохранить пароль и войти',
  profileTitle: 'Профиль',
  svcId: 'svc ID',
  personalOrg: 'Имя в сделках',
  name: 'Имя',
  language: 'Язык страниц и писем',
  timeZone: 'Часовой пояс для времени на страницах и в письмах',
  moscowTime: 'Московское время (Europe/Moscow)',
  timeZoneHint: 'Рядом с каждым временем указан его часовой пояс.',
  badTimeZone: 'Выберите часовой пояс из списка.',
  save: 'Сохранить',
  profileSaved: 'Профиль сохранён.',
  securityTitle: 'Пароль и сеансы',
  changePasswordHeading: 'Сменить пароль',
  currentPassword: 'Текущий пароль',
  changePasswordButton: 'Сменить пароль',
  passwordChanged: 'Пароль изменён. На других устройствах выполнен выход.',
  passwordReset: 'Новый пароль сохранён, на всех других устройствах выполнен выход.',
  signedUp: 'Добро пожаловать! Учётная запись готова, вход выполнен.',
  wrongCurrentPassword: 'Текущий пароль неверен. Введите его ещё раз.',
  sessionsHeading: 'Где выполнен вход',
  thisDevice: 'это устройство',
  unknownBrowser: 'Неизвестный браузер',
  browserOnSystem: '{browser} на {os}',
  sessionTimes: 'Вход {created}; последняя активность {used}',
  revoke: 'Выйти',
  sessionRevoked: 'Выход из этого сеанса выполнен.',
  everywhereHeading: 'Выйти везде',
  everywhereHint: 'Выход на всех устройствах, где выполнен вход, включая это.',
  everywhereButton: 'Выйти везде…',
  everywhereConfirmText:
    'На всех устройствах, где выполнен вход, включая это, произойдёт выход. Снова войти можно с паролем.',
  everywhereConfirmButton: 'Да, выйти везде',
  cancel: 'Отмена',
};

const MESSAGES: Record<Lang, Record<AccountMessage, string>> = { en, ru };

export type AccountTranslate = (key: AccountMessage, values?: Record<string, string | number>) => string;

export function accountTranslator(lang: Lang): AccountTranslate {
  return (key, values = {}) =>
    MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole));
}
