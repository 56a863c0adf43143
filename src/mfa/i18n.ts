// The second factors' words (the security page's section, the second sign-in page, the step-up before money moves),
// English and Russian, typed against each other.
import type { Lang } from '../web/i18n.ts';

const en = {
  // The security page's section
  factorsHeading: 'Second factor',
  factorsIntro:
    'A second factor protects your account and your money: after the password, sign-in asks for a code from an authenticator app or for a passkey (your phone, computer or security key). A passkey can also sign you in on its own.',
  factorsNone: 'You have no second factor yet.',
  totpHeading: 'Authenticator app',
  totpOn: 'An authenticator app is set up.',
  totpOff: 'No authenticator app is set up.',
  totpSetUp: 'Set up an authenticator app',
  totpRemove: 'Remove the authenticator app…',
  passkeysHeading: 'Passkeys',
  passkeysCount: 'Passkeys: {count}.',
  passkeysNone: 'No passkeys yet.',
  passkeysHidden: 'To see your passkeys by name, add one or remove one, confirm it is you.',
  passkeyAdded: 'Added {date}',
  passkeyUsed: 'last used {date}',
  passkeyName: 'Name of the new passkey',
  passkeyNameHint: 'Something you will recognise, like “Work laptop”.',
  passkeyAdd: 'Add a passkey',
  passkeyRemove: 'Remove…',
  passkeyNoScript: 'Adding a passkey needs JavaScript in this browser.',
  recoveryHeading: 'Recovery codes',
  recoveryLeft:
    'Unused recovery codes: {count}. Each signs you in once when you have neither your app nor your passkey.',
  recoveryNone: 'Recovery codes come with your first second factor.',
  recoveryNew: 'Make new recovery codes…',
  confirmItsYou: 'Confirm it is you',
  // Setting up the app
  totpSetupTitle: 'Set up an authenticator app',
  totpSetupIntro:
    'Scan the picture with an authenticator app (Google Authenticator, Aegis, 1Password and others), or type the key into it. Then enter the six digits it shows.',
  totpQrAlt: 'A QR code with the key for the authenticator app',
  totpKey: 'Key',
  totpCode: 'Code from the app',
  totpCodeHint: 'Six digits; a new one every 30 seconds.',
  totpConfirm: 'Turn on',
  totpWrong: 'That code does not match. Type the six digits the app shows now.',
  totpExists: 'An authenticator app is already set up. Remove it first to set up another.',
  // Recovery codes shown once
  recoveryTitle: 'Your recovery codes',
  recoveryIntro:
    'Keep these codes somewhere safe, like a password manager or on paper. Each works once, in place of your app or passkey. They are shown only now.',
  recoveryDone: 'I have saved them',
  // Confirmations
  removeTotpTitle: 'Remove the authenticator app?',
  removeTotpText: 'Sign-in will no longer ask for its codes.',
  removePasskeyTitle: 'Remove the passkey “{name}”?',
  removePasskeyText: 'It will no longer sign you in.',
  removeLastFactor: 'It is your last second factor: your recovery codes stop working too.',
  removeButton: 'Yes, remove',
  newCodesTitle: 'Make new recovery codes?',
  newCodesText: 'Your current recovery codes stop working.',
  newCodesButton: 'Yes, make new codes',
  cancel: 'Cancel',
  // Outcomes
  done_totp_on: 'The authenticator app is on. Sign-in will ask for its code.',
  done_totp_removed: 'The authenticator app is removed.',
  done_passkey_added: 'The passkey is added.',
  done_passkey_removed: 'The passkey is removed.',
  done_verified: 'Thank you: your second factor is confirmed.',
  passkeyFailed: 'The passkey did not work. Try again, or use another way.',
  passkeyNotFound: 'That passkey was not found: it may have been removed.',
  // The second sign-in page and the step-up
  secondTitle: 'Confirm it is you',
  secondIntro: 'Your password is right. Now use your second factor.',
  secondCode: 'Code from the authenticator app',
  secondCodeHint: 'Six digits; a new one every 30 seconds.',
  secondCodeButton: 'Continue',
  secondPasskey: 'Use a passkey',
  secondRecovery: 'Use a recovery code',
  secondRecoveryField: 'Recovery code',
  secondRecoveryHint: 'One of the codes you saved, like k7m2q-x9pta.',
  secondWrong: 'That code is wrong or was used already. Try again.',
  secondExpired: 'The sign-in took too long. Enter your e-mail and password again.',
  passkeySignIn: 'Sign in with a passkey',
  passkeySignInHint: 'Your phone, computer or security key signs you in, no password needed.',
  verifyTitle: 'Confirm with your second factor',
  verifyIntro: 'This needs your second factor once more.',
  verifyMoney:
    'The marketplace or the service asks for a second factor before money moves. Confirm it, and you go back to what you were doing.',
  verifyNoFactor:
    'This needs a second factor, and your account has none yet. Set up an authenticator app or a passkey first.',
  goToSecurity: 'Go to second factor settings',
  // The deal page
  moneyNeedsFactor:
    'Money in this deal moves only after a second factor: paying, releasing or refunding asks for your authenticator app code or a passkey.',
  moneyFactorGiven: 'Money in this deal moves only after a second factor; you have confirmed yours in this session.',
};

export type MfaMessage = keyof typeof en;

