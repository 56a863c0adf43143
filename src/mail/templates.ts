// Every mail the service sends about accounts and deals, in Russian and English, as plain text. One place, so each mail
// names the marketplace and links to the deal page the same way; both languages fill one typed table, so a mail missing
// in either fails type-checking. What was sent is in the outbox (GET /admin/mail).
import type { ActorKind, DisputeAuthor } from '../deals/model.ts';
import { formatDate, formatMoney, type Lang } from '../web/i18n.ts';

export interface Mail {
  subject: string;
  text: string;
}

/** The cabinet page of one deal, where every deal mail leads. */
export const dealPageUrl = (baseUrl: string, dealId: string): string => `${baseUrl}/cabinet/view/deals/${dealId}`;

export interface InvitationInput {
  role: 'buyer' | 'seller' | 'approver';
  locale: Lang;
  /** The invitee's name, '' when unknown. */
  name: string;
  svcId: string;
  dealTitle: string;
  marketplaceName: string;
  /** The set-password link. */
  link: string;
  dealUrl: string;
}

/** What every deal notice says about the deal. */
export interface DealFacts {
  marketplaceName: string;
  title: string;
  /** The deal's amount, or the payment's in mails about money. */
  amount: number;
  currency: string;
  url: string;
}

export type Party = 'buyer' | 'seller';

/** One mail of a deal's step, with what its text needs. A reason is left out of the text when blank. */
export type DealNoticeMail =
  | { kind: 'new_deal'; role: Party }
  | { kind: 'approval_requested' }
  | { kind: 'approved' }
  | { kind: 'rejected'; comment: string }
  | { kind: 'money_held'; role: Party }
  | { kind: 'released'; role: Party; actor?: ActorKind }
  | { kind: 'refunded'; role: Party; actor?: ActorKind; reason?: string }
  | { kind: 'dispute_opened'; actor?: ActorKind; reason?: string }
  | { kind: 'dispute_decided'; role: Party; outcome: 'release' | 'refund'; reason?: string }
  | { kind: 'cancelled'; actor?: ActorKind; reason?: string }
  | { kind: 'dispute_message'; author: DisputeAuthor; text: string }
  | { kind: 'shipped'; carrier: string; tracking: string }
  | { kind: 'delivered'; inspection_ends_at: string | null }
  | { kind: 'inspection_reminder'; inspection_ends_at: string }
  | { kind: 'payout_sent'; amount: number; currency: string; destination: string }
  | { kind: 'payout_failed'; amount: number; currency: string; destination: string; failure: string }
  | { kind: 'payout_destination_needed' }
  | { kind: 'partially_refunded'; role: Party; amount: number; currency: string; reason?: string };

type DealNoticeKind = DealNoticeMail['kind'];
/** The steps that say who made the move. */
type MoveKind = Extract<DealNoticeMail, { actor?: ActorKind }>['kind'];

/** The deal as a template quotes it: the title already in the language's quotes (empty when untitled), the amount formatted. */
interface Quoted {
  marketplace: string;
  title: string;
  amount: string;
  /** The recipient's time zone for the times a mail names (null: Moscow time). */
  timeZone: string | null;
}

type Notice<K extends DealNoticeKind> = (
  deal: Quoted,
  notice: Extract<DealNoticeMail, { kind: K }>,
) => { subject: string; body: string[] };

interface Words {
  greeting(name: string): string;
  /** ` "title"` in the language's quotes, '' for an untitled deal. */
  quote(title: string): string;
  actor(actor: ActorKind, marketplace: string): string;
  author(author: DisputeAuthor, marketplace: string): string;
  /** "Refunded by" and the like, before the actor. */
  by: Record<MoveKind, string>;
  reason: string;
  arbiterReason: string;
  openDeal: string;
  marketplace: string;
  invitation: {
    subject: string;
    /** `title` as quote() gives it. */
    opening: Record<InvitationInput['role'], (marketplace: string, title: string) => string>;
    account(svcId: string): string;
  };
  notices: { [K in DealNoticeKind]: Notice<K> };
}

