// Every word the cabinet pages show, in English and Russian, and how a language is chosen. `{name}` marks a value
// filled in by t(); the Russian table is typed against the English one, so a missing string fails type-checking.
import type { DealStatus, DocumentKind, PaymentStatus } from '../deals/model.ts';

export const LANGS = ['en', 'ru'] as const;
export type Lang = (typeof LANGS)[number];

const en = {
  appName: 'svc ID',
  switchLanguage: 'Русский',
  // The signed-in user's sections, in the header of every page
  navDeals: 'Deals',
  navProfile: 'Profile',
  navSecurity: 'Password and sessions',
  navDataKeys: 'Data API keys',
  navSites: 'Connected sites',
  navPayouts: 'Payouts',
  signOut: 'Sign out',
  signedInAs: 'Signed in as {email}',
  // Sign-in
  signInTitle: 'Sign in',
  email: 'E-mail',
  password: 'Password',
  signInButton: 'Sign in',
  wrongCredentials: 'The e-mail or the password is wrong. Check them and try again.',
  tooManyAttempts: 'Too many wrong passwords. Wait {minutes} min and try again.',
  signInHint: 'First time here? Open the link in your invitation e-mail to set a password.',
  signedOut: 'You have signed out.',
  // Invitation
  inviteTitle: 'Set your password',
  inviteIntro: 'Choose a password for your cabinet. Afterwards you sign in with your e-mail and this password.',
  inviteDeal_buyer: '{marketplace} has opened a safe deal for you: {title}, {amount}.',
  inviteDeal_seller: '{marketplace} has opened a safe deal with you as the seller: {title}, {amount}.',
  inviteDeal_approver: '{marketplace} asks you to approve the terms of a safe deal: {title}, {amount}.',
  inviteNext: 'Once the password is set, the deal opens.',
  newPassword: 'New password',
  confirmPassword: 'Repeat the password',
  passwordHint: 'At least {min} characters.',
  passwordsDiffer: 'The two passwords differ. Type the same password in both fields.',
  passwordTooShort: 'The password is too short: use at least {min} characters.',
  passwordTooLong: 'The password is too long: use at most {max} characters.',
  setPasswordButton: 'Set the password and sign in',
  inviteInvalidTitle: 'This invitation link does not work',
  inviteInvalidText: 'The link is incomplete, was already used, or is older than 14 days.',
  inviteInvalidSignIn: 'If you have already set your password, sign in with your e-mail and password.',
  inviteInvalidAsk: 'Otherwise ask the shop where you placed the order to send you a new invitation.',
  goToSignIn: 'Go to sign-in',
  // Home
  homeTitle: 'My cabinet',
  approvalsHeading: 'Approvals',
  noApprovals: 'Nothing to approve.',
  dealsHeading: 'Deals',
  noDeals: 'You have no deals yet: a deal appears here when a marketplace opens one with you.',
  dealsSearch: 'Title or order number',
  anyStatus: 'Any status',
  anyRole: 'Any role',
  showDeals: 'Show',
  // A refund by the buyer, the marketplace or the arbiter: the filter's word for all of them.
  filterRefunded: 'Refunded to the buyer',
  untitled: 'Untitled deal',
  amount: 'Amount',
  status: 'Status',
  documents: 'Documents',
  noDocuments: 'No documents.',
  download: 'Download',
  approve: 'Approve',
  readContract: 'I have read the contract and the documents of this deal',
  readContractRequired:
    'To approve, first read the contract and tick “I have read the contract”. Nothing was approved.',
  marketplace: 'Marketplace',
  reject: 'Reject',
  rejectComment: 'Reason for rejecting (optional)',
  openDeal: 'Open the deal',
  decidedAt: 'Decided on {date}',
  startedAt: 'Started on {date}',
  // Deal
  seller: 'Seller',
  description: 'Description',
  approvalsHistory: 'Approval history',
  noApprovalHistory: 'No approvals yet.',
  approver: 'Approver',
  comment: 'Comment',
  paymentsHeading: 'Payments',
  noPayments: 'No payments yet.',
  escrowHeading: 'Escrow',
  noEscrowActions: 'Nothing to do here right now.',
  release: 'Release the money to the seller',
  releaseHint: 'Do this once you have received what you ordered. The seller gets the money; this cannot be undone.',
  refund: 'Cancel and refund',
  refundHint: 'Cancels the deal and returns the money to you.',
  dispute: 'Open a dispute',
  disputeHint:
    'Something is wrong with the order: an arbiter decides whether the money goes to the seller or back to you.',
  payButton: 'Pay {amount}',
  payHint: 'The money is held safely until you release it to the seller once you have what you ordered.',
  paySandboxHint: 'This shop is in test mode (sandbox): the payment is a test and no real money moves.',
  testPayment: 'test payment (sandbox)',
  alreadyHeld: 'The money is already held: there is nothing more to pay.',
  pendingPaymentNote: 'If you have just paid, the confirmation can take a minute: reload this page.',
  disputeNote: 'A dispute is open: the money stays held until the arbiter decides. Add messages and files below.',
  backHome: 'Back to my cabinet',
  // Roles
  yourRole: 'Your role',
  role_buyer: 'Buyer',
  role_seller: 'Seller',
  role_approver: 'Approver',
  buyer: 'Buyer',
  sellerEscrowNote:
    'The money is held. The buyer releases it to you once they have what they ordered; you will see it here.',
  // Confirmations of escrow moves
  confirm_release_title: 'Release the money to the seller?',
  confirm_release_text:
    'The seller gets {amount}. This cannot be undone: the money cannot be returned to you afterwards. Do it only once you have received what you ordered.',
  confirm_release_button: 'Yes, release the money',
  confirm_refund_title: 'Cancel the deal and get the money back?',
  confirm_refund_text: '{amount} goes back to you and the deal ends. It cannot be resumed afterwards.',
  confirm_refund_button: 'Yes, cancel and refund',
  confirm_dispute_title: 'Open a dispute?',
  confirm_dispute_text:
    'The money ({amount}) stays held until the arbiter decides whether it goes to the seller or back to you. The seller and the arbiter read your reason, and both sides can add messages and files.',
  confirm_dispute_button: 'Open the dispute',
  confirmCancel: 'No, back to the deal',
  disputeReason: 'Why do you open the dispute? (required)',
  textLimitHint: 'At most {max} characters.',
  reasonTooLong: 'The reason is too long: use at most {max} characters.',
  // Dispute
  disputeHeading: 'Dispute',
  dispute_open: 'Open: waiting for the arbiter',
  dispute_decided: 'Decided',
  disputeOpened: 'Opened',
  reason: 'Reason',
  messagesHeading: 'Messages',
  noMessages: 'No messages yet.',
  author_buyer: 'Buyer',
  author_seller: 'Seller',
  author_marketplace: 'Marketplace',
  author_arbiter: 'Arbiter',
  you: '(you)',
  decisionHeading: "The arbiter's decision",
  outcome_release: 'The money goes to the seller',
  outcome_refund: 'The money goes back to the buyer',
  addMessageHeading: 'Add a message',
  messageText: 'Message',
  messageFiles: 'Files (optional): up to {count}, each up to {size} MiB',
  sendMessage: 'Send the message',
  messageBlank: 'Write the message: it must not be empty.',
  messageEmpty: 'Write a message or attach a photo or a file: the message must not be empty.',
  messageTextOptional: 'Message (optional with a file)',
  messageTooLong: 'The message is too long: use at most {max} characters.',
  tooManyFiles: 'Attach at most {count} files.',
  fileTooLarge: 'Each file may be at most {size} MiB.',
  payload_too_large: 'The files are too large together. Send fewer or smaller files.',
  reason_required: 'Say why you open the dispute: the reason is required.',
  no_open_dispute: 'This deal has no open dispute, so no message can be added.',
  // Payouts: where a seller's money goes
  payoutsTitle: 'Payouts',
  payoutsIntro:
    'Where the money for your sales goes once it is released to you. It applies to every deal in which you are the seller; you can change it at any time.',
  payoutCurrent: 'Your payouts go to: {title}',
  payoutCurrentSince: 'Given on {date}.',
  payoutNone: 'You have not given a payout destination yet. Money released to you waits until you do.',
  payoutTestHeading: 'Shops in test mode (sandbox): a test card',
  payoutTestText: 'Shops in test mode pay out to a test card, and no real money moves. Use one of two test cards:',
  payoutTestGood: '4111 1111 1111 1111: the payout succeeds.',
  payoutTestDeclined: '4000 0000 0000 0002: the bank declines the payout, so you can see what happens then.',
  payoutTestCard: 'Test card number',
  payoutLiveHeading: 'Real shops: your card or YooMoney wallet',
  payoutLiveText:
    'A card is given through YooKassa’s payout widget: you type the card number there, never here, and the widget gives back a token (payout_token) that stands for the card. Paste that token below. A YooMoney wallet is given by its number.',
  payoutLiveType: 'Where to pay',
  payoutType_bank_card: 'Bank card (the token from the payout widget)',
  payoutType_yoo_money: 'YooMoney wallet (its number)',
  payoutToken: 'The token from the payout widget, or the wallet number',
  payoutSecretHint: 'Kept encrypted; afterwards only its last four characters are shown.',
  payoutSave: 'Save',
  payoutWaitingHeading: 'Deals waiting for a payout',
  payoutWaitingNone: 'No deal is waiting for a payout.',
  payoutEmpty: 'Fill in the card number, the token or the wallet number.',
  payoutBad_test_card:
    'That is not one of the test cards. Use 4111 1111 1111 1111 (the payout succeeds) or 4000 0000 0000 0002 (it is declined).',
  payoutBad_bank_card:
    'That is not a token from YooKassa’s payout widget. Paste the token the widget gave you (letters, digits, dots and dashes).',
  payoutBad_yoo_money: 'A YooMoney wallet number has 11 to 20 digits.',
  payoutCardNumber:
    'That looks like a card number. Never type your card number here: type it in YooKassa’s payout widget and paste the token it gives you.',
  done_payout_saved:
    'Saved: your payouts go to {title}. A deal waiting for a payout, or whose payout failed, is paid out to it now.',
  // Delivery, the money released and refunded, and the seller's payout on the deal page
  deliveryHeading: 'Delivery',
  shippedOn: 'Shipped on {date}',
  carrier: 'Carrier',
  tracking: 'Tracking number',
  deliveredOn: 'Delivered on {date}',
  notDeliveredYet: 'Not delivered yet',
  notShippedYet: 'Not shipped yet. Once you have sent the order, mark it shipped here.',
  inspectionBuyer:
    'Check what you received. You can open a dispute until {date}; after that the money goes to the seller automatically.',
  inspectionSeller: 'The buyer can open a dispute until {date}; after that the money is released to you automatically.',
  shippedBuyerNote:
    'The order is on its way: the money can no longer be refunded without the arbiter. If something is wrong, open a dispute.',
  shipHeading: 'Mark the order shipped',
  shipCarrier: 'Carrier (optional)',
  shipTracking: 'Tracking number (optional)',
  shipButton: 'Mark shipped…',
  shipHint: 'Tells the buyer and the shop that the order is on its way. You confirm on the next page.',
  confirm_ship_title: 'Mark the order shipped?',
  confirm_ship_text:
    'The buyer and the shop are told that the order is on its way. This cannot be undone: afterwards the buyer can no longer cancel and refund alone, only open a dispute.',
  confirm_ship_button: 'Yes, mark shipped',
  done_shipped: 'Marked shipped: the buyer and the shop have been told.',
  releasedAmount: 'Released to the seller',
  refundedAmount: 'Refunded to the buyer',
  payoutHeading: 'Payout',
  payout_awaiting_destination: 'The money is released to you and waits for your payout card.',
  payout_addCard: 'Add it on the Payouts page',
  payout_pending: 'The payout of {amount} is on its way to {title}.',
  payout_succeeded: 'Paid out to {title}: {amount}.',
  payout_failed: 'The payout failed: {reason}.',
  payout_giveAnother: 'Give another card on the Payouts page',
  payout_failedHint: 'The money stays held for you and is sent again as soon as you give another card.',
  payoutReason_card_declined: 'the bank declined the card',
  payoutItem_pending: 'on its way',
  payoutItem_succeeded: 'paid out',
  payoutItem_failed: 'failed',
  shipped_dispute_instead:
    'The order is already shipped: you can no longer cancel and refund alone. Open a dispute instead, and the arbiter decides.',
  invalid_delivery_state: 'The order cannot be marked shipped now: it is already marked, or the money is not held.',
  shipFieldTooLong: 'The carrier and the tracking number are at most {max} characters each.',
  // Notices after an action
  done_approved: 'You approved the terms.',
  done_rejected: 'You rejected the terms.',
  done_released: 'The money was sent to the seller.',
  done_refunded: 'The deal was cancelled and the money returned.',
  done_disputed: 'The dispute is open. The money stays held until the arbiter decides.',
  done_message_sent: 'Your message was added to the dispute.',
  done_test_payment_held: 'Test payment: the money is held (sandbox). No real money moved.',
  // Errors
  errorTitle: 'Something went wrong',
  notFoundTitle: 'Not found',
  notFound: 'This page does not exist, or it belongs to another account.',
  forbiddenTitle: 'This form has expired',
  csrfFailed: 'For your safety the form was not accepted. Go back, reload the page and try again.',
  forbidden: 'Your role may not do this. Ask an administrator with the admin role.',
  commentTooLong: 'The comment is too long: use at most {max} characters.',
  badForm: 'The form could not be read. Reload the page and try again.',
  disputeOpenRefusal:
    'A dispute is open on this deal: only the arbiter’s decision moves the money now. Its current state is shown below.',
  approval_not_pending: 'This approval has already been decided.',
  invalid_payment_state: 'The payment cannot be moved that way now. Its current state is shown below.',
  deal_closed: 'This deal is closed and cannot change any more.',
  deal_not_approved: 'The terms are not approved yet.',
  acquirer_refused: 'The payment provider refused the operation. Try again later or contact support.',
  acquirer_unavailable: 'The payment provider did not answer. Try again in a minute.',
  acquirer_not_configured: 'Payments are not set up on this service yet. Try again later or contact the shop.',
  currency_not_supported:
    'The payment provider does not take this deal’s currency. Ask the shop to make the deal again in roubles.',
  deal_engine_unavailable: 'We could not process the deal right now. Try again in a few seconds.',
  internalError: 'Something went wrong on our side. Try again later.',
  // Deal statuses, in words
  status_created: 'Registered, no documents yet',
  status_docs: 'Documents attached, approval not started yet',
  status_approval: 'Waiting for approval',
  status_approved: 'Terms approved, waiting for payment',
  status_rejected: 'Terms rejected',
  status_escrow_hold: 'Paid: the money is held in escrow',
  status_paid: 'Completed: the money was sent to the seller',
  status_refunded: 'Cancelled: the money was returned to the buyer',
  status_refunded_by_arbiter: 'Refunded by the arbiter’s decision: the money went back to the buyer',
  status_disputed: "Dispute open: waiting for the arbiter's decision",
  status_cancelled: 'Cancelled before payment',
  approval_pending: 'Waiting for a decision',
  approval_approved: 'Approved',
  approval_rejected: 'Rejected',
  payment_pending: 'Waiting for payment',
  payment_hold: 'Held in escrow',
  payment_released: 'Sent to the seller',
  payment_refunded: 'Returned to the buyer',
  payment_disputed: 'In dispute',
  kind_offer: 'Offer',
  kind_contract: 'Contract',
  kind_invoice: 'Invoice',
  kind_act: 'Certificate of completion',
  kind_waybill: 'Waybill',
};

