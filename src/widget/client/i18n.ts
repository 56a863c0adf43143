// Everything the widget says, in Russian and English. Errors are in words a buyer can act on, never codes.
export type Locale = 'ru' | 'en';

const en = {
  brand: 'Safe deal',
  intro: 'Pay safely: your money is held until you confirm the deal.',
  about: 'Safe deal: the seller gets your money only after you confirm the order.',
  loading: 'Checking this order…',
  stepContract: 'Contract',
  stepApproval: 'Approval',
  stepPayment: 'Payment',
  stepHeld: 'Money held',
  continue: 'Continue',
  startText:
    'Press Continue: we prepare the contract for this purchase and put it in your cabinet for you to approve. Nothing is paid yet.',
  approveText: 'The contract is in your cabinet. Approve it there.',
  invitedText: 'We sent a mail about this deal to {email}: open it to continue in your cabinet.',
  approveLink: 'Approve in your cabinet',
  waiting: 'Waiting for your approval…',
  rejectedText: 'You rejected the terms. Press Continue to send them for approval again.',
  payText: 'The terms are approved. Pay {amount}: the money is held until you confirm the deal.',
  pay: 'Pay safely',
  payTest: 'Pay safely (test)',
  testMode: 'Test mode',
  testText: 'Test mode: this shop is not live yet, so no real money is taken.',
  readContract: 'Read the contract',
  finishText: 'The payment has started but is not finished yet.',
  finishPayment: 'Finish the payment',
  heldTitle: 'The money is held in escrow',
  heldText: 'The seller gets it after you confirm the deal in your cabinet.',
  openCabinet: 'Open your cabinet',
  paidText: 'The deal is complete: the seller has been paid.',
  refundedText: 'The deal was cancelled and the money returned to you.',
  disputedText: 'A dispute is open; an arbiter will decide.',
  cancelledText: 'This order was cancelled. No money was taken from you.',
  busy: 'One moment…',
  status: 'Status: {text}',
  errSetup: 'This shop has not set up safe deals correctly. Please tell the shop.',
  errNetwork: 'We could not reach the safe-deal service. Check your connection and try again.',
  errBusy: 'The service is busy. Try again in a few seconds.',
  errRate: 'Too many attempts. Wait a minute and try again.',
  errNotApproved: 'Approve the terms in your cabinet first, then pay.',
  errAcquirer: 'The payment service is not answering. Try again in a minute.',
  errConflict:
    'This order is registered with other details (the buyer’s e-mail, the amount…). Check them or ask the shop.',
  errOther: 'Something went wrong. Try again in a few minutes.',
};

export type MessageKey = keyof typeof en;

const ru: Record<MessageKey, string> = {
  brand: 'Безопасная сделка',
  intro: 'Оплатите безопасно: деньги резервируются, пока вы не подтвердите сделку.',
  about: 'Безопасная сделка: продавец получит деньги только после того, как вы подтвердите заказ.',
  loading: 'Проверяем заказ…',
  stepContract: 'Договор',
  stepApproval: 'Согласование',
  stepPayment: 'Оплата',
  stepHeld: 'Деньги в резерве',
  continue: 'Продолжить',
  startText:
    'Нажмите «Продолжить»: мы подготовим договор на эту покупку и положим его в ваш личный кабинет на согласование. Платить пока ничего не нужно.',
  approveText: 'Договор в вашем личном кабинете. Согласуйте его там.',
  invitedText: 'Мы отправили письмо об этой сделке на {email}: откройте его, чтобы продолжить в кабинете.',
  approveLink: 'Согласовать в личном кабинете',
  waiting: 'Ждём вашего согласования…',
  rejectedText: 'Вы отклонили условия. Нажмите «Продолжить», чтобы снова отправить их на согласование.',
  payText: 'Условия согласованы. Оплатите {amount}: деньги резервируются, пока вы не подтвердите сделку.',
  pay: 'Оплатить безопасно',
  payTest: 'Оплатить безопасно (тест)',
  testMode: 'Тестовый режим',
  testText: 'Тестовый режим: магазин ещё не подключён к оплате, настоящие деньги не списываются.',
  readContract: 'Прочитать договор',
  finishText: 'Оплата начата, но ещё не завершена.',
  finishPayment: 'Завершить оплату',
  heldTitle: 'Деньги зарезервированы',
  heldText: 'Продавец получит их после того, как вы подтвердите сделку в личном кабинете.',
  openCabinet: 'Открыть личный кабинет',
  paidText: 'Сделка завершена: продавец получил оплату.',
  refundedText: 'Сделка отменена, деньги вернулись к вам.',
  disputedText: 'Открыт спор; решение примет арбитр.',
  cancelledText: 'Заказ отменён. Деньги с вас не списаны.',
  busy: 'Минутку…',
  status: 'Статус: {text}',
  errSetup: 'Магазин неправильно настроил безопасную сделку. Пожалуйста, сообщите магазину.',
  errNetwork: 'Не удалось связаться с сервисом безопасной сделки. Проверьте соединение и попробуйте ещё раз.',
  errBusy: 'Сервис занят. Попробуйте через несколько секунд.',
  errRate: 'Слишком много попыток. Подождите минуту и попробуйте снова.',
  errNotApproved: 'Сначала согласуйте условия в личном кабинете, затем оплатите.',
  errAcquirer: 'Платёжный сервис не отвечает. Попробуйте через минуту.',
  errConflict:
    'Этот заказ оформлен с другими данными (e-mail покупателя, сумма…). Проверьте их или обратитесь в магазин.',
  errOther: 'Что-то пошло не так. Попробуйте через несколько минут.',
};

const DICTIONARIES: Record<Locale, Record<MessageKey, string>> = { en, ru };

export type Translate = (key: MessageKey, values?: Record<string, string>) => string;

export function translator(locale: Locale): Translate {
  const words = DICTIONARIES[locale];
  return (key, values = {}) => words[key].replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '');
}

/** The problem `code` (or a network failure) as a sentence for the buyer. */
export function errorMessage(code: string, status: number): MessageKey {
  if (code === 'network') return 'errNetwork';
  if (code === 'rate_limited') return 'errRate';
  if (code === 'deal_not_approved') return 'errNotApproved';
  if (code === 'deal_conflict') return 'errConflict';
  if (code.startsWith('acquirer_')) return 'errAcquirer';
  if (code === 'validation_failed' || code === 'origin_not_allowed' || code === 'unauthorized' || code === 'setup')
    return 'errSetup';
  if (status === 503) return 'errBusy';
  return 'errOther';
}

export function formatMoney(amount: number, currency: string, locale: Locale): string {
  try {
    return new Intl.NumberFormat(locale === 'ru' ? 'ru-RU' : 'en-US', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount} ${currency}`; // a currency code Intl does not know
  }
}