const en: Words = {
  greeting: (name) => (name ? `Hello ${name},` : 'Hello,'),
  quote: (title) => (title ? ` "${title}"` : ''),
  actor: (actor, marketplace) =>
    ({
      buyer: 'the buyer',
      seller: 'the seller',
      marketplace: `the marketplace ${marketplace}`,
      administrator: 'the service administrator',
      arbiter: 'the arbiter',
      acquirer: 'the payment provider',
      system: 'the service, automatically',
    })[actor],
  author: (author, marketplace) =>
    ({
      buyer: 'The buyer',
      seller: 'The seller',
      marketplace: `The marketplace ${marketplace}`,
      arbiter: 'The arbiter',
    })[author],
  by: { refunded: 'Refunded by', released: 'Released by', dispute_opened: 'Opened by', cancelled: 'Cancelled by' },
  reason: 'Reason',
  arbiterReason: "The arbiter's reason",
  openDeal: 'Open the deal',
  marketplace: 'Marketplace',
  invitation: {
    subject: 'your account for safe deals',
    opening: {
      buyer: (marketplace, title) => `The marketplace ${marketplace} has opened a safe deal for you${colon(title)}`,
      seller: (marketplace, title) =>
        `The marketplace ${marketplace} has opened a safe deal with you as the seller${colon(title)}`,
      approver: (marketplace, title) =>
        `You are asked to approve the terms of a safe deal on ${marketplace}${colon(title)}`,
    },
    account: (svcId) => `Your account (svc ID ${svcId}) is ready. Set a password to open your cabinet:`,
  },
  notices: {
    new_deal: (d, n) => ({
      subject: `new safe deal${d.title}`,
      body: [
        n.role === 'buyer'
          ? `The marketplace ${d.marketplace} has opened a safe deal for you${colon(d.title)}, ${d.amount}.`
          : `The marketplace ${d.marketplace} has opened a safe deal with you as the seller${colon(d.title)}, ${d.amount}.`,
      ],
    }),
    approval_requested: (d) => ({
      subject: `please approve the terms of the deal${d.title}`,
      body: [
        `You are asked to approve the terms of the safe deal${d.title}, ${d.amount}.`,
        'Read its documents and approve or reject them in your cabinet.',
      ],
    }),
    approved: (d) => ({
      subject: `the buyer approved the deal${d.title}`,
      body: [
        `The buyer approved the terms of the deal${d.title}. Next the buyer pays ${d.amount}, held in escrow until the deal is done.`,
      ],
    }),
    rejected: (d, n) => ({
      subject: `the buyer rejected the deal${d.title}`,
      body: [
        `The buyer rejected the terms of the deal${d.title}.`,
        n.comment.trim() ? `The buyer's comment: ${n.comment.trim()}` : 'The buyer left no comment.',
      ],
    }),
    money_held: (d, n) => ({
      subject: `money held for the deal${d.title}`,
      body: [
        n.role === 'buyer'
          ? `Your payment for the deal${d.title}, ${d.amount}, is held in escrow. The seller gets it only when you release it; if something goes wrong, open a dispute on the deal page.`
          : `The buyer's payment for the deal${d.title}, ${d.amount}, is held in escrow. You can fulfil the order: the money is released to you when the buyer confirms.`,
      ],
    }),
    released: (d, n) => ({
      subject: `money released for the deal${d.title}`,
      body: [
        n.role === 'buyer'
          ? `The money for the deal${d.title}, ${d.amount}, has been released to the seller. The deal is complete.`
          : `The buyer's money for the deal${d.title}, ${d.amount}, has been released to you. The deal is complete.`,
      ],
    }),
    refunded: (d, n) => ({
      subject: `money returned for the deal${d.title}`,
      body: [
        n.role === 'buyer'
          ? `The deal${d.title} was cancelled and your money, ${d.amount}, returned to you.`
          : `The deal${d.title} was cancelled and the buyer's money, ${d.amount}, returned to the buyer.`,
      ],
    }),
    dispute_opened: (d) => ({
      subject: `dispute opened on the deal${d.title}`,
      body: [
        `A dispute has been opened on the deal${d.title}. The money, ${d.amount}, stays held until the arbiter decides.`,
        'Add your messages and evidence on the deal page.',
      ],
    }),
    dispute_decided: (d, n) => ({
      subject: `the arbiter decided the dispute on the deal${d.title}`,
      body: [
        `The arbiter has decided the dispute on the deal${d.title}: ` +
          {
            release: {
              buyer: `the money, ${d.amount}, goes to the seller.`,
              seller: `the money, ${d.amount}, is released to you.`,
            },
            refund: {
              buyer: `the money, ${d.amount}, is returned to you.`,
              seller: `the money, ${d.amount}, is returned to the buyer.`,
            },
          }[n.outcome][n.role],
      ],
    }),
    cancelled: (d) => ({
      subject: `the deal${d.title} was cancelled`,
      body: [`The deal${d.title} was cancelled before payment. No money was taken.`],
    }),
    dispute_message: (d, n) => ({
      subject: `new message in the dispute on the deal${d.title}`,
      // A message may be files alone: then it says so rather than quoting nothing.
      body: n.text.trim()
        ? [`${en.author(n.author, d.marketplace)} wrote in the dispute on the deal${d.title}:`, quoteLines(n.text)]
        : [
            `${en.author(n.author, d.marketplace)} added files to the dispute on the deal${d.title}. See them on the deal page.`,
          ],
    }),
    shipped: (d, n) => ({
      subject: `the order of the deal${d.title} is shipped`,
      body: [
        `The seller has shipped the order of the deal${d.title}.${n.carrier ? ` Carrier: ${n.carrier}.` : ''}${n.tracking ? ` Tracking number: ${n.tracking}.` : ''}`,
        'From now on only a dispute can stop the release of the money: if the order does not arrive or is not as agreed, open one on the deal page.',
      ],
    }),
    delivered: (d, n) => ({
      subject: `the order of the deal${d.title} is delivered`,
      body: [
        n.inspection_ends_at
          ? `The order of the deal${d.title} is delivered. Check it: if something is wrong, open a dispute before ${when('en', n.inspection_ends_at, d.timeZone)}; after that the money, ${d.amount}, is released to the seller automatically.`
          : `The order of the deal${d.title} is delivered, and the money, ${d.amount}, is released to the seller.`,
      ],
    }),
    inspection_reminder: (d, n) => ({
      subject: `one day left to check the order of the deal${d.title}`,
      body: [
        `The time to check the order of the deal${d.title} ends ${when('en', n.inspection_ends_at, d.timeZone)}. If something is wrong, open a dispute on the deal page before then; otherwise the money, ${d.amount}, is released to the seller.`,
      ],
    }),
    payout_sent: (d, n) => ({
      subject: `payout sent for the deal${d.title}`,
      body: [`${formatMoney('en', n.amount, n.currency)} for the deal${d.title} was paid out to ${n.destination}.`],
    }),
    payout_failed: (d, n) => ({
      subject: `the payout for the deal${d.title} failed`,
      body: [
        `The payout of ${formatMoney('en', n.amount, n.currency)} for the deal${d.title} to ${n.destination} failed (${n.failure}).`,
        'The money stays held for you. Give another payout destination in your cabinet (Payouts), and the payout is made again.',
      ],
    }),
    payout_destination_needed: (d) => ({
      subject: `where should we pay you for the deal${d.title}?`,
      body: [
        `The money for the deal${d.title} is released to you. Add a card for payouts in your cabinet (Payouts), and it is paid out at once.`,
      ],
    }),
    partially_refunded: (d, n) => ({
      subject: `part of the money returned for the deal${d.title}`,
      body: [
        n.role === 'buyer'
          ? `${formatMoney('en', n.amount, n.currency)} of your payment for the deal${d.title} was returned to you, as agreed. The rest stays held.`
          : `${formatMoney('en', n.amount, n.currency)} of the buyer's payment for the deal${d.title} was returned to the buyer, as agreed. The rest stays held for you.`,
      ],
    }),
  },
};

