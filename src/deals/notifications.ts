// The mail of each step of a deal to the people it concerns, in their language. The deal's records activity
// (activities/deals/records.ts) writes a change's notices in the change's transaction; the drainer of
// src/deals/notice-outbox.ts sends them from here after the commit, a batch at a time: one statement reads what the
// batch's mails need, pure code decides and renders them, one statement writes them. Every mail is keyed by the
// change's event and the recipient's role, so a notice sent twice mails once. The wording lives in src/mail/templates.ts.
import type { Services } from '../services.ts';
import type { DbClient } from '../db.ts';
import { mailRecipientsSql, type MailRecipient } from '../accounts/users.ts';
import type { OutgoingMail } from '../mail/outbox.ts';
import { dealMail, dealPageUrl, type DealFacts, type DealNoticeMail, type Party } from '../mail/templates.ts';
import { toMinor, toNumber } from '../money/amount.ts';
import type { ActorKind, DealRecord, DealStatus, DisputeAuthor } from './model.ts';
import { widgetDealMailAllowed, widgetDealSql, type WidgetMailKind } from '../widget/mail-limits.ts';

export interface DealNotice {
  dealId: string;
  /** The change's webhook event (or the dispute message's id): the mails' idempotency key. */
  eventId: string;
  /** The deal's status after the change. */
  status: DealStatus;
  actor?: ActorKind;
  reason?: string;
  /** A new message in the dispute: only the other side hears of it. */
  disputeMessage?: { author: DisputeAuthor; text: string };
  /** An event of money or delivery (`deal.shipped`, …, or the mail-only `payout_destination_needed`, `inspection_reminder`), with what it tells. */
  event?: string;
  data?: Record<string, unknown>;
}

/** The deal's own columns the mails read (its amount as PostgreSQL's text in the row, a number here). */
type NoticeDealColumn =
  | 'id'
  | 'marketplace_id'
  | 'external_id'
  | 'title'
  | 'buyer_email'
  | 'buyer_name'
  | 'seller_email'
  | 'amount'
  | 'currency';

/** What the mails of a deal's notices need of the deal as it stands now: a few columns and records, not the snapshot. */
export interface NoticeDeal extends Pick<DealRecord, NoticeDealColumn> {
  /** '' when the marketplace is gone. */
  marketplace_name: string;
  /** The latest approval: its approver is asked, its comment explains a rejection. */
  approval: { approver: string; comment: string } | null;
  /** The latest payment: mails about money quote its amount. */
  payment: { amount: number; currency: string } | null;
  /** Made through the widget, so its first mails are an anonymous caller's doing (src/widget/mail-limits.ts). */
  widget: boolean;
  /** The accounts of the addresses its mails may go to, by the address in lower case. */
  recipients: Map<string, MailRecipient>;
}

/** A mail a notice calls for, rendered for its recipient. */
export interface NoticeMail extends OutgoingMail {
  /** A widget deal's mail an anonymous caller can cause: it goes only if the widget's mail limit lets it. */
  widgetKind?: WidgetMailKind;
}

interface Planned {
  role: Party | 'approver';
  email: string;
  mail: DealNoticeMail;
  /** Someone who cannot sign in yet has an invitation that says the same; they get that instead. */
  onlyWithPassword: boolean;
}

/** Statuses whose mails are about the money paid, so they quote the payment's amount rather than the deal's. */
const MONEY_STATUSES: readonly DealStatus[] = ['escrow_hold', 'paid', 'refunded', 'disputed'];

/** The decimal text PostgreSQL gives for an amount, as the templates' number (exact: see src/money/amount.ts). */
const amountOf = (text: string) => toNumber(toMinor(text));