export type MessageKey = keyof typeof en;

const ru: Record<MessageKey, string> = {
  appName: 'svc ID',
  navDeals: 'Сделки',
  navProfile: 'Профиль',
  navSecurity: 'Пароль и сеансы',
  navDataKeys: 'Ключи API данных',
  navSites: 'Подключённые сайты',
  navPayouts: 'Выплаты',
  switchLanguage: 'English',
  signOut: 'Выйти',
  signedInAs: 'Вы вошли как {email}',
  signInTitle: 'Вход',
  email: 'Электронная почта',
  password: 'Пароль',
  signInButton: 'Войти',
  wrongCredentials: 'Неверная электронная почта или пароль. Проверьте их и попробуйте ещё раз.',
  tooManyAttempts: 'Слишком много неверных паролей. Подождите {minutes} мин. и попробуйте снова.',
  signInHint: 'Впервые здесь? Откройте ссылку из письма-приглашения, чтобы задать пароль.',
  signedOut: 'Вы вышли из кабинета.',
  inviteTitle: 'Задайте пароль',
  inviteIntro: 'Придумайте пароль для кабинета. Входить вы будете по электронной почте и этому паролю.',
  inviteDeal_buyer: 'Маркетплейс {marketplace} открыл для вас безопасную сделку «{title}» на сумму {amount}.',
  inviteDeal_seller:
    'Маркетплейс {marketplace} открыл безопасную сделку «{title}» на сумму {amount}, в которой вы продавец.',
  inviteDeal_approver:
    'Маркетплейс {marketplace} просит вас согласовать условия безопасной сделки «{title}» на сумму {amount}.',
  inviteNext: 'Когда пароль будет задан, откроется сделка.',
  newPassword: 'Новый пароль',
  confirmPassword: 'Повторите пароль',
  passwordHint: 'Не короче {min} символов.',
  passwordsDiffer: 'Пароли не совпадают. Введите один и тот же пароль в оба поля.',
  passwordTooShort: 'Пароль слишком короткий: нужно не меньше {min} символов.',
  passwordTooLong: 'Пароль слишком длинный: не больше {max} символов.',
  setPasswordButton: 'Задать пароль и войти',
  inviteInvalidTitle: 'Ссылка-приглашение не работает',
  inviteInvalidText: 'Ссылка неполная, уже использована или старше 14 дней.',
  inviteInvalidSignIn: 'Если вы уже задали пароль, войдите по электронной почте и паролю.',
  inviteInvalidAsk: 'Иначе попросите магазин, в котором вы оформили заказ, прислать новое приглашение.',
  goToSignIn: 'Перейти ко входу',
  homeTitle: 'Мой кабинет',
  approvalsHeading: 'Согласования',
  noApprovals: 'Согласовывать нечего.',
  dealsHeading: 'Сделки',
  noDeals: 'Сделок пока нет: сделка появляется здесь, когда маркетплейс открывает её с вами.',
  dealsSearch: 'Название или номер заказа',
  anyStatus: 'Любой статус',
  anyRole: 'Любая роль',
  showDeals: 'Показать',
  filterRefunded: 'Возврат покупателю',
  untitled: 'Сделка без названия',
  amount: 'Сумма',
  status: 'Статус',
  documents: 'Документы',
  noDocuments: 'Документов нет.',
  download: 'Скачать',
  approve: 'Согласовать',
  readContract: 'Я прочитал(а) договор и документы этой сделки',
  readContractRequired:
    'Чтобы согласовать, сначала прочитайте договор и отметьте «Я прочитал(а) договор». Ничего не согласовано.',
  marketplace: 'Маркетплейс',
  reject: 'Отклонить',
  rejectComment: 'Причина отказа (необязательно)',
  openDeal: 'Открыть сделку',
  decidedAt: 'Решение принято {date}',
  startedAt: 'Начато {date}',
  seller: 'Продавец',
  description: 'Описание',
  approvalsHistory: 'История согласований',
  noApprovalHistory: 'Согласований пока не было.',
  approver: 'Согласующий',
  comment: 'Комментарий',
  paymentsHeading: 'Платежи',
  noPayments: 'Платежей пока нет.',
  escrowHeading: 'Безопасная сделка',
  noEscrowActions: 'Сейчас здесь ничего делать не нужно.',
  release: 'Перевести деньги продавцу',
  releaseHint: 'Сделайте это, когда получите заказ. Продавец получит деньги; отменить это нельзя.',
  refund: 'Отменить и вернуть деньги',
  refundHint: 'Сделка отменяется, деньги возвращаются вам.',
  dispute: 'Открыть спор',
  disputeHint: 'С заказом что-то не так: арбитр решит, получит ли деньги продавец или они вернутся вам.',
  payButton: 'Оплатить {amount}',
  payHint: 'Деньги надёжно удерживаются, пока вы не переведёте их продавцу, получив заказ.',
  paySandboxHint: 'Магазин работает в тестовом режиме (песочница): платёж тестовый, настоящие деньги не списываются.',
  testPayment: 'тестовый платёж (песочница)',
  alreadyHeld: 'Деньги уже удерживаются: платить больше ничего не нужно.',
  pendingPaymentNote: 'Если вы только что оплатили, подтверждение может занять минуту: обновите страницу.',
  disputeNote: 'Открыт спор: деньги удерживаются до решения арбитра. Сообщения и файлы можно добавить ниже.',
  backHome: 'Вернуться в кабинет',
  yourRole: 'Ваша роль',
  role_buyer: 'Покупатель',
  role_seller: 'Продавец',
  role_approver: 'Согласующий',
  buyer: 'Покупатель',
  sellerEscrowNote: 'Деньги удерживаются. Покупатель переведёт их вам, когда получит заказ; вы увидите это здесь.',
  confirm_release_title: 'Перевести деньги продавцу?',
  confirm_release_text:
    'Продавец получит {amount}. Отменить это нельзя: вернуть деньги вам потом не получится. Делайте это, только когда получили заказ.',
  confirm_release_button: 'Да, перевести деньги',
  confirm_refund_title: 'Отменить сделку и вернуть деньги?',
  confirm_refund_text: '{amount} вернутся вам, и сделка завершится. Возобновить её потом нельзя.',
  confirm_refund_button: 'Да, отменить и вернуть',
  confirm_dispute_title: 'Открыть спор?',
  confirm_dispute_text:
    'Деньги ({amount}) остаются удержанными, пока арбитр не решит, получит ли их продавец или они вернутся вам. Продавец и арбитр прочитают вашу причину, обе стороны смогут добавлять сообщения и файлы.',
  confirm_dispute_button: 'Открыть спор',
  confirmCancel: 'Нет, вернуться к сделке',
  disputeReason: 'Почему вы открываете спор? (обязательно)',
  textLimitHint: 'Не больше {max} символов.',
  reasonTooLong: 'Причина слишком длинная: не больше {max} символов.',
  disputeHeading: 'Спор',
  dispute_open: 'Открыт: ожидается решение арбитра',
  dispute_decided: 'Решён',
  disputeOpened: 'Открыт',
  reason: 'Причина',
  messagesHeading: 'Сообщения',
  noMessages: 'Сообщений пока нет.',
  author_buyer: 'Покупатель',
  author_seller: 'Продавец',
  author_marketplace: 'Маркетплейс',
  author_arbiter: 'Арбитр',
  you: '(вы)',
  decisionHeading: 'Решение арбитра',
  outcome_release: 'Деньги переводятся продавцу',
  outcome_refund: 'Деньги возвращаются покупателю',
  addMessageHeading: 'Добавить сообщение',
  messageText: 'Сообщение',
  messageFiles: 'Файлы (необязательно): до {count}, каждый до {size} МБ',
  sendMessage: 'Отправить сообщение',
  messageBlank: 'Напишите сообщение: оно не может быть пустым.',
  messageEmpty: 'Напишите сообщение или приложите фото или файл: пустое сообщение отправить нельзя.',
  messageTextOptional: 'Сообщение (можно не писать, если приложен файл)',
  messageTooLong: 'Сообщение слишком длинное: не больше {max} символов.',
  tooManyFiles: 'Приложите не больше {count} файлов.',
  fileTooLarge: 'Каждый файл может быть не больше {size} МБ.',
  payload_too_large: 'Файлы вместе слишком большие. Отправьте меньше файлов или файлы поменьше.',
  reason_required: 'Напишите, почему вы открываете спор: причина обязательна.',
  no_open_dispute: 'В этой сделке нет открытого спора, поэтому сообщение добавить нельзя.',
  payoutsTitle: 'Выплаты',
  payoutsIntro:
    'Куда переводить деньги за ваши продажи, когда их переведут вам. Это действует во всех сделках, где вы продавец; изменить можно в любой момент.',
  payoutCurrent: 'Выплаты приходят на: {title}',
  payoutCurrentSince: 'Указано {date}.',
  payoutNone: 'Вы ещё не указали, куда переводить выплаты. Переведённые вам деньги ждут, пока вы это не сделаете.',
  payoutTestHeading: 'Магазины в тестовом режиме (песочница): тестовая карта',
  payoutTestText:
    'Магазины в тестовом режиме переводят выплаты на тестовую карту, настоящие деньги не движутся. Есть две тестовые карты:',
  payoutTestGood: '4111 1111 1111 1111 — выплата проходит.',
  payoutTestDeclined: '4000 0000 0000 0002 — банк отклоняет выплату, чтобы увидеть, что тогда происходит.',
  payoutTestCard: 'Номер тестовой карты',
  payoutLiveHeading: 'Настоящие магазины: ваша карта или кошелёк ЮMoney',
  payoutLiveText:
    'Карта указывается через виджет выплат ЮKassa: номер карты вводится там, а не здесь, и виджет возвращает токен (payout_token), заменяющий карту. Вставьте этот токен ниже. Кошелёк ЮMoney указывается номером.',
  payoutLiveType: 'Куда переводить',
  payoutType_bank_card: 'Банковская карта (токен из виджета выплат)',
  payoutType_yoo_money: 'Кошелёк ЮMoney (его номер)',
  payoutToken: 'Токен из виджета выплат или номер кошелька',
  payoutSecretHint: 'Хранится в зашифрованном виде; потом видны только последние четыре символа.',
  payoutSave: 'Сохранить',
  payoutWaitingHeading: 'Сделки, ожидающие выплаты',
  payoutWaitingNone: 'Выплаты не ждёт ни одна сделка.',
  payoutEmpty: 'Заполните номер карты, токен или номер кошелька.',
  payoutBad_test_card:
    'Это не тестовая карта. Используйте 4111 1111 1111 1111 (выплата проходит) или 4000 0000 0000 0002 (выплату отклоняют).',
  payoutBad_bank_card:
    'Это не токен из виджета выплат ЮKassa. Вставьте токен, который выдал виджет (буквы, цифры, точки и дефисы).',
  payoutBad_yoo_money: 'Номер кошелька ЮMoney — от 11 до 20 цифр.',
  payoutCardNumber:
    'Похоже на номер карты. Никогда не вводите номер карты здесь: введите его в виджете выплат ЮKassa и вставьте токен, который он выдаст.',
  done_payout_saved:
    'Сохранено: выплаты приходят на {title}. Сделки, ожидающие выплаты или с неудавшейся выплатой, выплачиваются туда сейчас.',
  deliveryHeading: 'Доставка',
  shippedOn: 'Отправлено {date}',
  carrier: 'Служба доставки',
  tracking: 'Трек-номер',
  deliveredOn: 'Доставлено {date}',
  notDeliveredYet: 'Ещё не доставлено',
  notShippedYet: 'Ещё не отправлено. Когда отправите заказ, отметьте это здесь.',
  inspectionBuyer:
    'Проверьте полученное. Открыть спор можно до {date}; после этого деньги автоматически уйдут продавцу.',
  inspectionSeller: 'Покупатель может открыть спор до {date}; после этого деньги автоматически переводятся вам.',
  shippedBuyerNote: 'Заказ в пути: вернуть деньги без арбитра уже нельзя. Если что-то не так, откройте спор.',
  shipHeading: 'Отметить, что заказ отправлен',
  shipCarrier: 'Служба доставки (необязательно)',
  shipTracking: 'Трек-номер (необязательно)',
  shipButton: 'Отметить отправку…',
  shipHint: 'Покупатель и магазин узнают, что заказ в пути. Подтвердить нужно на следующей странице.',
  confirm_ship_title: 'Отметить, что заказ отправлен?',
  confirm_ship_text:
    'Покупатель и магазин узнают, что заказ в пути. Отменить это нельзя: после этого покупатель уже не сможет сам отменить сделку и вернуть деньги, только открыть спор.',
  confirm_ship_button: 'Да, заказ отправлен',
  done_shipped: 'Отправка отмечена: покупатель и магазин уведомлены.',
  releasedAmount: 'Переведено продавцу',
  refundedAmount: 'Возвращено покупателю',
  payoutHeading: 'Выплата',
  payout_awaiting_destination: 'Деньги переведены вам и ждут, пока вы укажете карту для выплат.',
  payout_addCard: 'Укажите её на странице «Выплаты»',
  payout_pending: 'Выплата {amount} в пути на {title}.',
  payout_succeeded: 'Выплачено на {title}: {amount}.',
  payout_failed: 'Выплата не прошла: {reason}.',
  payout_giveAnother: 'Укажите другую карту на странице «Выплаты»',
  payout_failedHint: 'Деньги удерживаются для вас и будут отправлены снова, как только вы укажете другую карту.',
  payoutReason_card_declined: 'банк отклонил карту',
  payoutItem_pending: 'в пути',
  payoutItem_succeeded: 'выплачено',
  payoutItem_failed: 'не прошла',
  shipped_dispute_instead:
    'Заказ уже отправлен: сами отменить сделку и вернуть деньги вы больше не можете. Откройте спор — решит арбитр.',
  invalid_delivery_state: 'Сейчас нельзя отметить отправку: она уже отмечена или деньги не удерживаются.',
  shipFieldTooLong: 'Служба доставки и трек-номер — не больше {max} символов каждое.',
  done_approved: 'Вы согласовали условия.',
  done_rejected: 'Вы отклонили условия.',
  done_released: 'Деньги переведены продавцу.',
  done_refunded: 'Сделка отменена, деньги возвращены.',
  done_disputed: 'Спор открыт. Деньги удерживаются до решения арбитра.',
  done_message_sent: 'Ваше сообщение добавлено в спор.',
  done_test_payment_held: 'Тестовый платёж: деньги удерживаются (песочница). Настоящие деньги не списывались.',
  errorTitle: 'Что-то пошло не так',
  notFoundTitle: 'Не найдено',
  notFound: 'Такой страницы нет, или она относится к другой учётной записи.',
  forbiddenTitle: 'Форма устарела',
  csrfFailed: 'Ради вашей безопасности форма не принята. Вернитесь назад, обновите страницу и попробуйте снова.',
  forbidden: 'Вашей роли это не разрешено. Обратитесь к администратору с ролью admin.',
  commentTooLong: 'Комментарий слишком длинный: не больше {max} символов.',
  badForm: 'Не удалось прочитать форму. Обновите страницу и попробуйте снова.',
  disputeOpenRefusal:
    'По сделке открыт спор: деньги теперь переводит только решение арбитра. Текущее состояние сделки показано ниже.',
  approval_not_pending: 'По этому согласованию решение уже принято.',
  invalid_payment_state: 'Сейчас платёж нельзя перевести в это состояние. Его текущее состояние показано ниже.',
  deal_closed: 'Сделка закрыта и больше не меняется.',
  deal_not_approved: 'Условия ещё не согласованы.',
  acquirer_refused: 'Платёжная система отказала в операции. Попробуйте позже или обратитесь в поддержку.',
  acquirer_unavailable: 'Платёжная система не ответила. Попробуйте через минуту.',
  acquirer_not_configured: 'Оплата на этом сервисе ещё не настроена. Попробуйте позже или обратитесь в магазин.',
  currency_not_supported:
    'Платёжная система не принимает валюту этой сделки. Попросите магазин оформить сделку заново в рублях.',
  deal_engine_unavailable: 'Сейчас не удалось обработать сделку. Попробуйте через несколько секунд.',
  internalError: 'На нашей стороне что-то пошло не так. Попробуйте позже.',
  status_created: 'Зарегистрирована, документов пока нет',
  status_docs: 'Документы приложены, согласование ещё не начато',
  status_approval: 'Ожидает согласования',
  status_approved: 'Условия согласованы, ожидается оплата',
  status_rejected: 'Условия отклонены',
  status_escrow_hold: 'Оплачено: деньги удерживаются на безопасной сделке',
  status_paid: 'Завершена: деньги переведены продавцу',
  status_refunded: 'Отменена: деньги возвращены покупателю',
  status_refunded_by_arbiter: 'Деньги возвращены покупателю по решению арбитра',
  status_disputed: 'Открыт спор: ожидается решение арбитра',
  status_cancelled: 'Отменена до оплаты',
  approval_pending: 'Ожидает решения',
  approval_approved: 'Согласовано',
  approval_rejected: 'Отклонено',
  payment_pending: 'Ожидает оплаты',
  payment_hold: 'Удерживается',
  payment_released: 'Переведено продавцу',
  payment_refunded: 'Возвращено покупателю',
  payment_disputed: 'Спор',
  kind_offer: 'Оферта',
  kind_contract: 'Договор',
  kind_invoice: 'Счёт',
  kind_act: 'Акт',
  kind_waybill: 'Накладная',
};

