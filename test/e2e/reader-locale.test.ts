// The reader's language in mails and pages: a marketplace's buyer_locale and seller_locale on deal creation, the
// language a person chose themselves (profile, a page's language switch) winning over it, and the administrator's
// invitation in the language it is given. Over HTTP, with the worker that makes the parties' accounts and mails them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser } from '../../src/accounts/users.ts';
import {
  cabinetSession,
  createDealViaApi,
  insertHeldDealSignedIn,
  insertMarketplace,
  postDeal,
  postWidgetDeal,
  type TestMarketplace,
} from '../factories.ts';
import { dealMail } from '../../src/mail/templates.ts';
import { json, post, startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';

const CYRILLIC = /[а-яё]/i;

let server: TestServer;
let marketplace: TestMarketplace;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  marketplace = await insertMarketplace(server.services, { name: 'Velo Shop' });
});
afterAll(() => server?.stop());

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });

/** The one mail to this address whose text matches, once it is there. */
async function mailTo(email: string, text: RegExp): Promise<{ subject: string; text_body: string }> {
  let found: { subject: string; text_body: string } | undefined;
  await expect
    .poll(
      async () => {
        const rows = await server.services.db.query<{ subject: string; text_body: string }>(
          'SELECT subject, text_body FROM mail_outbox WHERE recipient = $1 ORDER BY created_at',
          [email],
        );
        found = rows.rows.find((row) => text.test(row.text_body));
        return found;
      },
      { timeout: 20_000 },
    )
    .toBeDefined();
  return found!;
}

async function localeOf(email: string): Promise<{ locale: string; locale_chosen: boolean } | undefined> {
  const rows = await server.services.db.query(
    'SELECT locale, locale_chosen FROM users WHERE lower(email) = lower($1)',
    [email],
  );
  return rows.rows[0];
}

describe('buyer_locale and seller_locale on POST /api/mkt/deals', () => {
  it('makes the new accounts in the languages given and mails each invitation in it', async () => {
    const deal = await createDealViaApi(server, marketplace, { seller: true, buyer_locale: 'en', seller_locale: 'ru' });
    const buyerMail = await mailTo(deal.buyer_email, /\/cabinet\/invite\?token=/);
    expect(buyerMail.subject).toBe('Velo Shop: your account for safe deals');
    expect(CYRILLIC.test(buyerMail.text_body)).toBe(false);
    expect(buyerMail.text_body).toContain('The marketplace Velo Shop has opened a safe deal for you: "Sofa"');
    const sellerMail = await mailTo(deal.seller_email, /\/cabinet\/invite\?token=/);
    // The marketplace opened the deal, not the buyer; one word for the account.
    expect(sellerMail.text_body).toContain(
      'Маркетплейс Velo Shop открыл безопасную сделку «Sofa», в которой вы продавец',
    );
    expect(sellerMail.subject).toBe('Velo Shop: ваша учётная запись для безопасных сделок');
    expect(sellerMail.text_body).not.toContain('аккаунт');
    expect(await localeOf(deal.buyer_email)).toEqual({ locale: 'en', locale_chosen: false });
    expect(await localeOf(deal.seller_email)).toEqual({ locale: 'ru', locale_chosen: false });
  });

  it('turns an account whose person never chose a language to the one given', async () => {
    const email = uniqueEmail('follows');
    await ensureUser(server.services.db, { email });
    expect(await localeOf(email)).toEqual({ locale: 'ru', locale_chosen: false });
    await createDealViaApi(server, marketplace, { buyer_email: email, buyer_locale: 'en' });
    await expect.poll(() => localeOf(email), { timeout: 20_000 }).toEqual({ locale: 'en', locale_chosen: false });
    expect(CYRILLIC.test((await mailTo(email, /\/cabinet\/invite\?token=/)).subject)).toBe(false);
  });

  it('keeps the language a person chose in the profile, and writes their mail in it', async () => {
    const email = uniqueEmail('chose');
    const session = await cabinetSession(server.services, email);
    const patched = await fetch(`${server.url}/cabinet/profile`, {
      method: 'PATCH',
      headers: { ...session.headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ locale: 'ru' }),
    });
    expect(patched.status).toBe(200);
    expect(await localeOf(email)).toEqual({ locale: 'ru', locale_chosen: true });
    const deal = await createDealViaApi(server, marketplace, { buyer_email: email, buyer_locale: 'en' });
    const mail = await mailTo(email, /\/cabinet\/invite\?token=/);
    expect(mail.subject).toBe('Velo Shop: ваша учётная запись для безопасных сделок');
    expect(await localeOf(email)).toEqual({ locale: 'ru', locale_chosen: true });
    expect(deal.id).toBeTruthy();
  });

  it.each([
    [{ buyer_locale: 'de' }, 'buyer_locale'],
    [{ seller_locale: 'EN' }, 'seller_locale'],
    [{ buyer_locale: '' }, 'buyer_locale'],
  ])('refuses %j with a problem naming %s and makes nothing', async (fields, path) => {
    const email = uniqueEmail('refused');
    const { response, created } = await postDeal(server, marketplace, { buyer_email: email, ...fields });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(created.code).toBe('validation_failed');
    expect(created.errors.map((error: { path: string }) => error.path)).toContain(path);
    expect(await localeOf(email)).toBeUndefined();
  });

  it('answers a repeat that gives another language with 409 deal_conflict naming it', async () => {
    const deal = await createDealViaApi(server, marketplace, { buyer_locale: 'en' });
    const same = await post(`${server.url}/api/mkt/deals`, deal.body, { 'X-Svc-Key': marketplace.secret_key });
    expect(same.status).toBe(200);
    const other = await post(
      `${server.url}/api/mkt/deals`,
      { ...deal.body, buyer_locale: 'ru' },
      { 'X-Svc-Key': marketplace.secret_key },
    );
    expect(other.status).toBe(409);
    expect((await json(other)).fields).toEqual(['buyer_locale']);
  });
});