/** The deals of these ids as their notices' mails need them: one statement, whatever the number of deals. */
export async function loadNoticeDeals(db: DbClient, dealIds: readonly string[]): Promise<Map<string, NoticeDeal>> {
  const result = await db.query<
    Omit<Pick<DealRecord, NoticeDealColumn>, 'amount'> & {
      amount: string;
      marketplace_name: string | null;
      approver: string | null;
      approval_comment: string | null;
      payment_amount: string | null;
      payment_currency: string | null;
      widget: boolean;
      recipients: (MailRecipient & { address: string })[];
    }
  >(
    `SELECT d.id, d.marketplace_id, d.external_id, d.title, d.buyer_email, d.buyer_name, d.seller_email,
            d.amount::text AS amount, d.currency, m.name AS marketplace_name,
            a.approver, a.comment AS approval_comment, p.amount::text AS payment_amount, p.currency AS payment_currency,
            ${widgetDealSql('d.marketplace_id', 'd.external_id')} AS widget,
            ${mailRecipientsSql(['d.buyer_email', 'd.seller_email', 'a.approver'])} AS recipients
       FROM deals d
       LEFT JOIN marketplaces m ON m.id = d.marketplace_id
       LEFT JOIN LATERAL (SELECT approver, comment FROM deal_approvals WHERE deal_id = d.id
                           ORDER BY created_at DESC, id DESC LIMIT 1) a ON true
       LEFT JOIN LATERAL (SELECT amount, currency FROM deal_payments WHERE deal_id = d.id
                           ORDER BY created_at DESC, id DESC LIMIT 1) p ON true
      WHERE d.id = ANY($1::uuid[])`,
    [dealIds],
  );
  return new Map(
    result.rows.map((row) => [
      row.id,
      {
        id: row.id,
        marketplace_id: row.marketplace_id,
        external_id: row.external_id,
        title: row.title,
        buyer_email: row.buyer_email,
        buyer_name: row.buyer_name,
        seller_email: row.seller_email,
        amount: amountOf(row.amount),
        currency: row.currency.trim(),
        marketplace_name: row.marketplace_name ?? '',
        approval: row.approver === null ? null : { approver: row.approver, comment: row.approval_comment ?? '' },
        payment:
          row.payment_amount === null
            ? null
            : { amount: amountOf(row.payment_amount), currency: row.payment_currency!.trim() },
        widget: row.widget,
        recipients: new Map(row.recipients.map(({ address, ...recipient }) => [address, recipient])),
      },
    ]),
  );
}

/**
 * The mails a notice calls for, rendered for their recipients in the order to queue them: none for a deal that is
 * gone. Throws when a mail cannot be rendered (a date in the notice that is none, say).
 */
export function noticeMails(notice: DealNotice, deal: NoticeDeal | undefined, baseUrl: string): NoticeMail[] {
  if (!deal) return [];
  const payment = MONEY_STATUSES.includes(notice.status) ? deal.payment : null;
  const facts: DealFacts = {
    marketplaceName: deal.marketplace_name,
    title: deal.title,
    amount: payment?.amount ?? deal.amount,
    currency: payment?.currency ?? deal.currency,
    url: dealPageUrl(baseUrl, deal.id),
  };
  const anonymousKind = notice.status === 'created' || notice.status === 'approval' ? notice.status : undefined;
  const widgetKind = deal.widget && !notice.disputeMessage ? anonymousKind : undefined;
  const mails: NoticeMail[] = [];
  for (const { role, email, mail, onlyWithPassword } of plan(deal, notice)) {
    // Not made yet (the activity that makes the accounts runs apart from the one that mails): Russian, the default.
    const recipient = deal.recipients.get(email.toLowerCase());
    if (onlyWithPassword && !recipient?.has_password) continue;
    const name = recipient?.name || (role === 'buyer' ? deal.buyer_name : '');
    const { subject, text } = dealMail(recipient?.locale ?? 'ru', name, facts, mail, recipient?.time_zone ?? null);
    mails.push({
      key: `deal-event/${notice.eventId}/${role}`,
      to: email,
      subject,
      text,
      ...(widgetKind && { widgetKind }),
    });
  }
  return mails;
}

export function createDealNotifier(services: Pick<Services, 'db' | 'mailer' | 'config'>) {
  /** A notice's mails that may go: a widget deal's first mails only within the widget's mail limit. */
  async function allowedMails(notice: DealNotice, deal: NoticeDeal | undefined): Promise<OutgoingMail[]> {
    if (!deal) return [];
    const allowed: OutgoingMail[] = [];
    for (const { widgetKind, ...mail } of noticeMails(notice, deal, services.config.BASE_URL)) {
      if (!widgetKind || (await widgetDealMailAllowed(services.db, deal, widgetKind, mail.to))) allowed.push(mail);
    }
    return allowed;
  }

  return {
    /**
     * Mails everyone the changes concern, their mails queued in the notices' order. Each notice's result is how many
     * mails it calls for (each written once, however often it runs), or why they failed: a notice fails alone. Throws
     * when the deals cannot be read, which fails them all.
     */
    async notifyDealChanges(notices: readonly DealNotice[]): Promise<PromiseSettledResult<number>[]> {
      const deals = await loadNoticeDeals(services.db, [...new Set(notices.map((notice) => notice.dealId))]);
      const planned: PromiseSettledResult<OutgoingMail[]>[] = [];
      for (const notice of notices) {
        try {
          planned.push({ status: 'fulfilled', value: await allowedMails(notice, deals.get(notice.dealId)) });
        } catch (reason) {
          planned.push({ status: 'rejected', reason });
        }
      }
      const written = await services.mailer.sendAll(
        planned.flatMap((mails) => (mails.status === 'fulfilled' ? mails.value : [])),
      );
      let next = 0;
      return planned.map((mails) => {
        if (mails.status === 'rejected') return mails;
        const failed = written.slice(next, (next += mails.value.length)).find((mail) => mail.status === 'rejected');
        return failed ?? { status: 'fulfilled', value: mails.value.length };
      });
    },
  };
}