const MESSAGES: Record<Lang, Record<MessageKey, string>> = { en, ru };

export function isLang(value: unknown): value is Lang {
  return value === 'en' || value === 'ru';
}

export function isMessageKey(value: string): value is MessageKey {
  return Object.hasOwn(en, value);
}

/** Russian when the Accept-Language header ranks Russian above English; English otherwise. */
export function preferredLang(acceptLanguage: string): Lang {
  const weight: Record<Lang | '*', number> = { en: -1, ru: -1, '*': -1 };
  for (const item of acceptLanguage.split(',')) {
    const [range = '', ...params] = item.trim().toLowerCase().split(';');
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith('q='))
        ?.slice(2) ?? 1,
    );
    const base = range.split('-')[0] as Lang | '*';
    if (base in weight && Number.isFinite(q)) weight[base] = Math.max(weight[base], q);
  }
  const ru = weight.ru >= 0 ? weight.ru : weight['*'];
  const enWeight = weight.en >= 0 ? weight.en : weight['*'];
  return ru > 0 && ru > enWeight ? 'ru' : 'en';
}

export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;

export function translator(lang: Lang): Translate {
  return (key, values = {}) =>
    MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole));
}

export const statusWords = (t: Translate, status: DealStatus) => t(`status_${status}`);
export const paymentWords = (t: Translate, status: PaymentStatus) => t(`payment_${status}`);
export const kindWords = (t: Translate, kind: DocumentKind) => t(`kind_${kind}`);

