// The buyer cabinet's web pages, driven as a browser would over real HTTP (redirects not followed, cookies kept by
// hand), against the real PostgreSQL, the Temporal dev server and our worker: invitation → password → approvals →
// confirmed escrow moves, the seller's view, the dispute thread with files, CSRF, sign-in and its `next`, other
// buyers' deals, and Russian.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import {
  createDealViaApi,
  insertHeldDeal,
  insertHeldDealSignedIn,
  type CabinetSession,
  insertMarketplace,
  type TestMarketplace,
} from '../factories.ts';
import { PageBrowser, type Reply } from '../page-browser.ts';

let server: TestServer;
let marketplace: TestMarketplace;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  marketplace = await insertMarketplace(server.services, { name: 'Pages shop' });
});
afterAll(async () => {
  await server?.stop();
});

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const mkt = () => ({ 'X-Svc-Key': marketplace.secret_key });
const api = (path: string) => `${server.url}/api/mkt${path}`;
const PASSWORD = 'a strong password';

type Page = Reply;

/** A browser without JavaScript against this file's server (test/page-browser.ts). */
class Browser extends PageBrowser {
  constructor(headers: Record<string, string> = {}) {
    super(server, headers);
  }
}

const csrfOf = (page: Page) => /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
const words = (page: Page) => page.text.replace(/\s+/g, ' ');

/** What this file's deals sell. */
const BICYCLE = { title: 'Bicycle', amount: 1500.5 };
/**
 * A bicycle with a seller whose money is held, written as the workflow leaves it (the approval and the escrow on the
 * pages have tests of their own).
 */
const heldBicycle = () =>
  ({
    ...BICYCLE,
    marketplaceId: marketplace.id,
    seller: true,
    document: { kind: 'contract', name: 'Terms.pdf' },
  }) as const;

/** A deal waiting for the buyer's approval, with one contract. */
async function dealInApproval(fields: Record<string, unknown> = {}) {
  const deal = await createDealViaApi(server, marketplace, { ...BICYCLE, ...fields });
  const upload = await fetch(api(`/deals/${deal.id}/documents?kind=contract&name=Terms.pdf`), {
    method: 'POST',
    headers: { ...mkt(), 'Content-Type': 'application/pdf' },
    body: Buffer.from('%PDF-1.4 terms'),
  });
  expect(upload.status).toBe(201);
  const document = await json(upload);
  const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, mkt()));
  expect(approval.status).toBe('pending');
  return { deal, document, approval };
}

const dealStatus = async (dealId: string) =>
  (await json(await fetch(api(`/deals/${dealId}`), { headers: mkt() }))).status;

/** The invitation link's path and query, from the dev outbox. */
async function invitationPath(email: string): Promise<string> {
  let link: string | undefined;
  await expect
    .poll(
      async () => {
        const { items } = await json(
          await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers: admin() }),
        );
        // Deal notices may have arrived since: the newest mail that carries an invitation link.
        link = items
          .map((item: { text: string }) => item.text.match(/https?:\/\/\S+\/cabinet\/invite\?token=\S+/)?.[0])
          .find(Boolean);
        return link;
      },
      { timeout: 20_000 },
    )
    .toBeDefined();
  const url = new URL(link!);
  expect(url.origin).toBe(server.url);
  return `${url.pathname}${url.search}`;
}

/** The buyer opens the invitation link, sets a password and lands in the cabinet. */
async function buyerBrowser(email: string, headers: Record<string, string> = {}): Promise<Browser> {
  const browser = new Browser(headers);
  const form = await browser.get(await invitationPath(email));
  expect(form.status).toBe(200);
  const token = /name="token" value="([^"]+)"/.exec(form.text)![1];
  const accepted = await browser.post('/cabinet/invite', {
    _csrf: csrfOf(form),
    token,
    password: PASSWORD,
    password_confirm: PASSWORD,
  });
  expect(accepted.status).toBe(303);
  // Back to the deal the invitation was about.
  expect(accepted.location).toMatch(/^\/cabinet\/view\/deals\/[0-9a-f-]{36}$/);
  return browser;
}