/** Which mails a step calls for, to whom: decided from the deal as it stands after the change. */
function plan(deal: NoticeDeal, notice: DealNotice): Planned[] {
  const parties: { role: Party; email: string }[] = [{ role: 'buyer', email: deal.buyer_email }];
  // One mail per person, also when a marketplace names the same address as buyer and seller.
  if (deal.seller_email && deal.seller_email.toLowerCase() !== deal.buyer_email.toLowerCase()) {
    parties.push({ role: 'seller', email: deal.seller_email });
  }
  const to = (roles: readonly Party[], mail: (role: Party) => DealNoticeMail, onlyWithPassword = false): Planned[] =>
    parties
      .filter(({ role }) => roles.includes(role))
      .map(({ role, email }) => ({ role, email, mail: mail(role), onlyWithPassword }));
  const both = ['buyer', 'seller'] as const;
  const { actor, reason } = notice;

  if (notice.event) return moneyPlan(notice.event, notice.data ?? {}, to, reason);
  if (notice.disputeMessage) {
    const { author, text } = notice.disputeMessage;
    // The author knows what they wrote; a message of the marketplace or the arbiter goes to both sides.
    return to(
      both.filter((role) => role !== author),
      () => ({ kind: 'dispute_message', author, text }),
    );
  }
  switch (notice.status) {
    case 'created':
      // A party without a password gets the invitation to the deal instead (activities/deals/records.ts).
      return to(both, (role) => ({ kind: 'new_deal', role }), true);
    case 'docs':
      return [];
    case 'approval': {
      const approver = deal.approval?.approver;
      if (!approver) return [];
      // The buyer's invitation told of the deal, not of the approval; another approver's invitation asks for it.
      const isParty = parties.some(({ email }) => email.toLowerCase() === approver.toLowerCase());
      return [{ role: 'approver', email: approver, mail: { kind: 'approval_requested' }, onlyWithPassword: !isParty }];
    }
    case 'approved':
      return to(['seller'], () => ({ kind: 'approved' }));
    case 'rejected':
      return to(['seller'], () => ({ kind: 'rejected', comment: reason ?? deal.approval?.comment ?? '' }));
    case 'escrow_hold':
      return to(both, (role) => ({ kind: 'money_held', role }));
    case 'paid':
      return to(both, (role) =>
        actor === 'arbiter'
          ? { kind: 'dispute_decided', role, outcome: 'release', reason }
          : { kind: 'released', role, actor },
      );
    case 'refunded':
      return to(both, (role) =>
        actor === 'arbiter'
          ? { kind: 'dispute_decided', role, outcome: 'refund', reason }
          : { kind: 'refunded', role, actor, reason },
      );
    case 'disputed':
      return to(both, () => ({ kind: 'dispute_opened', actor, reason }));
    case 'cancelled':
      return to(both, () => ({ kind: 'cancelled', actor, reason }));
  }
}

type To = (roles: readonly Party[], mail: (role: Party) => DealNoticeMail) => Planned[];

/** The mails of an event of money or delivery: the buyer hears of the goods, the seller of the money. */
function moneyPlan(event: string, data: Record<string, unknown>, to: To, reason: string | undefined): Planned[] {
  const text = (key: string) => (typeof data[key] === 'string' ? data[key] : '');
  const amount = typeof data.amount === 'number' ? data.amount : 0;
  switch (event) {
    case 'deal.shipped':
      return to(['buyer'], () => ({ kind: 'shipped', carrier: text('carrier'), tracking: text('tracking') }));
    case 'deal.delivered':
      return to(['buyer'], () => ({ kind: 'delivered', inspection_ends_at: text('inspection_ends_at') || null }));
    case 'inspection_reminder':
      return to(['buyer'], () => ({ kind: 'inspection_reminder', inspection_ends_at: text('inspection_ends_at') }));
    case 'deal.payout_sent':
      return to(['seller'], () => ({
        kind: 'payout_sent',
        amount,
        currency: text('currency'),
        destination: text('destination'),
      }));
    case 'deal.payout_failed':
      return to(['seller'], () => ({
        kind: 'payout_failed',
        amount,
        currency: text('currency'),
        destination: text('destination'),
        failure: text('failure_reason'),
      }));
    case 'payout_destination_needed':
      return to(['seller'], () => ({ kind: 'payout_destination_needed' }));
    case 'deal.partially_refunded':
      return to(['buyer', 'seller'], (role) => ({
        kind: 'partially_refunded',
        role,
        amount,
        currency: text('currency'),
        reason,
      }));
    default:
      return [];
  }
}
