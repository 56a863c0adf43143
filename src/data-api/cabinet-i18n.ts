// The words of the cabinet's data keys page, English and Russian (the Russian table is typed against the English one,
// so a missing string fails type-checking); the layout's and the error pages' words come from the cabinet dictionary.
import type { Lang } from '../web/i18n.ts';

const en = {
  title: 'Data API keys',
  intro:
    'A key lets a program read the tender data over the REST API ({rest}) and MCP ({mcp}): send it as Authorization: Bearer svc_mcp_…',
  usageHeading: 'Tariff and usage',
  tariff: 'Tariff',
  tariff_free: 'Free',
  tariff_pro: 'Pro',
  tariff_business: 'Business',
  tariff_enterprise: 'Enterprise',
  usedThisMonth: 'Used this month',
  usedOfQuota: '{used} of {quota} requests',
  usedUnlimited: '{used} requests (no limit)',
  remaining: 'Remaining',
  resets: 'The quota renews',
  usageHint: 'Requests of all your keys count together, per calendar month (UTC).',
  issueHeading: 'Issue a new key',
  name: 'Name',
  nameHint: 'What the key is for, e.g. "Reports server". At most {max} characters.',
  issueButton: 'Issue the key',
  keysHeading: 'Your keys',
  noKeys: 'You have no keys yet.',
  prefix: 'Begins with',
  prefixUnknown: 'unknown (issued before this was kept)',
  unnamed: 'No name',
  created: 'Issued',
  state: 'State',
  active: 'Active',
  revokedOn: 'Revoked on {date}',
  revokeLink: 'Revoke…',
  activeCount: 'Active keys: {count} of at most {max}.',
  // The key, shown once
  issuedTitle: 'Your new key',
  issuedNotice: 'The key "{name}" was issued.',
  copyNow:
    'Copy the key now and keep it somewhere safe: it is shown only this once. We keep only a fingerprint of it and cannot show it again.',
  lostKey: 'If you lose it, issue a new key and revoke this one.',
  backToKeys: 'I have copied it: back to my keys',
  toKeys: 'Back to my keys',
  // Revoking
  revokeTitle: 'Revoke the key?',
  revokeWhat:
    'The key "{name}" ({prefix}) will stop working at once: every program that uses it will be refused from its next request. This cannot be undone.',
  revokeAlready: 'This key is already revoked.',
  revokeButton: 'Yes, revoke the key',
  cancel: 'No, keep it',
  done_revoked: 'The key was revoked: programs using it are refused from now on.',
  // Why an issue was refused
  nameBlank: 'Give the key a name, so you can tell it from your other keys.',
  nameTooLong: 'The name is too long: use at most {max} characters.',
  nameInvalid: 'The name holds characters that cannot be used (control characters). Type it again.',
  tooManyKeys:
    'You already have {max} active keys, the most an account may hold. Revoke a key you no longer use, then issue a new one.',
};

export type DataKeysMessage = keyof typeof en;

const ru: Record<DataKeysMessage, string> = {
  title: 'Ключи API данных',
  intro:
    'С ключом программа читает данные о закупках через REST API ({rest}) и MCP ({mcp}): передавайте его как Authorization: Bearer svc_mcp_…',
  usageHeading: 'Тариф и расход',
  tariff: 'Тариф',
  tariff_free: 'Бесплатный',
  tariff_pro: 'Pro',
  tariff_business: 'Business',
  tariff_enterprise: 'Enterprise',
  usedThisMonth: 'Израсходовано в этом месяце',
  usedOfQuota: '{used} из {quota} запросов',
  usedUnlimited: '{used} запросов (без ограничения)',
  remaining: 'Осталось',
  resets: 'Квота обновится',
  usageHint: 'Запросы всех ваших ключей считаются вместе, по календарным месяцам (UTC).',
  issueHeading: 'Выпустить новый ключ',
  name: 'Название',
  nameHint: 'Для чего ключ, например «Сервер отчётов». Не больше {max} символов.',
  issueButton: 'Выпустить ключ',
  keysHeading: 'Ваши ключи',
  noKeys: 'У вас пока нет ключей.',
  prefix: 'Начинается с',
  prefixUnknown: 'неизвестно (выпущен до того, как это сохранялось)',
  unnamed: 'Без названия',
  created: 'Выпущен',
  state: 'Состояние',
  active: 'Действует',
  revokedOn: 'Отозван {date}',
  revokeLink: 'Отозвать…',
  activeCount: 'Действующих ключей: {count} из {max} возможных.',
  issuedTitle: 'Ваш новый ключ',
  issuedNotice: 'Ключ «{name}» выпущен.',
  copyNow:
    'Скопируйте ключ сейчас и сохраните в надёжном месте: он показывается только один раз. Мы храним лишь его отпечаток и показать его снова не сможем.',
  lostKey: 'Если ключ потеряется, выпустите новый, а этот отзовите.',
  backToKeys: 'Ключ скопирован: вернуться к ключам',
  toKeys: 'Вернуться к ключам',
  revokeTitle: 'Отозвать ключ?',
  revokeWhat:
    'Ключ «{name}» ({prefix}) сразу перестанет работать: каждой программе, которая его использует, со следующего запроса будет отказано. Отменить это нельзя.',
  revokeAlready: 'Этот ключ уже отозван.',
  revokeButton: 'Да, отозвать ключ',
  cancel: 'Нет, оставить',
  done_revoked: 'Ключ отозван: программам, которые его используют, теперь отказано.',
  nameBlank: 'Дайте ключу название, чтобы отличать его от других ваших ключей.',
  nameTooLong: 'Название слишком длинное: не больше {max} символов.',
  nameInvalid: 'В названии есть недопустимые (управляющие) символы. Введите его заново.',
  tooManyKeys:
    'У вас уже {max} действующих ключей — больше у одного аккаунта быть не может. Отзовите ключ, который больше не нужен, и выпустите новый.',
};

const MESSAGES: Record<Lang, Record<DataKeysMessage, string>> = { en, ru };

export type DataKeysTranslate = (key: DataKeysMessage, values?: Record<string, string | number>) => string;

export function dataKeysTranslator(lang: Lang): DataKeysTranslate {
  return (key, values = {}) =>
    MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole));
}
