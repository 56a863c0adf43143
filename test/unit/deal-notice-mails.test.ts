// The mails a deal notice calls for, decided and rendered from the deal as the notice drainer reads it for a batch
// (src/deals/notifications.ts's noticeMails): who gets which mail, under which key, in which language, and which mails
// wait for the widget's mail limit. The reading and the writing are tested over PostgreSQL in
// test/e2e/deal-notice-outbox.test.ts.
import { describe, expect, it } from 'vitest';
import { noticeMails, type DealNotice, type NoticeDeal } from '../../src/deals/notifications.ts';
import type { MailRecipient } from '../../src/accounts/users.ts';

const BASE_URL = 'https://svc.example';
/** Intl writes Russian amounts with no-break spaces; the tests compare with plain ones. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

const person = (locale: 'ru' | 'en', rest: Partial<MailRecipient> = {}): MailRecipient => ({
  id: `user-${locale}`,
  name: '',
  locale,
  time_zone: null,
  has_password: true,
  ...rest,
});

function dealOf(rest: Partial<NoticeDeal> = {}): NoticeDeal {
  return {
    id: 'deal-1',
    marketplace_id: 'market-1',
    external_id: 'order-1',
    title: 'Bicycle',
    buyer_email: 'buyer@example.com',
    buyer_name: '',
    seller_email: 'seller@example.com',
    amount: 15000,
    currency: 'RUB',
    marketplace_name: 'Velo Shop',
    approval: null,
    payment: null,
    widget: false,
    recipients: new Map([
      ['buyer@example.com', person('en', { name: 'Anna' })],
      ['seller@example.com', person('ru')],
    ]),
    ...rest,
  };
}

const notice = (status: DealNotice['status'], rest: Partial<DealNotice> = {}): DealNotice => ({
  dealId: 'deal-1',
  eventId: 'event-1',
  status,
  ...rest,
});

describe('noticeMails', () => {
  it('keys each mail by the event and the role, in the recipient’s language, linking to the deal', () => {
    const mails = noticeMails(notice('cancelled', { actor: 'marketplace' }), dealOf(), BASE_URL);
    expect(mails.map(({ key, to }) => ({ key, to }))).toEqual([
      { key: 'deal-event/event-1/buyer', to: 'buyer@example.com' },
      { key: 'deal-event/event-1/seller', to: 'seller@example.com' },
    ]);
    const [english, russian] = mails;
    expect(english.subject).toBe('Velo Shop: the deal "Bicycle" was cancelled');
    expect(english.text).toMatch(/^Hello Anna,/);
    expect(russian.subject).toBe('Velo Shop: сделка «Bicycle» отменена');
    for (const mail of mails) expect(mail.text).toContain(`${BASE_URL}/cabinet/view/deals/deal-1`);
    expect(mails.some((mail) => 'widgetKind' in mail)).toBe(false);
  });

  it('quotes the latest payment in mails about money, and the deal’s amount in the others', () => {
    const deal = dealOf({ payment: { amount: 12500.5, currency: 'RUB' } });
    const [held] = noticeMails(notice('escrow_hold'), deal, BASE_URL);
    expect(plain(held.text)).toContain('RUB 12,500.50');
    const [approved] = noticeMails(notice('approved', { actor: 'buyer' }), deal, BASE_URL);
    expect(plain(approved.text)).toContain('15 000,00 ₽');
  });

  it('writes Russian to an address with no account, and names the buyer as the marketplace did', () => {
    const deal = dealOf({ buyer_name: 'Борис', recipients: new Map() });
    const [buyer, seller] = noticeMails(notice('cancelled'), deal, BASE_URL);
    expect(buyer.text).toMatch(/^Здравствуйте, Борис!/);
    expect(seller.text).toMatch(/^Здравствуйте!/);
  });

  it('finds recipients whatever the case of the address the deal names, and mails one person as both parties once', () => {
    const deal = dealOf({ buyer_email: 'Anna@Example.com', seller_email: 'ANNA@example.COM' });
    deal.recipients = new Map([['anna@example.com', person('en', { name: 'Anna' })]]);
    const mails = noticeMails(notice('escrow_hold'), deal, BASE_URL);
    expect(mails.map(({ key, to }) => ({ key, to }))).toEqual([
      { key: 'deal-event/event-1/buyer', to: 'Anna@Example.com' },
    ]);
    expect(mails[0].text).toMatch(/^Hello Anna,/);
  });

  it('mails a new deal only to parties who can sign in: the others get an invitation instead', () => {
    const deal = dealOf();
    deal.recipients.set('seller@example.com', person('ru', { has_password: false }));
    expect(noticeMails(notice('created'), deal, BASE_URL).map((mail) => mail.to)).toEqual(['buyer@example.com']);
  });

  it('asks the latest approver; one who is not a party and cannot sign in gets the invitation instead', () => {
    const asked = (approver: string, recipients: Map<string, MailRecipient>) =>
      noticeMails(notice('approval'), dealOf({ approval: { approver, comment: '' }, recipients }), BASE_URL).map(
        ({ key, to }) => ({ key, to }),
      );
    expect(asked('BUYER@example.com', new Map())).toEqual([
      { key: 'deal-event/event-1/approver', to: 'BUYER@example.com' },
    ]);
    expect(asked('manager@example.com', new Map())).toEqual([]);
    expect(asked('manager@example.com', new Map([['manager@example.com', person('en')]]))).toEqual([
      { key: 'deal-event/event-1/approver', to: 'manager@example.com' },
    ]);
    expect(noticeMails(notice('approval'), dealOf(), BASE_URL)).toEqual([]);
  });

  it('puts a widget deal’s first mails under the widget’s mail limit, and no other mail', () => {
    const widget = dealOf({ widget: true, approval: { approver: 'buyer@example.com', comment: '' } });
    expect(noticeMails(notice('created'), widget, BASE_URL).map((mail) => mail.widgetKind)).toEqual([
      'created',
      'created',
    ]);
    expect(noticeMails(notice('approval'), widget, BASE_URL).map((mail) => mail.widgetKind)).toEqual(['approval']);
    expect(noticeMails(notice('cancelled'), widget, BASE_URL).every((mail) => mail.widgetKind === undefined)).toBe(
      true,
    );
    const message = notice('created', { disputeMessage: { author: 'arbiter', text: 'Hello' } });
    expect(noticeMails(message, widget, BASE_URL).every((mail) => mail.widgetKind === undefined)).toBe(true);
    expect(noticeMails(notice('created'), dealOf(), BASE_URL).every((mail) => mail.widgetKind === undefined)).toBe(
      true,
    );
  });

  it('takes a rejection’s comment from the notice, else from the latest approval', () => {
    const deal = dealOf({ approval: { approver: 'buyer@example.com', comment: 'Цена не та' } });
    const [fromApproval] = noticeMails(notice('rejected'), deal, BASE_URL);
    expect(fromApproval.text).toContain('Комментарий покупателя: Цена не та');
    const [fromNotice] = noticeMails(notice('rejected', { reason: 'Too late' }), deal, BASE_URL);
    expect(fromNotice.text).toContain('Комментарий покупателя: Too late');
  });

  it('mails nobody for documents or a deal that is gone, and throws for a notice it cannot render', () => {
    expect(noticeMails(notice('docs'), dealOf(), BASE_URL)).toEqual([]);
    expect(noticeMails(notice('paid'), undefined, BASE_URL)).toEqual([]);
    const reminder = notice('escrow_hold', {
      event: 'inspection_reminder',
      data: { inspection_ends_at: 'not a date' },
    });
    expect(() => noticeMails(reminder, dealOf(), BASE_URL)).toThrow(RangeError);
  });
});