const ru: Record<MfaMessage, string> = {
  factorsHeading: 'Второй фактор',
  factorsIntro:
    'Второй фактор защищает учётную запись и деньги: после пароля вход просит код из приложения-аутентификатора или ключ доступа (телефон, компьютер или аппаратный ключ). Ключом доступа можно войти и без пароля.',
  factorsNone: 'Второго фактора пока нет.',
  totpHeading: 'Приложение-аутентификатор',
  totpOn: 'Приложение-аутентификатор подключено.',
  totpOff: 'Приложение-аутентификатор не подключено.',
  totpSetUp: 'Подключить приложение-аутентификатор',
  totpRemove: 'Отключить приложение-аутентификатор…',
  passkeysHeading: 'Ключи доступа',
  passkeysCount: 'Ключей доступа: {count}.',
  passkeysNone: 'Ключей доступа пока нет.',
  passkeysHidden: 'Чтобы увидеть названия ключей, добавить или удалить ключ, подтвердите, что это вы.',
  passkeyAdded: 'Добавлен {date}',
  passkeyUsed: 'последний вход {date}',
  passkeyName: 'Название нового ключа',
  passkeyNameHint: 'Чтобы вы его узнали, например «Рабочий ноутбук».',
  passkeyAdd: 'Добавить ключ доступа',
  passkeyRemove: 'Удалить…',
  passkeyNoScript: 'Чтобы добавить ключ доступа, в браузере должен работать JavaScript.',
  recoveryHeading: 'Резервные коды',
  recoveryLeft:
    'Неиспользованных резервных кодов: {count}. Каждый один раз заменяет приложение или ключ доступа, если их нет под рукой.',
  recoveryNone: 'Резервные коды выдаются вместе с первым вторым фактором.',
  recoveryNew: 'Получить новые резервные коды…',
  confirmItsYou: 'Подтвердить, что это вы',
  totpSetupTitle: 'Подключить приложение-аутентификатор',
  totpSetupIntro:
    'Отсканируйте картинку приложением-аутентификатором (Google Authenticator, Aegis, 1Password и другими) или введите в него ключ. Затем введите шесть цифр, которые оно покажет.',
  totpQrAlt: 'QR-код с ключом для приложения-аутентификатора',
  totpKey: 'Ключ',
  totpCode: 'Код из приложения',
  totpCodeHint: 'Шесть цифр; новый код каждые 30 секунд.',
  totpConfirm: 'Включить',
  totpWrong: 'Код не подходит. Введите шесть цифр, которые приложение показывает сейчас.',
  totpExists: 'Приложение-аутентификатор уже подключено. Чтобы подключить другое, сначала отключите его.',
  recoveryTitle: 'Ваши резервные коды',
  recoveryIntro:
    'Сохраните коды в надёжном месте: в менеджере паролей или на бумаге. Каждый работает один раз вместо приложения или ключа доступа. Они показываются только сейчас.',
  recoveryDone: 'Я их сохранил',
  removeTotpTitle: 'Отключить приложение-аутентификатор?',
  removeTotpText: 'Вход больше не будет спрашивать его коды.',
  removePasskeyTitle: 'Удалить ключ доступа «{name}»?',
  removePasskeyText: 'Им больше нельзя будет войти.',
  removeLastFactor: 'Это последний второй фактор: резервные коды тоже перестанут работать.',
  removeButton: 'Да, удалить',
  newCodesTitle: 'Получить новые резервные коды?',
  newCodesText: 'Нынешние резервные коды перестанут работать.',
  newCodesButton: 'Да, получить новые коды',
  cancel: 'Отмена',
  done_totp_on: 'Приложение-аутентификатор включено. При входе понадобится его код.',
  done_totp_removed: 'Приложение-аутентификатор отключено.',
  done_passkey_added: 'Ключ доступа добавлен.',
  done_passkey_removed: 'Ключ доступа удалён.',
  done_verified: 'Спасибо: второй фактор подтверждён.',
  passkeyFailed: 'Ключ доступа не сработал. Попробуйте ещё раз или выберите другой способ.',
  passkeyNotFound: 'Такой ключ доступа не найден: возможно, его удалили.',
  secondTitle: 'Подтвердите, что это вы',
  secondIntro: 'Пароль верный. Теперь второй фактор.',
  secondCode: 'Код из приложения-аутентификатора',
  secondCodeHint: 'Шесть цифр; новый код каждые 30 секунд.',
  secondCodeButton: 'Продолжить',
  secondPasskey: 'Войти ключом доступа',
  secondRecovery: 'Ввести резервный код',
  secondRecoveryField: 'Резервный код',
  secondRecoveryHint: 'Один из сохранённых кодов, например k7m2q-x9pta.',
  secondWrong: 'Код неверен или уже использован. Попробуйте ещё раз.',
  secondExpired: 'Вход занял слишком много времени. Введите адрес и пароль ещё раз.',
  passkeySignIn: 'Войти ключом доступа',
  passkeySignInHint: 'Вход с телефона, компьютера или аппаратного ключа, без пароля.',
  verifyTitle: 'Подтвердите вторым фактором',
  verifyIntro: 'Для этого ещё раз нужен второй фактор.',
  verifyMoney:
    'Магазин или сервис просит второй фактор, прежде чем двигать деньги. Подтвердите его, и вы вернётесь к тому, что делали.',
  verifyNoFactor:
    'Для этого нужен второй фактор, а у учётной записи его пока нет. Сначала подключите приложение-аутентификатор или ключ доступа.',
  goToSecurity: 'К настройкам второго фактора',
  moneyNeedsFactor:
    'Деньги в этой сделке движутся только после второго фактора: оплата, перевод продавцу или возврат попросят код из приложения или ключ доступа.',
  moneyFactorGiven: 'Деньги в этой сделке движутся только после второго фактора; в этом сеансе вы его уже подтвердили.',
};

const MESSAGES: Record<Lang, Record<MfaMessage, string>> = { en, ru };

export type MfaTranslate = (key: MfaMessage, values?: Record<string, string | number>) => string;

export function mfaTranslator(lang: Lang): MfaTranslate {
  return (key, values = {}) =>
    MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole));
}