describe('a buyer from the invitation mail to a paid deal', () => {
  it('sets a password, approves with the CSRF token, releases the escrow, and the deal is paid', async () => {
    const { deal, document, approval } = await dealInApproval({ title: 'Bike <script>alert(1)</script> & "bell"' });
    const browser = new Browser();

    const invite = await browser.get(await invitationPath(deal.buyer_email));
    expect(invite.status).toBe(200);
    expect(invite.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(invite.headers.get('x-frame-options')).toBe('DENY');
    expect(invite.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(invite.headers.get('referrer-policy')).toBe('no-referrer');
    expect(invite.headers.get('cache-control')).toBe('no-store');
    expect(invite.text).not.toMatch(/<script/i);
    expect(invite.text).toMatch(/<label for="password">New password<\/label>/);
    expect(invite.text).toMatch(/<label for="password_confirm">Repeat the password<\/label>/);
    // The page says who opened which deal, so the person knows why they are asked for a password.
    expect(words(invite)).toContain(
      'Pages shop has opened a safe deal for you: Bike &#60;script&#62;alert(1)&#60;/script&#62; &#38; &#34;bell&#34;, RUB 1,500.50. Once the password is set, the deal opens.',
    );
    const token = /name="token" value="([^"]+)"/.exec(invite.text)![1];

    const mismatch = await browser.post('/cabinet/invite', {
      _csrf: csrfOf(invite),
      token,
      password: PASSWORD,
      password_confirm: 'another one',
    });
    expect(mismatch.status).toBe(400);
    expect(words(mismatch)).toContain('The two passwords differ');
    const noCsrf = await browser.post('/cabinet/invite', { token, password: PASSWORD, password_confirm: PASSWORD });
    expect(noCsrf.status).toBe(403);

    const accepted = await browser.post('/cabinet/invite', {
      _csrf: csrfOf(invite),
      token,
      password: PASSWORD,
      password_confirm: PASSWORD,
    });
    expect(accepted.status).toBe(303);
    expect(accepted.location).toBe(`/cabinet/view/deals/${deal.id}`);
    const sessionCookie = accepted.headers.getSetCookie().find((line) => line.startsWith('svc_session='))!;
    const lifetime = server.services.config.CABINET_TOKEN_TTL_SECONDS;
    expect(sessionCookie).toMatch(
      new RegExp(`^svc_session=ct_[\\w-]+; Path=/; Max-Age=${lifetime}; HttpOnly; SameSite=Lax$`),
    );

    const landed = await browser.follow(accepted);
    expect(landed.status).toBe(200);
    expect(landed.text).toContain('<dt>Marketplace</dt><dd id="marketplace">Pages shop</dd>');
    const home = await browser.get('/cabinet');
    expect(home.status).toBe(200);
    expect(home.headers.get('cache-control')).toBe('no-store');
    expect(home.text).toContain('<h2 id="approvals">Approvals</h2>');
    expect(home.text).toContain('<h2 id="deals">Deals</h2>');
    expect(home.text).toContain('Bike &#60;script&#62;alert(1)&#60;/script&#62; &#38; &#34;bell&#34;');
    expect(home.text).not.toContain('<script>alert(1)');
    expect(words(home)).toContain('RUB 1,500.50');
    expect(home.text).toContain(`href="/cabinet/documents/${document.id}/content"`);
    expect(home.text).toContain(`action="/cabinet/view/approvals/${approval.id}/approve"`);
    expect(home.text).toContain(`action="/cabinet/view/approvals/${approval.id}/reject"`);
    expect(words(home)).toContain('Waiting for approval');
    expect(home.text).toContain('<link rel="stylesheet" href="/cabinet/assets/cabinet.css">');
    const css = await browser.get('/cabinet/assets/cabinet.css');
    expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);

    const download = await browser.get(`/cabinet/documents/${document.id}/content`);
    expect(download.status).toBe(200);
    expect(download.text).toBe('%PDF-1.4 terms');

    const forged = await browser.post(`/cabinet/view/approvals/${approval.id}/approve`, {});
    expect(forged.status).toBe(403);
    expect(forged.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(words(forged)).toContain('This form has expired');
    const wrong = await browser.post(`/cabinet/view/approvals/${approval.id}/approve`, { _csrf: 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    expect(await dealStatus(deal.id)).toBe('approval');

    // The approval asks the person to say they read the contract; a post without the tick approves nothing.
    expect(home.text).toMatch(
      new RegExp(
        `<label class="check" for="read-contract-${approval.id}"><input type="checkbox" id="read-contract-${approval.id}" name="read_contract" value="yes" required> I have read the contract`,
      ),
    );
    const unread = await browser.post(`/cabinet/view/approvals/${approval.id}/approve`, { _csrf: csrfOf(home) });
    expect(unread.status).toBe(400);
    expect(words(unread)).toContain('To approve, first read the contract and tick “I have read the contract”.');
    expect(await dealStatus(deal.id)).toBe('approval');

    const approved = await browser.post(`/cabinet/view/approvals/${approval.id}/approve`, {
      _csrf: csrfOf(home),
      read_contract: 'yes',
    });
    expect(approved.location).toBe(`/cabinet/view/deals/${deal.id}?done=approved`);
    const afterApproval = await browser.follow(approved);
    expect(words(afterApproval)).toContain('You approved the terms.');
    expect(words(afterApproval)).toContain('Terms approved, waiting for payment');
    expect(await dealStatus(deal.id)).toBe('approved');

    const twice = await browser.post(`/cabinet/view/approvals/${approval.id}/approve`, {
      _csrf: csrfOf(home),
      read_contract: 'yes',
    });
    expect(twice.status).toBe(400);
    expect(twice.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(words(twice)).toContain('This approval has already been decided.');

    const escrow = await post(api(`/deals/${deal.id}/escrow`), {}, mkt());
    expect(await json(escrow)).toMatchObject({ status: 'hold', provider: 'sandbox' });
    const held = await browser.get(`/cabinet/view/deals/${deal.id}`);
    expect(words(held)).toContain('Paid: the money is held in escrow');
    // Each move is a link to its confirmation; the deal page itself has no form that moves money.
    for (const action of ['release', 'refund', 'dispute']) {
      expect(held.text).toContain(`href="/cabinet/view/deals/${deal.id}/escrow/${action}"`);
      expect(held.text).not.toContain(`action="/cabinet/view/deals/${deal.id}/escrow/${action}"`);
    }

    const confirm = await browser.get(`/cabinet/view/deals/${deal.id}/escrow/release`);
    expect(confirm.status).toBe(200);
    expect(words(confirm)).toContain('Release the money to the seller?');
    expect(words(confirm)).toContain(
      'The seller gets RUB 1,500.50. This cannot be undone: the money cannot be returned to you afterwards.',
    );
    expect(confirm.text).toContain(`<form method="post" action="/cabinet/view/deals/${deal.id}/escrow/release">`);
    expect(confirm.text).toContain('<input type="hidden" name="confirmed" value="yes">');
    expect(confirm.text).toContain(`href="/cabinet/view/deals/${deal.id}">No, back to the deal</a>`);
    expect(await dealStatus(deal.id)).toBe('escrow_hold');

    // A post without the confirmation (an old page's form, a forged one with a stolen token) only shows the question.
    const unconfirmed = await browser.post(`/cabinet/view/deals/${deal.id}/escrow/release`, { _csrf: csrfOf(held) });
    expect(unconfirmed.status).toBe(200);
    expect(words(unconfirmed)).toContain('Release the money to the seller?');
    expect(await dealStatus(deal.id)).toBe('escrow_hold');
    const noToken = await browser.post(`/cabinet/view/deals/${deal.id}/escrow/release`, { confirmed: 'yes' });
    expect(noToken.status).toBe(403);
    expect(await dealStatus(deal.id)).toBe('escrow_hold');

    // Where to pay the seller: the marketplace's test card for this deal.
    const destination = await fetch(api(`/deals/${deal.id}/payout-destination`), {
      method: 'PUT',
      headers: { ...mkt(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'test_card', token: '4111111111111111' }),
    });
    expect(destination.status).toBe(200);
    const released = await browser.post(`/cabinet/view/deals/${deal.id}/escrow/release`, {
      _csrf: csrfOf(confirm),
      confirmed: 'yes',
    });
    expect(released.location).toBe(`/cabinet/view/deals/${deal.id}?done=released`);
    expect(words(await browser.follow(released))).toContain('The money was sent to the seller.');
    // The seller's payout follows the release: then the deal is paid.
    await expect.poll(() => dealStatus(deal.id)).toBe('paid');
    const paid = await browser.get(`/cabinet/view/deals/${deal.id}`);
    expect(words(paid)).toContain('Completed: the money was sent to the seller');
    expect(paid.text).not.toContain('/escrow/release"');
    expect(await dealStatus(deal.id)).toBe('paid');

    const late = await browser.get(`/cabinet/view/deals/${deal.id}/escrow/refund`);
    expect(late.status).toBe(400);
    expect(words(late)).toContain('This deal is closed and cannot change any more.');
    expect(late.text).not.toContain('name="confirmed"');
    const again = await browser.post(`/cabinet/view/deals/${deal.id}/escrow/refund`, {
      _csrf: csrfOf(held),
      confirmed: 'yes',
    });
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // The refusal in words (the deal is closed; the service may name it by the payment's state), never its code.
    expect(words(again)).toMatch(
      /<p class="error" role="alert">(This deal is closed and cannot change any more\.|The payment cannot be moved that way now\.)/,
    );
    expect(again.text).not.toMatch(/deal_closed|invalid_payment_state/);
    expect(await dealStatus(deal.id)).toBe('paid');
  });

  it('rejects with a comment, shown escaped in the history', async () => {
    const { deal, approval } = await dealInApproval();
    const browser = await buyerBrowser(deal.buyer_email);
    const home = await browser.get('/cabinet');
    const rejected = await browser.post(`/cabinet/view/approvals/${approval.id}/reject`, {
      _csrf: csrfOf(home),
      comment: 'Wrong <b>size</b>',
    });
    expect(rejected.location).toBe(`/cabinet/view/deals/${deal.id}?done=rejected`);
    const page = await browser.follow(rejected);
    expect(words(page)).toContain('Terms rejected');
    expect(page.text).toContain('Wrong &#60;b&#62;size&#60;/b&#62;');
    const decided = await json(await fetch(api(`/deals/${deal.id}`), { headers: mkt() }));
    expect(decided.approvals[0]).toMatchObject({ status: 'rejected', comment: 'Wrong <b>size</b>' });
  });
});

describe('sessions', () => {
  it('signs in with the password, refuses a wrong one with 401, and never follows an outside next', async () => {
    const { deal } = await dealInApproval();
    await buyerBrowser(deal.buyer_email);
    const browser = new Browser();

    const anonymous = await browser.get(`/cabinet/view/deals/${deal.id}`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toBe(`/cabinet/sign-in?next=${encodeURIComponent(`/cabinet/view/deals/${deal.id}`)}`);

    const form = await browser.follow(anonymous);
    expect(form.text).toContain(`name="next" value="/cabinet/view/deals/${deal.id}"`);
    expect(form.text).toMatch(/<label for="email">E-mail<\/label>/);
    const noCsrf = await browser.post('/cabinet/sign-in', { email: deal.buyer_email, password: PASSWORD });
    expect(noCsrf.status).toBe(403);
    const wrong = await browser.post('/cabinet/sign-in', {
      _csrf: csrfOf(form),
      email: deal.buyer_email,
      password: 'not the password',
    });
    expect(wrong.status).toBe(401);
    expect(words(wrong)).toContain('The e-mail or the password is wrong.');
    expect(wrong.text).toContain(`value="${deal.buyer_email}"`);
    expect(browser.cookies.has('svc_session')).toBe(false);

    const signedIn = await browser.post('/cabinet/sign-in', {
      _csrf: csrfOf(form),
      email: deal.buyer_email,
      password: PASSWORD,
      next: `/cabinet/view/deals/${deal.id}`,
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(`/cabinet/view/deals/${deal.id}`);
    expect((await browser.follow(signedIn)).status).toBe(200);

    for (const next of [
      '//evil.example',
      '/\\evil.example',
      'https://evil.example/',
      '/\t/evil.example',
      'javascript:alert(1)',
    ]) {
      const outsider = new Browser();
      const page = await outsider.get(`/cabinet/sign-in?next=${encodeURIComponent(next)}`);
      expect(page.text, next).toContain('name="next" value="/cabinet"');
      const response = await outsider.post('/cabinet/sign-in', {
        _csrf: csrfOf(page),
        email: deal.buyer_email,
        password: PASSWORD,
        next,
      });
      expect(response.location, next).toBe('/cabinet');
    }
  });

  it('signs out: the cookie is cleared and the token stops working', async () => {
    const { deal } = await dealInApproval();
    const browser = await buyerBrowser(deal.buyer_email);
    const token = browser.cookies.get('svc_session')!;
    expect((await fetch(`${server.url}/cabinet/me`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(
      200,
    );
    const home = await browser.get('/cabinet');
    expect((await browser.post('/cabinet/sign-out', {})).status).toBe(403);
    const out = await browser.post('/cabinet/sign-out', { _csrf: csrfOf(home) });
    expect(out.location).toBe('/cabinet/sign-in?signed_out=1');
    expect(browser.cookies.has('svc_session')).toBe(false);
    expect(words(await browser.follow(out))).toContain('You have signed out.');
    expect((await fetch(`${server.url}/cabinet/me`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(
      401,
    );
    const again = await new Browser().get('/cabinet', { Cookie: `svc_session=${token}` });
    expect(again.status).toBe(303);
  });

  it('marks its cookies Secure when the public address is https', async () => {
    const plain = await new Browser().get('/cabinet/sign-in');
    expect(plain.headers.get('set-cookie')).not.toContain('Secure');
    const original = server.services.config.BASE_URL;
    server.services.config.BASE_URL = 'https://cabinet.example';
    try {
      const page = await new Browser().get('/cabinet/sign-in?lang=en');
      const cookies = page.headers.getSetCookie();
      expect(cookies).toHaveLength(2);
      for (const cookie of cookies) expect(cookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      server.services.config.BASE_URL = original;
    }
  });

  it('explains an invitation link that is wrong or already used', async () => {
    const browser = new Browser();
    const bogus = await browser.get(
      '/cabinet/invite?token=inv_00000000-0000-0000-0000-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    );
    expect(bogus.status).toBe(400);
    expect(bogus.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(words(bogus)).toContain('This invitation link does not work');
    expect(bogus.text).toContain('href="/cabinet/sign-in"');
    expect(bogus.text).not.toContain('name="password"');

    const { deal } = await dealInApproval();
    const link = await invitationPath(deal.buyer_email);
    await buyerBrowser(deal.buyer_email);
    const used = await new Browser().get(link);
    expect(used.status).toBe(400);
    expect(words(used)).toContain('was already used');
  });
});

describe("another buyer's deal", () => {
  it('is a 404 page, its document cannot be downloaded, and its approval cannot be decided', async () => {
    const { deal, document, approval } = await dealInApproval();
    const other = await createDealViaApi(server, marketplace, BICYCLE);
    const stranger = await buyerBrowser(other.buyer_email);

    const page = await stranger.get(`/cabinet/view/deals/${deal.id}`);
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(words(page)).toContain('Not found');
    expect(page.text).not.toContain('Terms.pdf');
    expect((await stranger.get('/cabinet/view/deals/not-a-uuid')).status).toBe(404);
    expect((await stranger.get(`/cabinet/documents/${document.id}/content`)).status).toBe(404);

    const home = await stranger.get('/cabinet');
    expect(home.text).not.toContain(deal.id);
    const decided = await stranger.post(`/cabinet/view/approvals/${approval.id}/approve`, { _csrf: csrfOf(home) });
    expect(decided.status).toBe(404);
    const escrow = await stranger.post(`/cabinet/view/deals/${deal.id}/escrow/refund`, {
      _csrf: csrfOf(home),
      confirmed: 'yes',
    });
    expect(escrow.status).toBe(404);
    expect((await stranger.get(`/cabinet/view/deals/${deal.id}/escrow/refund`)).status).toBe(404);
    expect(await dealStatus(deal.id)).toBe('approval');
  });
});

describe('language', () => {
  it('speaks Russian when the browser prefers it, and remembers ?lang=en', async () => {
    const { deal } = await dealInApproval({ amount: 2500 });
    const browser = await buyerBrowser(deal.buyer_email, { 'Accept-Language': 'ru-RU,ru;q=0.9,en-US;q=0.8' });
    const home = await browser.get('/cabinet');
    expect(home.text).toContain('<html lang="ru">');
    expect(home.headers.get('content-language')).toBe('ru');
    expect(home.text).toContain('<h2 id="approvals">Согласования</h2>');
    expect(words(home)).toContain('2 500,00 ₽');
    expect(words(home)).toContain('Ожидает согласования');
    expect(home.text).toContain('>Согласовать</button>');

    const english = await browser.get('/cabinet?lang=en');
    expect(english.text).toContain('<html lang="en">');
    expect(english.text).toContain('<h2 id="approvals">Approvals</h2>');
    expect(browser.cookies.get('svc_lang')).toBe('en');
    const remembered = await browser.get(`/cabinet/view/deals/${deal.id}`);
    expect(remembered.text).toContain('<html lang="en">');
    expect(remembered.text).toContain('href="/cabinet/view/deals/' + deal.id + '?lang=ru"');

    const signIn = await new Browser({ 'Accept-Language': 'ru' }).get('/cabinet/sign-in');
    expect(signIn.text).toContain('<label for="email">Электронная почта</label>');
    const englishFirst = await new Browser({ 'Accept-Language': 'en-US,en;q=0.9,ru;q=0.8' }).get('/cabinet/sign-in');
    expect(englishFirst.text).toContain('<html lang="en">');
  });
});

/** A page browser signed in with this session. */
function signedIn(session: CabinetSession, headers: Record<string, string> = {}): Browser {
  const browser = new Browser(headers);
  browser.cookies.set(...session.cookie);
  return browser;
}

/** The seller signs in on the sign-in page with a password of their account. */
async function sellerBrowser(email: string, headers: Record<string, string> = {}): Promise<Browser> {
  const { user } = await ensureUser(server.services.db, { email });
  await setPassword(server.services.db, user.id, PASSWORD);
  const browser = new Browser(headers);
  const form = await browser.get('/cabinet/sign-in');
  expect((await browser.post('/cabinet/sign-in', { _csrf: csrfOf(form), email, password: PASSWORD })).status).toBe(303);
  return browser;
}

describe('the seller', () => {
  it('sees the deal with their role and no buyer move, and cannot reach a confirmation', async () => {
    const held = await insertHeldDeal(server.services, heldBicycle());
    const seller = await sellerBrowser(held.sellerEmail);

    const home = await seller.get('/cabinet');
    expect(home.text).toContain(`href="/cabinet/view/deals/${held.dealId}"`);
    expect(words(home)).toContain('Your role: Seller');
    // A seller approves nothing: no empty Approvals section.
    expect(home.text).not.toContain('<h2 id="approvals">');

    const page = await seller.get(`/cabinet/view/deals/${held.dealId}`);
    expect(page.status).toBe(200);
    expect(words(page)).toContain('Paid: the money is held in escrow');
    expect(words(page)).toContain('Terms.pdf');
    expect(words(page)).toContain('The money is held. The buyer releases it to you');
    expect(page.text).not.toContain('/escrow/');
    expect(page.text).not.toContain('/approve"');
    for (const action of ['release', 'refund', 'dispute']) {
      expect((await seller.get(`/cabinet/view/deals/${held.dealId}/escrow/${action}`)).status).toBe(404);
      expect(
        (
          await seller.post(`/cabinet/view/deals/${held.dealId}/escrow/${action}`, {
            _csrf: csrfOf(page),
            confirmed: 'yes',
            reason: 'mine',
          })
        ).status,
      ).toBe(404);
    }
    expect(await dealStatus(held.dealId)).toBe('escrow_hold');
  });
});

describe('a dispute on the pages', () => {
  it('asks for a reason on the confirmation, opens, and carries messages with files both ways', async () => {
    const held = await insertHeldDealSignedIn(server.services, heldBicycle());
    const buyer = signedIn(held.sessions.buyer);

    const confirm = await buyer.get(`/cabinet/view/deals/${held.dealId}/escrow/dispute`);
    expect(words(confirm)).toContain('Open a dispute?');
    expect(words(confirm)).toContain('The money (RUB 1,500.50) stays held until the arbiter decides');
    expect(confirm.text).toContain('<textarea id="reason" name="reason" required maxlength="2000"');
    const blank = await buyer.post(`/cabinet/view/deals/${held.dealId}/escrow/dispute`, {
      _csrf: csrfOf(confirm),
      confirmed: 'yes',
      reason: '   ',
    });
    expect(blank.status).toBe(400);
    expect(words(blank)).toContain('Say why you open the dispute: the reason is required.');
    expect(words(blank)).toContain('Open a dispute?');
    expect(await dealStatus(held.dealId)).toBe('escrow_hold');

    const opened = await buyer.post(`/cabinet/view/deals/${held.dealId}/escrow/dispute`, {
      _csrf: csrfOf(confirm),
      confirmed: 'yes',
      reason: 'No <wheels>',
    });
    expect(opened.location).toBe(`/cabinet/view/deals/${held.dealId}?done=disputed`);
    const disputed = await buyer.follow(opened);
    expect(words(disputed)).toContain('The dispute is open. The money stays held until the arbiter decides.');
    expect(disputed.text).toContain('No &#60;wheels&#62;');
    expect(disputed.text).toContain(
      `action="/cabinet/view/deals/${held.dealId}/dispute/messages" enctype="multipart/form-data"`,
    );
    expect(await dealStatus(held.dealId)).toBe('disputed');

    const seller = await sellerBrowser(held.sellerEmail);
    const sellerPage = await seller.get(`/cabinet/view/deals/${held.dealId}`);
    expect(sellerPage.text).toContain('enctype="multipart/form-data"');
    const form = new FormData();
    form.append('_csrf', csrfOf(sellerPage));
    form.append('text', 'The wheels were\nin a second box');
    form.append('files', new Blob(['tracking 42'], { type: 'text/plain' }), 'Трекинг.txt');
    const forged = new FormData();
    forged.append('text', 'no token');
    expect((await seller.postMultipart(`/cabinet/view/deals/${held.dealId}/dispute/messages`, forged)).status).toBe(
      403,
    );
    const sent = await seller.postMultipart(`/cabinet/view/deals/${held.dealId}/dispute/messages`, form);
    expect(sent.location).toBe(`/cabinet/view/deals/${held.dealId}?done=message_sent`);
    expect(words(await seller.follow(sent))).toContain('Your message was added to the dispute.');

    const read = await buyer.get(`/cabinet/view/deals/${held.dealId}`);
    expect(read.text).toContain('<strong>Seller</strong>');
    expect(read.text).toMatch(/The wheels were\r?\nin a second box/); // browsers send line breaks as CRLF
    const link = /href="(\/cabinet\/documents\/[^"]+\/content)" download>Трекинг\.txt<\/a>/.exec(read.text);
    expect(link).not.toBeNull();
    const file = await buyer.get(link![1]);
    expect(file.status).toBe(200);
    expect(file.text).toBe('tracking 42');
    expect(file.headers.get('content-disposition')).toBe(
      `attachment; filename*=UTF-8''${encodeURIComponent('Трекинг.txt')}`,
    );

    const empty = new FormData();
    empty.append('_csrf', csrfOf(read));
    empty.append('text', '  ');
    const refused = await buyer.postMultipart(`/cabinet/view/deals/${held.dealId}/dispute/messages`, empty);
    expect(refused.status).toBe(400);
    expect(words(refused)).toContain('Write a message or attach a photo or a file: the message must not be empty.');
    expect(read.text).toContain('<label for="message-text">Message (optional with a file)</label>');

    // A photo alone is a message: no text needed.
    const photo = new FormData();
    photo.append('_csrf', csrfOf(read));
    photo.append('text', '');
    photo.append('files', new Blob(['jpeg'], { type: 'image/jpeg' }), 'crack.jpg');
    const photoSent = await buyer.postMultipart(`/cabinet/view/deals/${held.dealId}/dispute/messages`, photo);
    expect(photoSent.location).toBe(`/cabinet/view/deals/${held.dealId}?done=message_sent`);
    const withPhoto = await seller.get(`/cabinet/view/deals/${held.dealId}`);
    expect(withPhoto.text).toMatch(/<strong>Buyer<\/strong>[^]*download>crack\.jpg<\/a>/);
    expect(withPhoto.text).not.toContain('<p class="text"></p>');
    // A photo is previewed on the page and opens in the browser; other files are only downloaded.
    const inline = /<img src="(\/cabinet\/documents\/[^"]+\/content\?view=inline)" alt="crack\.jpg"/.exec(
      withPhoto.text,
    );
    expect(inline).not.toBeNull();
    expect(withPhoto.text).not.toMatch(/<img[^>]*alt="Трекинг\.txt"/);
    const shown = await seller.get(inline![1]);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-type')).toBe('image/jpeg');
    expect(shown.headers.get('content-disposition')).toBe("inline; filename*=UTF-8''crack.jpg");
    expect(shown.headers.get('content-security-policy')).toBe("default-src 'none'; img-src 'self'; sandbox");
    const text = await seller.get(`${link![1]}?view=inline`);
    expect(text.headers.get('content-disposition')).toMatch(/^attachment;/);
  });
});

describe("the arbiter's refund", () => {
  it("reads as the arbiter's decision, not as a cancellation, in English and Russian", async () => {
    const held = await insertHeldDealSignedIn(server.services, heldBicycle());
    const cabinet = (path: string) => `${server.url}/cabinet/deals/${held.dealId}${path}`;
    expect((await post(cabinet('/escrow/dispute'), { reason: 'Broken frame' }, held.buyer)).status).toBe(200);
    const decided = await post(
      `${server.url}/admin/deals/${held.dealId}/escrow/resolve`,
      { outcome: 'refund', reason: 'Photos show the crack' },
      admin(),
    );
    expect(decided.status).toBe(200);
    const english = await signedIn(held.sessions.buyer).get(`/cabinet/view/deals/${held.dealId}`);
    expect(words(english)).toContain('Refunded by the arbiter’s decision: the money went back to the buyer');
    expect(words(english)).not.toContain('Cancelled: the money was returned');
    const russian = await signedIn(held.sessions.seller, { 'Accept-Language': 'ru' }).get('/cabinet');
    expect(words(russian)).toContain('Деньги возвращены покупателю по решению арбитра');
    expect(words(russian)).not.toContain('Отменена: деньги возвращены');
  });
});

describe('confirmations in Russian', () => {
  it('state each consequence in Russian', async () => {
    const held = await insertHeldDealSignedIn(server.services, heldBicycle());
    const buyer = signedIn(held.sessions.buyer, { 'Accept-Language': 'ru' });
    const release = await buyer.get(`/cabinet/view/deals/${held.dealId}/escrow/release`);
    expect(release.text).toContain('<html lang="ru">');
    expect(release.text).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(words(release)).toContain('Перевести деньги продавцу?');
    expect(words(release)).toContain('Отменить это нельзя');
    expect(words(await buyer.get(`/cabinet/view/deals/${held.dealId}/escrow/refund`))).toContain(
      'вернутся вам, и сделка завершится',
    );
    expect(words(await buyer.get(`/cabinet/view/deals/${held.dealId}/escrow/dispute`))).toContain(
      'остаются удержанными, пока арбитр не решит',
    );
    expect(await dealStatus(held.dealId)).toBe('escrow_hold');
  });
});
