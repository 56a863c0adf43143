// The console's SSO client pages' words (list, registration, the card and its confirmations), English and Russian
// typed against each other; the console shell's shared words (save, cancel, next page) are its own dictionary's.
import { dictionary, type Words } from '../admin/console-kit.ts';

const en = {
  title: 'SSO clients',
  intro:
    'Sites that sign people in with svc ID. A marketplace’s automatic client is made with the marketplace and follows its settings.',
  clientId: 'Client ID',
  clientIdHint: '1–128 letters, digits and . _ ~ -, starting with a letter or digit; the site sends it as client_id.',
  name: 'Name',
  redirectUris: 'Redirect URIs',
  redirectUrisHint:
    'One or more, separated by spaces or new lines: exact https addresses (plain http only on localhost), or https://*.example.com/path for any subdomain.',
  kind: 'Kind',
  automatic: 'automatic, of a marketplace',
  registeredHere: 'registered here',
  state: 'State',
  enabled: 'enabled',
  disabled: 'disabled',
  created: 'Created',
  noClients: 'No SSO clients yet.',
  readOnly: 'Your role can read these pages; changes need the admin role.',
  registerTitle: 'Register a client',
  registerButton: 'Register',
  registeredTitle: 'Client {client} is registered',
  secretOnce:
    'Give this secret to the site’s developers. It is shown here once; later only with “Reveal the secret”, which the audit log records.',
  openCard: 'Open the client’s card',
  cardTitle: 'SSO client {client}',
  allClients: 'All SSO clients',
  marketplaceOwned:
    'This client was made with a marketplace: its name and redirect URI follow the marketplace’s settings. Here it can only be disabled and enabled.',
  openMarketplace: 'Open the marketplace',
  secret: 'Client secret',
  revealButton: 'Reveal the secret',
  revealHint: 'Each reveal is written to the audit log under your name.',
  revealedTitle: 'The secret of {client}',
  revealedText: 'The audit log records that you saw it. Do not send it by e-mail or chat in plain text.',
  rotatedAt: 'Secret last rotated',
  never: 'never',
  editTitle: 'Name and redirect URIs',
  rotateButton: 'Rotate the secret',
  rotateConfirmTitle: 'Rotate the secret of {client}?',
  rotateConfirmText:
    'A new secret is made and the current one stops working at once: the site’s sign-ins fail until its server uses the new secret.',
  rotateConfirmButton: 'Yes, rotate',
  rotatedTitle: 'The secret of {client} was rotated',
  rotatedText: 'The old secret no longer works. Here is the new one; it is shown once.',
  disableButton: 'Disable',
  enableButton: 'Enable',
  disableConfirmTitle: 'Disable {client}?',
  disableConfirmText:
    'At once its sign-in requests end on an error page, its code exchanges fail with invalid_client, and its access tokens stop working. You can enable it again.',
  disableConfirmButton: 'Yes, disable',
  enableConfirmTitle: 'Enable {client}?',
  enableConfirmText: 'It can sign people in again at once, with its current secret.',
  enableConfirmButton: 'Yes, enable',
  deleteButton: 'Delete',
  deleteConfirmTitle: 'Delete {client}?',
  deleteConfirmText:
    'The client, its codes, its tokens and its users’ consents are deleted for good, and the client ID becomes free. This cannot be undone; disabling can.',
  deleteConfirmButton: 'Yes, delete',
  done_saved: 'Saved.',
  done_disabled: 'The client is disabled: it cannot sign anyone in.',
  done_enabled: 'The client is enabled again.',
  done_deleted: 'The client was deleted.',
  badClientId: 'The client ID must be 1–128 letters, digits and . _ ~ -, starting with a letter or digit.',
  badName: 'Give the client a name of at most 200 characters.',
  badRedirectUris: 'The redirect URIs are not allowed: {reason}',
  clientIdTaken: 'A client with this ID is registered already. Choose another ID.',
};

export type SsoConsoleMessage = keyof typeof en;