describe('buyer_locale from the widget', () => {
  const widgetDeals = `/api/mkt/widget/deals`;

  it('makes the buyer’s account in the widget’s language; a repeat in another language is the same deal, not 409', async () => {
    const { response, body, deal } = await postWidgetDeal(server, marketplace, { buyer_locale: 'en' });
    expect(response.status).toBe(201);
    expect((await mailTo(body.buyer_email, /\/cabinet\/invite\?token=/)).subject).toBe(
      'Velo Shop: your account for safe deals',
    );
    expect(await localeOf(body.buyer_email)).toEqual({ locale: 'en', locale_chosen: false });

    // The buyer switched the widget to Russian and pressed Continue again: the same deal, the first language kept.
    const switched = await post(`${server.url}${widgetDeals}`, { ...body, buyer_locale: 'ru' });
    expect(switched.status).toBe(200);
    expect((await json(switched)).id).toBe(deal.id);
    const stored = await server.services.db.query('SELECT buyer_locale FROM deals WHERE id = $1', [deal.id]);
    expect(stored.rows[0].buyer_locale).toBe('en');
    // A page load in the other language finds the order's deal too.
    const found = await post(`${server.url}${widgetDeals}/lookup`, { ...body, buyer_locale: 'ru' });
    expect(found.status).toBe(200);
    expect((await json(found)).id).toBe(deal.id);
    // Another term of the deal is still another deal.
    const other = await post(`${server.url}${widgetDeals}`, { ...body, buyer_locale: 'ru', amount: 1 });
    expect(other.status).toBe(409);
    expect((await json(other)).fields).toEqual(['amount']);
  });

  it('refuses a language the widget does not speak with a problem naming buyer_locale', async () => {
    const { response, deal } = await postWidgetDeal(server, marketplace, { buyer_locale: 'de' });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(deal.errors.map((error: { path: string }) => error.path)).toContain('buyer_locale');
  });
});

describe("a page's language switch while signed in", () => {
  it('saves the language to the profile as the person’s choice, which a later deal does not change', async () => {
    const email = uniqueEmail('switch');
    const session = await cabinetSession(server.services, email);
    const cookie = { Cookie: `${session.cookie[0]}=${session.cookie[1]}` };
    const page = await fetch(`${server.url}/cabinet/view/profile?lang=en`, { headers: cookie });
    expect(page.status).toBe(200);
    expect(await localeOf(email)).toEqual({ locale: 'en', locale_chosen: true });
    const profile = await json(await fetch(`${server.url}/cabinet/profile`, { headers: session.headers }));
    expect(profile.locale).toBe('en');

    await createDealViaApi(server, marketplace, { buyer_email: email, buyer_locale: 'ru' });
    const mail = await mailTo(email, /Velo Shop/);
    expect(CYRILLIC.test(mail.subject)).toBe(false);
    expect(await localeOf(email)).toEqual({ locale: 'en', locale_chosen: true });
  });

  it('shows a browser without a language of its own the one the person chose, and else the browser’s', async () => {
    const chose = await cabinetSession(server.services, uniqueEmail('chose-en'));
    const patched = await fetch(`${server.url}/cabinet/profile`, {
      method: 'PATCH',
      headers: { ...chose.headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ locale: 'en' }),
    });
    expect(patched.status).toBe(200);
    const elsewhere = await fetch(`${server.url}/cabinet`, {
      headers: { Cookie: `${chose.cookie[0]}=${chose.cookie[1]}`, 'Accept-Language': 'ru' },
    });
    expect(await elsewhere.text()).toContain('<html lang="en">');
    expect(elsewhere.headers.get('set-cookie')).toContain('svc_lang=en');

    // Never chosen (Russian by default): the browser's language decides, and nothing is remembered for it.
    const never = await cabinetSession(server.services, uniqueEmail('never'));
    const page = await fetch(`${server.url}/cabinet`, {
      headers: { Cookie: `${never.cookie[0]}=${never.cookie[1]}`, 'Accept-Language': 'en' },
    });
    expect(await page.text()).toContain('<html lang="en">');
    expect(page.headers.get('set-cookie') ?? '').not.toContain('svc_lang');
  });

  it('changes nobody’s profile for a reader who is not signed in', async () => {
    const page = await fetch(`${server.url}/cabinet/sign-in?lang=en`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toContain('svc_lang=en');
  });
});