/** The locale whose conventions a language's numbers and dates follow. */
const localeOf = (lang: Lang) => (lang === 'ru' ? 'ru-RU' : 'en-GB');

/**
 * Intl builds a formatter far slower than it formats with one (tens of microseconds against under one), and a page or
 * a mail formats several values: each formatter is built once per process. Their keys are few: currencies and time
 * zones the service stores, and a formatter Intl refuses to build (a currency or a zone it does not know) throws here
 * and is not kept.
 */
function formatter<F>(cache: Map<string, F>, key: string, build: () => F): F {
  let made = cache.get(key);
  if (!made) {
    made = build();
    cache.set(key, made);
  }
  return made;
}
const sizeFormats = new Map<string, Intl.NumberFormat>();
const moneyFormats = new Map<string, Intl.NumberFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();

/** A file's size as people read it: bytes, KB or MB with one decimal. */
export function formatSize(lang: Lang, bytes: number): string {
  const [value, unit] =
    bytes < 1024
      ? [bytes, lang === 'ru' ? 'Б' : 'B']
      : bytes < 1024 * 1024
        ? [bytes / 1024, lang === 'ru' ? 'КБ' : 'KB']
        : [bytes / 1024 / 1024, lang === 'ru' ? 'МБ' : 'MB'];
  const format = formatter(
    sizeFormats,
    localeOf(lang),
    () => new Intl.NumberFormat(localeOf(lang), { maximumFractionDigits: 1 }),
  );
  return `${format.format(value)} ${unit}`;
}

