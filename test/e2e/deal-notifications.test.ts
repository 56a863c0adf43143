// Deal notices: the templates on their own, then the notifier over the real PostgreSQL, with a deal's rows written
// directly as the deal workflow would have recorded them, and the outbox read back.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser } from '../../src/accounts/users.ts';
import { createMarketplace } from '../../src/marketplaces/marketplaces.ts';
import { createDealNotifier, type DealNotice } from '../../src/deals/notifications.ts';
import { ACTORS, DISPUTE_AUTHORS, type PaymentStatus } from '../../src/deals/model.ts';
import { dealMail, invitationMail, type DealFacts, type DealNoticeMail, type Mail } from '../../src/mail/templates.ts';
import { startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';

const CYRILLIC = /[а-яё]/i;
/** Intl writes Russian amounts with no-break spaces; the tests compare with plain ones. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

describe('the templates', () => {
  const facts: DealFacts = {
    marketplaceName: 'Velo Shop',
    title: 'Bicycle',
    amount: 12500,
    currency: 'RUB',
    url: 'https://svc.example/cabinet/view/deals/d-1',
  };
  const parties = ['buyer', 'seller'] as const;
  const actors = [...ACTORS, undefined];
  // Every mail a deal sends, in every variant its text has.
  const notices: DealNoticeMail[] = [
    ...parties.map((role) => ({ kind: 'new_deal', role }) as const),
    { kind: 'approval_requested' },
    { kind: 'approved' },
    { kind: 'rejected', comment: 'The price is wrong' },
    { kind: 'rejected', comment: '' },
    ...parties.map((role) => ({ kind: 'money_held', role }) as const),
    ...parties.flatMap((role) => actors.map((actor) => ({ kind: 'released', role, actor }) as const)),
    ...parties.flatMap((role) =>
      actors.map((actor) => ({ kind: 'refunded', role, actor, reason: 'Out of stock' }) as const),
    ),
    ...actors.map((actor) => ({ kind: 'dispute_opened', actor, reason: 'Arrived broken' }) as const),
    ...parties.flatMap((role) =>
      (['release', 'refund'] as const).map(
        (outcome) => ({ kind: 'dispute_decided', role, outcome, reason: 'Photos show damage' }) as const,
      ),
    ),
    ...actors.map((actor) => ({ kind: 'cancelled', actor, reason: 'Customer changed mind' }) as const),
    ...DISPUTE_AUTHORS.map(
      (author) => ({ kind: 'dispute_message', author, text: 'See the photo\nof the frame' }) as const,
    ),
  ];

  it.each(notices.map((notice) => [`${notice.kind} ${JSON.stringify(notice).slice(0, 60)}`, notice] as const))(
    'writes %s in both languages, naming the marketplace and linking to the deal',
    (_, notice) => {
      const mails = { en: dealMail('en', 'Anna', facts, notice), ru: dealMail('ru', 'Анна', facts, notice) };
      for (const [locale, mail] of Object.entries(mails)) {
        for (const part of [mail.subject, mail.text]) {
          expect(part).not.toMatch(/undefined|NaN|null|\[object|\{\w+\}/);
          expect(part).toContain('Velo Shop');
        }
        expect(mail.text).toContain(facts.url);
        expect(mail.text).toMatch(locale === 'ru' ? /Здравствуйте, Анна!/ : /Hello Anna,/);
        expect(CYRILLIC.test(mail.subject)).toBe(locale === 'ru');
      }
      expect(CYRILLIC.test(mails.en.text)).toBe(false);
      expect(mails.en.subject).not.toBe(mails.ru.subject);
    },
  );

  it('formats the amount as each language writes it', () => {
    const held: DealNoticeMail = { kind: 'money_held', role: 'buyer' };
    expect(plain(dealMail('ru', '', facts, held).text)).toContain('12 500,00 ₽');
    expect(plain(dealMail('en', '', facts, held).text)).toContain('RUB 12,500.00');
    expect(plain(dealMail('en', '', { ...facts, amount: 99.5, currency: 'USD' }, held).text)).toContain('US$99.50');
  });

  it('states who made a move and why, and leaves out a blank reason', () => {
    const refunded = dealMail('en', '', facts, {
      kind: 'refunded',
      role: 'seller',
      actor: 'marketplace',
      reason: 'Out of stock',
    }).text;
    expect(refunded).toContain('Refunded by: the marketplace Velo Shop');
    expect(refunded).toContain('Reason: Out of stock');
    const ruRefunded = dealMail('ru', '', facts, {
      kind: 'refunded',
      role: 'buyer',
      actor: 'buyer',
      reason: 'Передумал',
    }).text;
    expect(ruRefunded).toContain('Кто вернул: покупатель');
    expect(ruRefunded).toContain('Причина: Передумал');
    const blank = dealMail('en', '', facts, { kind: 'cancelled', reason: '  ' }).text;
    expect(blank).not.toMatch(/Reason|Cancelled by/);
    const decided = dealMail('en', '', facts, {
      kind: 'dispute_decided',
      role: 'buyer',
      outcome: 'refund',
      reason: 'Photos show damage',
    }).text;
    expect(decided).toContain("The arbiter's reason: Photos show damage");
    expect(decided).toContain('is returned to you');
  });

  it('quotes a dispute message line by line and greets without a name', () => {
    const mail = dealMail('en', ' ', facts, {
      kind: 'dispute_message',
      author: 'seller',
      text: 'See the photo\nof the frame',
    });
    expect(mail.text).toMatch(/^Hello,\n/);
    expect(mail.text).toContain(
      'The seller wrote in the dispute on the deal "Bicycle":\n\n> See the photo\n> of the frame',
    );
  });

  it('leaves no empty quotes for an untitled deal', () => {
    const untitled = { ...facts, title: ' ' };
    const en = dealMail('en', '', untitled, { kind: 'approved' });
    const ru = dealMail('ru', '', untitled, { kind: 'approved' });
    expect([en.subject, ru.subject]).toEqual([
      'Velo Shop: the buyer approved the deal',
      'Velo Shop: покупатель согласовал сделку',
    ]);
    expect(en.text + ru.text).not.toMatch(/""|«»|" "|« »/);
  });

  it.each(['buyer', 'seller', 'approver'] as const)(
    'writes the %s invitation in both languages with its links',
    (role) => {
      const input = {
        role,
        name: 'Anna',
        svcId: randomUUID(),
        dealTitle: 'Bicycle',
        marketplaceName: 'Velo Shop',
        link: 'https://svc.example/cabinet/invite?token=inv_1',
        dealUrl: facts.url,
      };
      const mails: Record<'en' | 'ru', Mail> = {
        en: invitationMail({ ...input, locale: 'en' }),
        ru: invitationMail({ ...input, locale: 'ru' }),
      };
      for (const mail of Object.values(mails)) {
        expect(mail.subject).toMatch(/^Velo Shop: /);
        expect(mail.text).toContain(input.svcId);
        expect(mail.text).toContain('Bicycle');
        expect(mail.text).toMatch(/\/cabinet\/invite\?token=inv_1\n/);
        expect(mail.text).toContain(facts.url);
        expect(mail.text).not.toMatch(/undefined|NaN|null/);
      }
      expect(mails.en.text).toContain(
        {
          buyer: 'has opened a safe deal for you',
          seller: 'has opened a safe deal with you',
          approver: 'You are asked to approve the terms',
        }[role],
      );
      expect(CYRILLIC.test(mails.ru.subject)).toBe(true);
      expect(CYRILLIC.test(mails.en.text.replace('Anna', ''))).toBe(false);
    },
  );
});

describe('notifyDealChange', () => {
  let server: TestServer;
  let notify: (notice: DealNotice) => Promise<number>;
  let marketplace: { id: string; name: string };

  beforeAll(async () => {
    server = await startTestServer();
    const { notifyDealChanges } = createDealNotifier(server.services);
    notify = async (notice) => {
      const [outcome] = await notifyDealChanges([notice]);
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    };
    ({ marketplace } = await createMarketplace(server.services.db, { name: uniqueId('Velo Shop'), mode: 'sandbox' }));
  });
  afterAll(async () => {
    await server?.stop();
  });

  const db = () => server.services.db;
  const outbox = (to: string) => server.services.mailer.list({ to, limit: 50 });

  /** A user with this language; with a password unless told otherwise (the notices only ask whether there is one). */
  async function person(locale: 'ru' | 'en', options: { password?: boolean; name?: string } = {}): Promise<string> {
    const email = uniqueEmail(locale);
    const { user } = await ensureUser(db(), { email, name: options.name ?? '' });
    await db().query('UPDATE users SET locale = $2, password_hash = $3 WHERE id = $1', [
      user.id,
      locale,
      options.password === false ? null : 'hash',
    ]);
    return email;
  }

  /** A deal's rows as its workflow writes them, and its steps' notices. */
  async function deal(input: { buyer: string; seller?: string; title?: string; amount?: number }) {
    const id = randomUUID();
    const paymentId = randomUUID();
    await db().query(
      `INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, seller_email, amount) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        id,
        marketplace.id,
        uniqueId('order'),
        input.title ?? 'Bicycle',
        input.buyer,
        input.seller ?? '',
        input.amount ?? 12500,
      ],
    );
    return {
      id,
      url: `${server.url}/cabinet/view/deals/${id}`,
      async approval(status: 'pending' | 'approved' | 'rejected', approver: string, comment = '') {
        await db().query(
          `INSERT INTO deal_approvals (id, deal_id, status, approver, comment) VALUES ($1, $2, $3, $4, $5)`,
          [randomUUID(), id, status, approver, comment],
        );
      },
      async payment(status: PaymentStatus, amount = input.amount ?? 12500) {
        await db().query(
          `INSERT INTO deal_payments (id, deal_id, amount, currency, provider, status) VALUES ($1, $2, $3, 'RUB', 'sandbox', $4)
           ON CONFLICT (id) DO UPDATE SET status = excluded.status`,
          [paymentId, id, amount, status],
        );
      },
      notify: (status: DealNotice['status'], rest: Partial<DealNotice> = {}) =>
        notify({ dealId: id, eventId: randomUUID(), status, ...rest }),
    };
  }

  it('mails a new deal only to parties who can sign in, in their language, naming the marketplace and linking the deal', async () => {
    const buyer = await person('en', { name: 'Anna' });
    const seller = await person('ru', { password: false });
    const d = await deal({ buyer, seller });
    expect(await d.notify('created')).toBe(1);
    const [mail, ...more] = await outbox(buyer);
    expect(more).toEqual([]);
    expect(mail.subject).toBe(`${marketplace.name}: new safe deal "Bicycle"`);
    expect(plain(mail.text)).toContain(`Hello Anna,`);
    expect(plain(mail.text)).toContain(
      `The marketplace ${marketplace.name} has opened a safe deal for you: "Bicycle", RUB 12,500.00.`,
    );
    expect(mail.text).toContain(d.url);
    expect(await outbox(seller)).toEqual([]);

    const russianSeller = await person('ru');
    const other = await deal({ buyer: await person('en', { password: false }), seller: russianSeller, amount: 990.5 });
    expect(await other.notify('created')).toBe(1);
    const [ruMail] = await outbox(russianSeller);
    expect(ruMail.subject).toBe(`${marketplace.name}: новая безопасная сделка «Bicycle»`);
    expect(plain(ruMail.text)).toContain(
      // The marketplace opened the deal, not the buyer.
      `Маркетплейс ${marketplace.name} открыл безопасную сделку «Bicycle» на сумму 990,50 ₽, в которой вы продавец.`,
    );
  });

  it('writes nothing new when the same change is notified again, also concurrently', async () => {
    const buyer = await person('ru');
    const seller = await person('en');
    const d = await deal({ buyer, seller });
    await d.payment('hold');
    const notice: DealNotice = { dealId: d.id, eventId: randomUUID(), status: 'escrow_hold' };
    expect(await Promise.all([notify(notice), notify(notice), notify(notice)])).toEqual([2, 2, 2]);
    expect(await notify(notice)).toBe(2);
    expect((await outbox(buyer)).length).toBe(1);
    expect((await outbox(seller)).length).toBe(1);
    // Another event of the same status is another mail.
    expect(await d.notify('escrow_hold')).toBe(2);
    expect((await outbox(buyer)).length).toBe(2);
  });

  it('mails nobody for attached documents or an unknown deal', async () => {
    const buyer = await person('ru');
    const d = await deal({ buyer, seller: await person('en') });
    expect(await d.notify('docs')).toBe(0);
    expect(await notify({ dealId: randomUUID(), eventId: randomUUID(), status: 'paid' })).toBe(0);
    expect(await outbox(buyer)).toEqual([]);
  });

  it('asks the approver to approve; an approver without a password gets the invitation instead, unless it is the buyer', async () => {
    const buyer = await person('ru', { password: false });
    const seller = await person('en');
    const d = await deal({ buyer, seller });
    await d.approval('pending', buyer);
    expect(await d.notify('approval')).toBe(1);
    const [mail] = await outbox(buyer);
    expect(mail.subject).toBe(`${marketplace.name}: согласуйте условия сделки «Bicycle»`);
    expect(mail.text).toContain(d.url);
    expect(await outbox(seller)).toEqual([]);

    const newcomer = uniqueEmail('approver');
    const withNewcomer = await deal({ buyer: await person('ru') });
    await withNewcomer.approval('pending', newcomer);
    expect(await withNewcomer.notify('approval')).toBe(0);
    expect(await outbox(newcomer)).toEqual([]);

    const manager = await person('en');
    const withManager = await deal({ buyer: await person('ru') });
    await withManager.approval('pending', manager);
    expect(await withManager.notify('approval')).toBe(1);
    expect((await outbox(manager))[0].subject).toBe(
      `${marketplace.name}: please approve the terms of the deal "Bicycle"`,
    );
  });

  it("tells the seller of the buyer's decision, with the comment on a rejection", async () => {
    const buyer = await person('en');
    const seller = await person('ru');
    const d = await deal({ buyer, seller });
    await d.approval('rejected', buyer, 'Цена не та');
    expect(await d.notify('rejected', { actor: 'buyer', reason: 'Цена не та' })).toBe(1);
    await d.approval('approved', buyer);
    expect(await d.notify('approved', { actor: 'buyer' })).toBe(1);
    const [approved, rejected] = await outbox(seller);
    expect(rejected.subject).toBe(`${marketplace.name}: покупатель отклонил сделку «Bicycle»`);
    expect(rejected.text).toContain('Комментарий покупателя: Цена не та');
    expect(approved.subject).toBe(`${marketplace.name}: покупатель согласовал сделку «Bicycle»`);
    expect(await outbox(buyer)).toEqual([]);

    // Without a seller the decision concerns nobody else.
    const alone = await deal({ buyer });
    await alone.approval('approved', buyer);
    expect(await alone.notify('approved', { actor: 'buyer' })).toBe(0);
  });

  it('tells both sides of money held and released, each in their language, with the amount paid', async () => {
    const buyer = await person('ru');
    const seller = await person('en');
    const d = await deal({ buyer, seller, amount: 15000 });
    await d.payment('hold', 12500);
    expect(await d.notify('escrow_hold', { actor: 'marketplace' })).toBe(2);
    await d.payment('released');
    expect(await d.notify('paid', { actor: 'buyer' })).toBe(2);

    const [buyerReleased, buyerHeld] = await outbox(buyer);
    expect(buyerHeld.subject).toBe(`${marketplace.name}: деньги по сделке «Bicycle» зарезервированы`);
    expect(plain(buyerHeld.text)).toContain('Ваш платёж по сделке «Bicycle», 12 500,00 ₽, зарезервирован.');
    expect(plain(buyerReleased.text)).toContain('Деньги по сделке «Bicycle», 12 500,00 ₽, переведены продавцу.');
    expect(buyerReleased.text).toContain('Кто перевёл: покупатель');

    const [sellerReleased, sellerHeld] = await outbox(seller);
    expect(plain(sellerHeld.text)).toContain(
      `The buyer's payment for the deal "Bicycle", RUB 12,500.00, is held in escrow.`,
    );
    expect(sellerReleased.subject).toBe(`${marketplace.name}: money released for the deal "Bicycle"`);
    expect(sellerReleased.text).toContain('has been released to you');
    for (const mail of [buyerHeld, buyerReleased, sellerHeld, sellerReleased]) expect(mail.text).toContain(d.url);
  });

  it("tells a refund by the buyer or the marketplace apart from the arbiter's decision, with the reason", async () => {
    const buyer = await person('en');
    const seller = await person('en');
    const byMarketplace = await deal({ buyer, seller });
    await byMarketplace.payment('refunded');
    expect(await byMarketplace.notify('refunded', { actor: 'marketplace', reason: 'Out of stock' })).toBe(2);
    const [refunded] = await outbox(seller);
    expect(refunded.subject).toBe(`${marketplace.name}: money returned for the deal "Bicycle"`);
    expect(refunded.text).toContain(`Refunded by: the marketplace ${marketplace.name}\nReason: Out of stock`);

    const byArbiter = await deal({ buyer, seller });
    await byArbiter.payment('disputed');
    expect(await byArbiter.notify('disputed', { actor: 'buyer', reason: 'Arrived broken' })).toBe(2);
    await byArbiter.payment('refunded');
    expect(await byArbiter.notify('refunded', { actor: 'arbiter', reason: 'The photos show a cracked frame' })).toBe(2);
    const [decided, opened] = await outbox(seller);
    expect(opened.subject).toBe(`${marketplace.name}: dispute opened on the deal "Bicycle"`);
    expect(opened.text).toContain('Opened by: the buyer\nReason: Arrived broken');
    expect(decided.subject).toBe(`${marketplace.name}: the arbiter decided the dispute on the deal "Bicycle"`);
    expect(decided.text).toContain("The arbiter's reason: The photos show a cracked frame");
    expect(decided.text).toContain('is returned to the buyer');
    expect(decided.text).not.toContain('Refunded by');
    expect((await outbox(buyer))[0].text).toContain('is returned to you');
  });

  it('tells both sides of a release the arbiter decided', async () => {
    const buyer = await person('ru');
    const seller = await person('ru');
    const d = await deal({ buyer, seller });
    await d.payment('released');
    expect(await d.notify('paid', { actor: 'arbiter', reason: 'Товар доставлен' })).toBe(2);
    const [mail] = await outbox(buyer);
    expect(mail.subject).toBe(`${marketplace.name}: арбитр решил спор по сделке «Bicycle»`);
    expect(mail.text).toContain('переводятся продавцу');
    expect(mail.text).toContain('Обоснование арбитра: Товар доставлен');
    expect((await outbox(seller))[0].text).toContain('переводятся вам');
  });

  it('tells both sides of a cancellation before payment, and Russian to someone without an account yet', async () => {
    const buyer = await person('en');
    const seller = uniqueEmail('no-account');
    const d = await deal({ buyer, seller });
    expect(await d.notify('cancelled', { actor: 'marketplace', reason: 'Sold out' })).toBe(2);
    const [english] = await outbox(buyer);
    expect(english.subject).toBe(`${marketplace.name}: the deal "Bicycle" was cancelled`);
    expect(english.text).toContain(`Cancelled by: the marketplace ${marketplace.name}\nReason: Sold out`);
    const [russian] = await outbox(seller);
    expect(russian.subject).toBe(`${marketplace.name}: сделка «Bicycle» отменена`);
    expect(russian.text).toContain('Причина: Sold out');
  });

  it('tells the other side of a dispute message, and both of one from the arbiter', async () => {
    const buyer = await person('en');
    const seller = await person('ru');
    const d = await deal({ buyer, seller });
    await d.payment('disputed');
    expect(await d.notify('disputed', { disputeMessage: { author: 'buyer', text: 'The frame is cracked' } })).toBe(1);
    expect(await outbox(buyer)).toEqual([]);
    const [fromBuyer] = await outbox(seller);
    expect(fromBuyer.subject).toBe(`${marketplace.name}: новое сообщение в споре по сделке «Bicycle»`);
    expect(fromBuyer.text).toContain('Покупатель пишет в споре по сделке «Bicycle»:\n\n> The frame is cracked');

    expect(await d.notify('disputed', { disputeMessage: { author: 'arbiter', text: 'Send a photo, please' } })).toBe(2);
    expect((await outbox(buyer))[0].text).toContain(
      'The arbiter wrote in the dispute on the deal "Bicycle":\n\n> Send a photo, please',
    );
    expect((await outbox(seller)).length).toBe(2);
  });

  it('mails a person who is both buyer and seller once', async () => {
    const both = await person('en');
    const d = await deal({ buyer: both, seller: both.toUpperCase() });
    await d.payment('hold');
    expect(await d.notify('escrow_hold')).toBe(1);
    expect((await outbox(both)).length).toBe(1);
  });
});