describe('the administrator invitation', () => {
  const invite = (body: Record<string, unknown>) => post(`${server.url}/admin/administrators`, body, admin());

  it('is written in the locale given, and in Russian without one, naming the role in words', async () => {
    const english = uniqueEmail('admin-en');
    expect((await invite({ email: english, role: 'support', locale: 'en' })).status).toBe(201);
    const en = await mailTo(english, /\/admin\/setup\?token=/);
    expect(en.subject).toBe('svc console: you are an administrator now');
    expect(en.text_body).toContain('(role: support)');
    expect(await localeOf(english)).toEqual({ locale: 'en', locale_chosen: false });

    const russian = uniqueEmail('admin-ru');
    expect((await invite({ email: russian, role: 'arbiter' })).status).toBe(201);
    const ru = await mailTo(russian, /\/admin\/setup\?token=/);
    expect(ru.subject).toBe('Консоль svc: вы администратор');
    expect(ru.text_body).toContain('(роль: арбитр)');
  });

  it('refuses another locale with a problem and makes no administrator', async () => {
    const email = uniqueEmail('admin-de');
    const response = await invite({ email, role: 'support', locale: 'de' });
    expect(response.status).toBe(400);
    expect((await json(response)).errors.map((error: { path: string }) => error.path)).toContain('locale');
    expect(await localeOf(email)).toBeUndefined();
  });
});

describe('the time zone in the profile', () => {
  const patch = (headers: Record<string, string>, body: unknown) =>
    fetch(`${server.url}/cabinet/profile`, {
      method: 'PATCH',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('is an IANA name, checked, and null goes back to Moscow time; a bad one changes nothing', async () => {
    const session = await cabinetSession(server.services, uniqueEmail('zone'));
    expect((await json(await fetch(`${server.url}/cabinet/profile`, { headers: session.headers }))).time_zone).toBe(
      null,
    );
    const set = await patch(session.headers, { time_zone: 'europe/berlin' });
    expect(set.status).toBe(200);
    expect((await json(set)).time_zone).toBe('Europe/Berlin');
    for (const bad of ['Mars/Olympus_Mons', '+03:00', 'x'.repeat(65)]) {
      const refused = await patch(session.headers, { time_zone: bad, name: 'Changed' });
      expect(refused.status, bad).toBe(400);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
      expect((await json(refused)).errors.map((error: { path: string }) => error.path)).toContain('time_zone');
    }
    const kept = await json(await fetch(`${server.url}/cabinet/profile`, { headers: session.headers }));
    expect(kept).toMatchObject({ time_zone: 'Europe/Berlin', name: '' });
    expect((await json(await patch(session.headers, { name: 'Zoe' }))).time_zone).toBe('Europe/Berlin');
    expect((await json(await patch(session.headers, { time_zone: null }))).time_zone).toBe(null);
  });

  it("shows the deal page's times in the reader's zone, named, and mails name theirs", async () => {
    const held = await insertHeldDealSignedIn(server.services, { marketplaceId: marketplace.id });
    const cookie = {
      Cookie: `${held.sessions.buyer.cookie[0]}=${held.sessions.buyer.cookie[1]}`,
      'Accept-Language': 'en',
    };
    const moscow = await (await fetch(`${server.url}/cabinet/view/deals/${held.dealId}`, { headers: cookie })).text();
    expect(moscow).toMatch(/\d{2}:\d{2} Moscow time/);
    expect((await patch(held.buyer, { time_zone: 'America/New_York' })).status).toBe(200);
    const page = await (await fetch(`${server.url}/cabinet/view/deals/${held.dealId}`, { headers: cookie })).text();
    expect(page).toMatch(/\d{2}:\d{2} America\/New York/);
    expect(page).not.toContain('Moscow time');

    const mail = dealMail(
      'en',
      'Ann',
      { marketplaceName: 'Velo Shop', title: 'Bike', amount: 10, currency: 'RUB', url: 'https://svc.example/d' },
      { kind: 'inspection_reminder', inspection_ends_at: '2026-11-25T21:30:00.000Z' },
      'America/New_York',
    );
    expect(mail.text.replace(/\u202f/g, ' ')).toContain('ends 25 Nov 2026, 16:30 America/New York.');
  });
});
