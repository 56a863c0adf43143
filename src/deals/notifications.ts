// The mail of each step of a deal to the people it concerns, in their language. The deal's records activity
// (activities/deals/records.ts) writes a change's notices in the change's transaction; the drainer of
// src/deals/notice-outbox.ts sends them from here after the commit. Every mail is keyed by the change's event and the
// recipient's role, so a notice sent twice mails once. The wording lives in src/mail/templates.ts.
import type { Services } from '../services.ts';
import { findMailRecipient } from '../accounts/users.ts';
import { findMarketplace } from '../marketplaces/marketplaces.ts';
import { dealMail, dealPageUrl, type DealNoticeMail, type Party } from '../mail/templates.ts';
import type { ActorKind, DealSnapshot, DealStatus, DisputeAuthor } from './model.ts';
import { loadSnapshot } from './store.ts';
import { widgetMailAllowed } from '../widget/mail-limits.ts';

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

interface Planned {
  role: Party | 'approver';
  email: string;
  mail: DealNoticeMail;
  /** Someone who cannot sign in yet has an invitation that says the same; they get that instead. */
  onlyWithPassword: boolean;
}

/** Statuses whose mails are about the money paid, so they quote the payment's amount rather than the deal's. */
const MONEY_STATUSES: readonly DealStatus[] = ['escrow_hold', 'paid', 'refunded', 'disputed'];

export function createDealNotifier(services: Services) {
  return {
    /** Mails everyone the change concerns; answers how many mails it calls for (each written once, however often it runs). */
    async notifyDealChange(notice: DealNotice): Promise<number> {
      const snapshot = await loadSnapshot(services.db, notice.dealId);
      if (!snapshot) return 0;
      const { deal } = snapshot;
      const planned = plan(snapshot, notice);
      if (planned.length === 0) return 0;
      const marketplace = await findMarketplace(services.db, deal.marketplace_id);
      const payment = MONEY_STATUSES.includes(notice.status) ? snapshot.payments.at(-1) : undefined;
      const facts = {
        marketplaceName: marketplace?.name ?? '',
        title: deal.title,
        amount: payment?.amount ?? deal.amount,
        currency: payment?.currency ?? deal.currency,
        url: dealPageUrl(services.config.BASE_URL, deal.id),
      };
      let mails = 0;
      for (const { role, email, mail, onlyWithPassword } of planned) {
        // Not made yet (the activity that makes the accounts runs apart from the one that mails): Russian, the default.
        const recipient = await findMailRecipient(services.db, email);
        if (onlyWithPassword && !recipient?.has_password) continue;
        const anonymousKind = notice.status === 'created' || notice.status === 'approval' ? notice.status : undefined;
        if (
          anonymousKind &&
          !notice.disputeMessage &&
          !(await widgetMailAllowed(services.db, deal, anonymousKind, email))
        )
          continue;
        const name = recipient?.name || (role === 'buyer' ? deal.buyer_name : '');
        const { subject, text } = dealMail(recipient?.locale ?? 'ru', name, facts, mail, recipient?.time_zone ?? null);
        await services.mailer.send({ key: `deal-event/${notice.eventId}/${role}`, to: email, subject, text });
        mails++;
      }
      return mails;
    },
  };
}

/** Which mails a step calls for, to whom: decided from the deal as it stands after the change. */
function plan({ deal, approvals }: DealSnapshot, notice: DealNotice): Planned[] {
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
      const approver = approvals.at(-1)?.approver;
      if (!approver) return [];
      // The buyer's invitation told of the deal, not of the approval; another approver's invitation asks for it.
      const isParty = parties.some(({ email }) => email.toLowerCase() === approver.toLowerCase());
      return [{ role: 'approver', email: approver, mail: { kind: 'approval_requested' }, onlyWithPassword: !isParty }];
    }
    case 'approved':
      return to(['seller'], () => ({ kind: 'approved' }));
    case 'rejected':
      return to(['seller'], () => ({ kind: 'rejected', comment: reason ?? approvals.at(-1)?.comment ?? '' }));
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