const ru: Words = {
  greeting: (name) => (name ? `Здравствуйте, ${name}!` : 'Здравствуйте!'),
  quote: (title) => (title ? ` «${title}»` : ''),
  actor: (actor, marketplace) =>
    ({
      buyer: 'покупатель',
      seller: 'продавец',
      marketplace: `маркетплейс ${marketplace}`,
      administrator: 'администратор сервиса',
      arbiter: 'арбитр',
      acquirer: 'платёжный провайдер',
      system: 'сервис, автоматически',
    })[actor],
  author: (author, marketplace) =>
    ({ buyer: 'Покупатель', seller: 'Продавец', marketplace: `Маркетплейс ${marketplace}`, arbiter: 'Арбитр' })[author],
  by: { refunded: 'Кто вернул', released: 'Кто перевёл', dispute_opened: 'Кто открыл', cancelled: 'Кто отменил' },
  reason: 'Причина',
  arbiterReason: 'Обоснование арбитра',
  openDeal: 'Открыть сделку',
  marketplace: 'Маркетплейс',
  invitation: {
    subject: 'ваша учётная запись для безопасных сделок',
    opening: {
      buyer: (marketplace, title) => `Маркетплейс ${marketplace} открыл для вас безопасную сделку${title}`,
      seller: (marketplace, title) =>
        `Маркетплейс ${marketplace} открыл безопасную сделку${title}, в которой вы продавец`,
      approver: (marketplace, title) => `Вас просят согласовать условия безопасной сделки${title} на ${marketplace}`,
    },
    account: (svcId) => `Ваша учётная запись (svc ID ${svcId}) готова. Задайте пароль, чтобы войти в личный кабинет:`,
  },
  notices: {
    new_deal: (d, n) => ({
      subject: `новая безопасная сделка${d.title}`,
      body: [
        n.role === 'buyer'
          ? `Маркетплейс ${d.marketplace} открыл для вас безопасную сделку${d.title} на сумму ${d.amount}.`
          : `Маркетплейс ${d.marketplace} открыл безопасную сделку${d.title} на сумму ${d.amount}, в которой вы продавец.`,
      ],
    }),
    approval_requested: (d) => ({
      subject: `согласуйте условия сделки${d.title}`,
      body: [
        `Вас просят согласовать условия безопасной сделки${d.title} на сумму ${d.amount}.`,
        'Прочитайте документы и согласуйте или отклоните их в личном кабинете.',
      ],
    }),
    approved: (d) => ({
      subject: `покупатель согласовал сделку${d.title}`,
      body: [
        `Покупатель согласовал условия сделки${d.title}. Дальше он оплачивает ${d.amount}; деньги будут зарезервированы до завершения сделки.`,
      ],
    }),
    rejected: (d, n) => ({
      subject: `покупатель отклонил сделку${d.title}`,
      body: [
        `Покупатель отклонил условия сделки${d.title}.`,
        n.comment.trim() ? `Комментарий покупателя: ${n.comment.trim()}` : 'Покупатель не оставил комментария.',
      ],
    }),
    money_held: (d, n) => ({
      subject: `деньги по сделке${d.title} зарезервированы`,
      body: [
        n.role === 'buyer'
          ? `Ваш платёж по сделке${d.title}, ${d.amount}, зарезервирован. Продавец получит деньги, только когда вы их переведёте; если что-то пойдёт не так, откройте спор на странице сделки.`
          : `Платёж покупателя по сделке${d.title}, ${d.amount}, зарезервирован. Можно выполнять заказ: деньги переведут вам, когда покупатель подтвердит.`,
      ],
    }),
    released: (d, n) => ({
      subject: `деньги по сделке${d.title} переведены`,
      body: [
        n.role === 'buyer'
          ? `Деньги по сделке${d.title}, ${d.amount}, переведены продавцу. Сделка завершена.`
          : `Деньги покупателя по сделке${d.title}, ${d.amount}, переведены вам. Сделка завершена.`,
      ],
    }),
    refunded: (d, n) => ({
      subject: `деньги по сделке${d.title} возвращены`,
      body: [
        n.role === 'buyer'
          ? `Сделка${d.title} отменена, ваши деньги, ${d.amount}, возвращены вам.`
          : `Сделка${d.title} отменена, деньги покупателя, ${d.amount}, возвращены покупателю.`,
      ],
    }),
    dispute_opened: (d) => ({
      subject: `открыт спор по сделке${d.title}`,
      body: [
        `По сделке${d.title} открыт спор. Деньги, ${d.amount}, остаются зарезервированными до решения арбитра.`,
        'Добавьте свои сообщения и доказательства на странице сделки.',
      ],
    }),
    dispute_decided: (d, n) => ({
      subject: `арбитр решил спор по сделке${d.title}`,
      body: [
        `Арбитр решил спор по сделке${d.title}: ` +
          {
            release: {
              buyer: `деньги, ${d.amount}, переводятся продавцу.`,
              seller: `деньги, ${d.amount}, переводятся вам.`,
            },
            refund: {
              buyer: `деньги, ${d.amount}, возвращаются вам.`,
              seller: `деньги, ${d.amount}, возвращаются покупателю.`,
            },
          }[n.outcome][n.role],
      ],
    }),
    cancelled: (d) => ({
      subject: `сделка${d.title} отменена`,
      body: [`Сделка${d.title} отменена до оплаты. Деньги не списывались.`],
    }),
    dispute_message: (d, n) => ({
      subject: `новое сообщение в споре по сделке${d.title}`,
      body: n.text.trim()
        ? [`${ru.author(n.author, d.marketplace)} пишет в споре по сделке${d.title}:`, quoteLines(n.text)]
        : [
            `${ru.author(n.author, d.marketplace)} приложил файлы в споре по сделке${d.title}. Посмотрите их на странице сделки.`,
          ],
    }),
    shipped: (d, n) => ({
      subject: `заказ по сделке${d.title} отправлен`,
      body: [
        `Продавец отправил заказ по сделке${d.title}.${n.carrier ? ` Служба доставки: ${n.carrier}.` : ''}${n.tracking ? ` Трек-номер: ${n.tracking}.` : ''}`,
        'Теперь остановить перевод денег продавцу можно только спором: если заказ не придёт или окажется не таким, как договорились, откройте спор на странице сделки.',
      ],
    }),
    delivered: (d, n) => ({
      subject: `заказ по сделке${d.title} доставлен`,
      body: [
        n.inspection_ends_at
          ? `Заказ по сделке${d.title} доставлен. Проверьте его: если что-то не так, откройте спор до ${when('ru', n.inspection_ends_at, d.timeZone)}; после этого деньги, ${d.amount}, будут переведены продавцу автоматически.`
          : `Заказ по сделке${d.title} доставлен, и деньги, ${d.amount}, переведены продавцу.`,
      ],
    }),
    inspection_reminder: (d, n) => ({
      subject: `остался один день, чтобы проверить заказ по сделке${d.title}`,
      body: [
        `Время на проверку заказа по сделке${d.title} заканчивается ${when('ru', n.inspection_ends_at, d.timeZone)}. Если что-то не так, откройте спор на странице сделки до этого времени; иначе деньги, ${d.amount}, будут переведены продавцу.`,
      ],
    }),
    payout_sent: (d, n) => ({
      subject: `выплата по сделке${d.title} отправлена`,
      body: [`${formatMoney('ru', n.amount, n.currency)} по сделке${d.title} выплачено на ${n.destination}.`],
    }),
    payout_failed: (d, n) => ({
      subject: `выплата по сделке${d.title} не прошла`,
      body: [
        `Выплата ${formatMoney('ru', n.amount, n.currency)} по сделке${d.title} на ${n.destination} не прошла (${n.failure}).`,
        'Деньги остаются зарезервированными для вас. Укажите другой способ получения выплат в личном кабинете (раздел «Выплаты»), и выплата повторится.',
      ],
    }),
    payout_destination_needed: (d) => ({
      subject: `куда перевести деньги по сделке${d.title}?`,
      body: [
        `Деньги по сделке${d.title} переведены вам. Добавьте карту для выплат в личном кабинете (раздел «Выплаты»), и выплата придёт сразу.`,
      ],
    }),
    partially_refunded: (d, n) => ({
      subject: `часть денег по сделке${d.title} возвращена`,
      body: [
        n.role === 'buyer'
          ? `${formatMoney('ru', n.amount, n.currency)} из вашего платежа по сделке${d.title} возвращено вам, как договорились. Остальное остаётся в резерве.`
          : `${formatMoney('ru', n.amount, n.currency)} из платежа покупателя по сделке${d.title} возвращено покупателю, как договорились. Остальное остаётся в резерве для вас.`,
      ],
    }),
  },
};