const ru: Record<SsoConsoleMessage, string> = {
  title: 'Клиенты SSO',
  intro:
    'Сайты, которые впускают людей через svc ID. Автоматический клиент маркетплейса создаётся вместе с маркетплейсом и следует его настройкам.',
  clientId: 'Идентификатор клиента',
  clientIdHint:
    '1–128 латинских букв, цифр и . _ ~ -, первый символ — буква или цифра; сайт передаёт его как client_id.',
  name: 'Название',
  redirectUris: 'Адреса возврата',
  redirectUrisHint:
    'Один или несколько через пробел или с новой строки: точные адреса https (http только для localhost) или https://*.example.com/path для любого поддомена.',
  kind: 'Вид',
  automatic: 'автоматический, маркетплейса',
  registeredHere: 'зарегистрирован здесь',
  state: 'Состояние',
  enabled: 'включён',
  disabled: 'отключён',
  created: 'Создан',
  noClients: 'Клиентов SSO пока нет.',
  readOnly: 'Ваша роль может читать эти страницы; для изменений нужна роль admin.',
  registerTitle: 'Зарегистрировать клиента',
  registerButton: 'Зарегистрировать',
  registeredTitle: 'Клиент {client} зарегистрирован',
  secretOnce:
    'Передайте этот секрет разработчикам сайта. Здесь он показан один раз; позже — только кнопкой «Показать секрет», и это попадёт в журнал аудита.',
  openCard: 'Открыть карточку клиента',
  cardTitle: 'Клиент SSO {client}',
  allClients: 'Все клиенты SSO',
  marketplaceOwned:
    'Этот клиент создан вместе с маркетплейсом: его название и адрес возврата следуют настройкам маркетплейса. Здесь его можно только отключить и включить.',
  openMarketplace: 'Открыть маркетплейс',
  secret: 'Секрет клиента',
  revealButton: 'Показать секрет',
  revealHint: 'Каждый показ записывается в журнал аудита под вашим именем.',
  revealedTitle: 'Секрет клиента {client}',
  revealedText: 'Журнал аудита записал, что вы его видели. Не пересылайте его открытым текстом по почте или в чате.',
  rotatedAt: 'Секрет последний раз заменён',
  never: 'никогда',
  editTitle: 'Название и адреса возврата',
  rotateButton: 'Заменить секрет',
  rotateConfirmTitle: 'Заменить секрет клиента {client}?',
  rotateConfirmText:
    'Будет создан новый секрет, а текущий сразу перестанет работать: входы через сайт не будут проходить, пока его сервер не начнёт использовать новый секрет.',
  rotateConfirmButton: 'Да, заменить',
  rotatedTitle: 'Секрет клиента {client} заменён',
  rotatedText: 'Старый секрет больше не работает. Вот новый; он показан один раз.',
  disableButton: 'Отключить',
  enableButton: 'Включить',
  disableConfirmTitle: 'Отключить {client}?',
  disableConfirmText:
    'Сразу же его запросы входа закончатся страницей ошибки, обмен кодов будет отклоняться с invalid_client, а его токены доступа перестанут работать. Его можно будет включить снова.',
  disableConfirmButton: 'Да, отключить',
  enableConfirmTitle: 'Включить {client}?',
  enableConfirmText: 'Он сразу снова сможет впускать людей со своим текущим секретом.',
  enableConfirmButton: 'Да, включить',
  deleteButton: 'Удалить',
  deleteConfirmTitle: 'Удалить {client}?',
  deleteConfirmText:
    'Клиент, его коды, токены и согласия пользователей удаляются навсегда, идентификатор клиента освобождается. Это нельзя отменить, в отличие от отключения.',
  deleteConfirmButton: 'Да, удалить',
  done_saved: 'Сохранено.',
  done_disabled: 'Клиент отключён: он никого не может впустить.',
  done_enabled: 'Клиент снова включён.',
  done_deleted: 'Клиент удалён.',
  badClientId: 'Идентификатор клиента — 1–128 латинских букв, цифр и . _ ~ -, первый символ — буква или цифра.',
  badName: 'Дайте клиенту название не длиннее 200 символов.',
  badRedirectUris: 'Адреса возврата не подходят: {reason}',
  clientIdTaken: 'Клиент с таким идентификатором уже зарегистрирован. Выберите другой.',
};

export type SsoConsoleTranslate = Words<SsoConsoleMessage>;

export const ssoConsoleTranslator = dictionary(en, ru);