/** An amount as people write it in this language, e.g. "1 500,50 ₽" or "RUB 1,500.50". */
export function formatMoney(lang: Lang, amount: number, currency: string): string {
  try {
    const format = formatter(
      moneyFormats,
      `${localeOf(lang)} ${currency}`,
      () => new Intl.NumberFormat(localeOf(lang), { style: 'currency', currency }),
    );
    return format.format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/**
 * The zone every shown time is in: the service's people are mostly in Moscow, and one zone for everyone means a page,
 * a mail and a colleague's screen name the same moment the same way.
 */
export const READER_TIME_ZONE = 'Europe/Moscow';

/**
 * A moment as every page and mail shows it: one format, in the reader's time zone (Moscow time unless their profile
 * names another), the zone named ("мск", "Moscow time", or the zone's IANA name).
 */
export function formatDate(lang: Lang, iso: string, timeZone: string | null = READER_TIME_ZONE): string {
  const zone = timeZone ?? READER_TIME_ZONE;
  const format = formatter(
    dateFormats,
    `${localeOf(lang)} ${zone}`,
    () => new Intl.DateTimeFormat(localeOf(lang), { dateStyle: 'medium', timeStyle: 'short', timeZone: zone }),
  );
  const text = format.format(new Date(iso));
  const named = zone === READER_TIME_ZONE ? (lang === 'ru' ? 'мск' : 'Moscow time') : zone.replace(/_/g, ' ');
  return `${text} ${named}`;
}

/** The IANA name of a time zone Intl knows, in its canonical spelling; undefined for anything else. */
export function canonicalTimeZone(value: string): string | undefined {
  // Intl also takes offsets (+03:00) and legacy abbreviations; only Area/City names and UTC are offered to people.
  if (!/^(UTC|[A-Za-z]+(\/[A-Za-z0-9_+-]+){1,2})$/.test(value) || value.length > 64) return undefined;
  try {
    return new Intl.DateTimeFormat('en', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** The time zones a person may choose from, by the names canonicalTimeZone stores (ICU's canonical spelling). */
export const TIME_ZONES: readonly string[] = [
  ...new Set(Intl.supportedValuesOf('timeZone').map((zone) => canonicalTimeZone(zone) ?? zone)),
].sort();