const WORDS: Record<Lang, Words> = { en, ru };

/** A moment in a mail: as the pages show it (Moscow time, named), so a mail and its deal page agree. */
const when = formatDate;

/** English names the deal after "you": `…with you: "Bicycle"`. */
const colon = (title: string) => (title ? `:${title}` : '');

/** Someone's own words in a mail, marked as a quotation line by line. */
function quoteLines(text: string): string {
  return text
    .trim()
    .split(/\r?\n/)
    .map((line) => `> ${line}`)
    .join('\n');
}

/** Greeting, paragraphs, the link, and the marketplace's name last, where every mail has it. */
function frame(words: Words, name: string, marketplace: string, paragraphs: string[], url: string): string {
  return (
    [
      words.greeting(name.trim()),
      ...paragraphs,
      `${words.openDeal}: ${url}`,
      `${words.marketplace}: ${marketplace}`,
    ].join('\n\n') + '\n'
  );
}

export function invitationMail(input: InvitationInput): Mail {
  const words = WORDS[input.locale];
  return {
    subject: `${input.marketplaceName}: ${words.invitation.subject}`,
    text: frame(
      words,
      input.name,
      input.marketplaceName,
      [
        `${words.invitation.opening[input.role](input.marketplaceName, words.quote(input.dealTitle.trim()))}.`,
        `${words.invitation.account(input.svcId)}\n\n${input.link}`,
      ],
      input.dealUrl,
    ),
  };
}

/** The mail of one step of a deal to one person, in their language. */
export function dealMail(
  locale: Lang,
  recipientName: string,
  deal: DealFacts,
  notice: DealNoticeMail,
  timeZone: string | null = null,
): Mail {
  const words = WORDS[locale];
  const quoted: Quoted = {
    marketplace: deal.marketplaceName,
    title: words.quote(deal.title.trim()),
    amount: formatMoney(locale, deal.amount, deal.currency),
    timeZone,
  };
  // The table is indexed by the notice's own kind, a pairing TypeScript cannot follow through the union.
  const render = words.notices[notice.kind] as Notice<DealNoticeKind>;
  const { subject, body } = render(quoted, notice);
  return {
    subject: `${deal.marketplaceName}: ${subject}`,
    text: frame(
      words,
      recipientName,
      deal.marketplaceName,
      [...body, ...details(words, deal.marketplaceName, notice)],
      deal.url,
    ),
  };
}

/** Who made the move and why, for the steps where that matters; blank reasons are left out. */
function details(words: Words, marketplace: string, notice: DealNoticeMail): string[] {
  const lines: string[] = [];
  if ('actor' in notice && notice.actor)
    lines.push(`${words.by[notice.kind]}: ${words.actor(notice.actor, marketplace)}`);
  const reason = 'reason' in notice ? notice.reason?.trim() : undefined;
  if (reason) lines.push(`${notice.kind === 'dispute_decided' ? words.arbiterReason : words.reason}: ${reason}`);
  return lines.length ? [lines.join('\n')] : [];
}

/** Mails about the account itself: confirming a sign-up, an address that already has one, resets, a changed password. */
interface AccountWords {
  greeting(name: string): string;
  signup: { subject: string; body: string; ignore: string };
  exists: { subject: string; body: string; signIn: string; reset: string; ignore: string };
  reset: { subject: string; body: string; ignore: string };
  noAccount: { subject: string; body: string; signUp: string; ignore: string };
  changed: { subject: string; body: string; notYou: string };
  factorsReset: { subject: string; body: string; setUp: string; notYou: string };
}

const accountEn: AccountWords = {
  greeting: en.greeting,
  signup: {
    subject: 'svc ID: confirm your e-mail address',
    body: 'Someone, hopefully you, asked to create an svc ID account with this address. Open this link within 24 hours to confirm it and finish:',
    ignore: 'If it was not you, ignore this mail: no account is created without the link.',
  },
  exists: {
    subject: 'svc ID: you already have an account',
    body: 'Someone, hopefully you, tried to create an svc ID account with this address, but you already have one.',
    signIn: 'Sign in',
    reset: 'Forgot your password? Set a new one',
    ignore: 'If it was not you, ignore this mail: nothing has changed.',
  },
  reset: {
    subject: 'svc ID: set a new password',
    body: 'Someone, hopefully you, asked to set a new password for your svc ID account. Open this link within an hour; it works once:',
    ignore: 'If it was not you, ignore this mail: your password stays as it is.',
  },
  noAccount: {
    subject: 'svc ID: no account with this address',
    body: 'Someone, hopefully you, asked to set a new password for an svc ID account with this address, but there is no account with it. Perhaps you signed up with another address?',
    signUp: 'Create an account',
    ignore: 'If it was not you, ignore this mail: nothing has changed.',
  },
  changed: {
    subject: 'svc ID: your password was changed',
    body: 'The password of your svc ID account has just been changed, and your other sessions were signed out.',
    notYou: 'If it was not you, set a new password at once',
  },
  factorsReset: {
    subject: 'svc ID: your second factors were removed',
    body: 'An operator of svc ID has removed the second factors of your account: the authenticator app, the passkeys and the recovery codes. Your sessions were signed out. You now sign in with your password alone.',
    setUp: 'Set up a second factor again',
    notYou: 'If you did not ask for this, set a new password at once and write to support',
  },
};

const accountRu: AccountWords = {
  greeting: ru.greeting,
  signup: {
    subject: 'svc ID: подтвердите адрес электронной почты',
    body: 'Кто-то (надеемся, вы) попросил создать учётную запись svc ID с этим адресом. Откройте ссылку в течение 24 часов, чтобы подтвердить адрес и завершить регистрацию:',
    ignore:
      'Если это были не вы, просто не обращайте внимания на письмо: без перехода по ссылке учётная запись не создаётся.',
  },
  exists: {
    subject: 'svc ID: у вас уже есть учётная запись',
    body: 'Кто-то (надеемся, вы) попытался создать учётную запись svc ID с этим адресом, но она у вас уже есть.',
    signIn: 'Войти',
    reset: 'Забыли пароль? Задайте новый',
    ignore: 'Если это были не вы, просто не обращайте внимания на письмо: ничего не изменилось.',
  },
  reset: {
    subject: 'svc ID: новый пароль',
    body: 'Кто-то (надеемся, вы) попросил задать новый пароль для вашей учётной записи svc ID. Откройте ссылку в течение часа; она работает один раз:',
    ignore: 'Если это были не вы, просто не обращайте внимания на письмо: пароль останется прежним.',
  },
  noAccount: {
    subject: 'svc ID: учётной записи с этим адресом нет',
    body: 'Кто-то (надеемся, вы) попросил задать новый пароль учётной записи svc ID с этим адресом, но учётной записи с ним нет. Возможно, вы регистрировались с другим адресом?',
    signUp: 'Создать учётную запись',
    ignore: 'Если это были не вы, просто не обращайте внимания на письмо: ничего не изменилось.',
  },
  changed: {
    subject: 'svc ID: пароль изменён',
    body: 'Пароль вашей учётной записи svc ID только что изменён, а на других устройствах выполнен выход.',
    notYou: 'Если это были не вы, сразу задайте новый пароль',
  },
  factorsReset: {
    subject: 'svc ID: вторые факторы удалены',
    body: 'Оператор svc ID удалил вторые факторы вашей учётной записи: приложение-аутентификатор, ключи доступа и коды восстановления. На всех устройствах выполнен выход. Теперь вы входите только с паролем.',
    setUp: 'Снова подключить второй фактор',
    notYou: 'Если вы об этом не просили, сразу задайте новый пароль и напишите в поддержку',
  },
};

const ACCOUNT_WORDS: Record<Lang, AccountWords> = { en: accountEn, ru: accountRu };

/** The address where a reset or a sign-in starts, for mails that point there. */
export interface AccountLinks {
  signIn: string;
  forgotPassword: string;
}

export function signupConfirmationMail(locale: Lang, name: string, link: string): Mail {
  const words = ACCOUNT_WORDS[locale];
  return {
    subject: words.signup.subject,
    text: [words.greeting(name.trim()), `${words.signup.body}\n\n${link}`, words.signup.ignore].join('\n\n') + '\n',
  };
}

export function accountExistsMail(locale: Lang, name: string, links: AccountLinks): Mail {
  const words = ACCOUNT_WORDS[locale];
  return {
    subject: words.exists.subject,
    text:
      [
        words.greeting(name.trim()),
        words.exists.body,
        `${words.exists.signIn}: ${links.signIn}\n${words.exists.reset}: ${links.forgotPassword}`,
        words.exists.ignore,
      ].join('\n\n') + '\n',
  };
}

export function passwordResetMail(locale: Lang, name: string, link: string): Mail {
  const words = ACCOUNT_WORDS[locale];
  return {
    subject: words.reset.subject,
    text: [words.greeting(name.trim()), `${words.reset.body}\n\n${link}`, words.reset.ignore].join('\n\n') + '\n',
  };
}

/** The answer to a reset asked for an address that has no account: said to the address's owner, never to the asker. */
export function noAccountMail(locale: Lang, signUpLink: string): Mail {
  const words = ACCOUNT_WORDS[locale];
  return {
    subject: words.noAccount.subject,
    text:
      [
        words.greeting(''),
        words.noAccount.body,
        `${words.noAccount.signUp}: ${signUpLink}`,
        words.noAccount.ignore,
      ].join('\n\n') + '\n',
  };
}

export function passwordChangedMail(locale: Lang, name: string, links: AccountLinks): Mail {
  const words = ACCOUNT_WORDS[locale];
  return {
    subject: words.changed.subject,
    text:
      [words.greeting(name.trim()), words.changed.body, `${words.changed.notYou}: ${links.forgotPassword}`].join(
        '\n\n',
      ) + '\n',
  };
}

/** After an operator reset the account's second factors (src/mfa/console-person.ts): where to set one up again. */
export function secondFactorsResetMail(locale: Lang, name: string, links: AccountLinks & { security: string }): Mail {
  const words = ACCOUNT_WORDS[locale].factorsReset;
  return {
    subject: words.subject,
    text:
      [
        ACCOUNT_WORDS[locale].greeting(name.trim()),
        words.body,
        `${words.setUp}: ${links.security}`,
        `${words.notYou}: ${links.forgotPassword}`,
      ].join('\n\n') + '\n',
  };
}

/** A new administrator's mail: the link to set a password (when the account has none) and the second factor. */
/** The roles as a person reads them (src/admin/auth.ts ADMIN_ROLES); an unknown one is shown as it is. */
const ROLE_NAMES: Record<Lang, Record<string, string>> = {
  en: { admin: 'administrator', arbiter: 'arbiter', support: 'support' },
  ru: { admin: 'администратор', arbiter: 'арбитр', support: 'поддержка' },
};

const ADMIN_SETUP_WORDS: Record<Lang, { subject: string; body: (role: string) => string; expires: string }> = {
  en: {
    subject: 'svc console: you are an administrator now',
    body: (role) =>
      `You were made an administrator of the svc console (role: ${role}). Open this link to set your password and the one-time codes of your authenticator app:`,
    expires:
      'The link works once, within 3 days. If you did not expect this mail, tell the person who runs the service.',
  },
  ru: {
    subject: 'Консоль svc: вы администратор',
    body: (role) =>
      `Вас назначили администратором консоли svc (роль: ${role}). Откройте ссылку, чтобы задать пароль и одноразовые коды приложения-аутентификатора:`,
    expires:
      'Ссылка работает один раз, в течение 3 дней. Если вы не ждали этого письма, сообщите тому, кто управляет сервисом.',
  },
};

export function adminSetupMail(locale: Lang, name: string, role: string, link: string): Mail {
  const words = ADMIN_SETUP_WORDS[locale];
  return {
    subject: words.subject,
    text:
      [
        ACCOUNT_WORDS[locale].greeting(name.trim()),
        `${words.body(ROLE_NAMES[locale][role] ?? role)}\n\n${link}`,
        words.expires,
      ].join('\n\n') + '\n',
  };
}
