// The account pages driven as a browser without JavaScript would, over real HTTP (redirects not followed, cookies
// kept by hand): sign-up through the mailed link back to where it started, forgotten password, profile and language,
// password change, sessions and signing out everywhere, CSRF, and both languages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { json, startTestServer, uniqueEmail, uniqueLoopback, type TestServer, UUID_SOURCE } from '../helpers.ts';
import { PageBrowser, type Reply } from '../page-browser.ts';

let server: TestServer;

beforeAll(async () => {
  // Wrong passwords count per client address in the database every test shares: a test that types one comes from an
  // address of its own (X-Forwarded-For, trusted here).
  server = await startTestServer({ env: { TRUST_PROXY: '1' } });
});
afterAll(async () => {
  await server?.stop();
});

const PASSWORD = 'a strong password';

type Page = Reply;

/** A browser without JavaScript against this file's server (test/page-browser.ts). */
class Browser extends PageBrowser {
  constructor(headers: Record<string, string> = {}) {
    super(server, headers);
  }
}

/** The form token on a page. */
const csrfOf = (page: Page) => /name="_csrf" value="([^"]+)"/.exec(page.text)![1];

async function mails(email: string): Promise<{ subject: string; text: string }[]> {
  const response = await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, {
    headers: { Authorization: `Bearer ${server.adminToken}` },
  });
  return (await json(response)).items;
}

async function linkPath(email: string, path: string): Promise<string> {
  const found = (await mails(email))
    .map((mail) => new RegExp(`${server.url}(${path}\\?token=\\S+)`).exec(mail.text)?.[1])
    .find(Boolean);
  expect(found).toBeDefined();
  return found!;
}

async function accountWithPassword(name = 'Dana') {
  const email = uniqueEmail('pages');
  const { user } = await ensureUser(server.services.db, { email, name });
  await setPassword(server.services.db, user.id, PASSWORD);
  return { email, user };
}

async function signIn(browser: Browser, email: string, password = PASSWORD): Promise<void> {
  const form = await browser.get('/cabinet/sign-in');
  const done = await browser.post('/cabinet/sign-in', { _csrf: csrfOf(form), email, password, next: '/cabinet' });
  expect(done.status).toBe(303);
}

describe('sign-in page', () => {
  it('links to the forgotten-password and sign-up pages, carrying next to both', async () => {
    const next = '/sso/authorize?client_id=shop&state=s1';
    const page = await new Browser().get(`/cabinet/sign-in?next=${encodeURIComponent(next)}`);
    expect(page.text).toContain(
      `href="/cabinet/forgot-password?next=${encodeURIComponent(next)}">Forgot your password?</a>`,
    );
    expect(page.text).toContain(`href="/cabinet/sign-up?next=${encodeURIComponent(next)}"`);
    const ru = await new Browser({ 'Accept-Language': 'ru' }).get('/cabinet/sign-in');
    expect(ru.text).toContain('Забыли пароль?');
    expect(ru.text).toContain('Создать учётную запись');
  });
});

describe('sign-up pages', () => {
  it('sign up, confirm from the mail with a button, and land back where the sign-in started', async () => {
    const browser = new Browser({ 'Accept-Language': 'en', 'User-Agent': 'Pages test browser' });
    const email = uniqueEmail('newcomer');
    const next = '/sso/authorize?client_id=shop&state=s1';
    const form = await browser.get(`/cabinet/sign-up?next=${encodeURIComponent(next)}`);
    expect(form.status).toBe(200);
    for (const field of ['name="email"', 'name="name"', 'name="password"', 'name="password_confirm"', 'name="next"'])
      expect(form.text).toContain(field);

    const mismatch = await browser.post('/cabinet/sign-up', {
      _csrf: csrfOf(form),
      email,
      name: 'Egor',
      password: PASSWORD,
      password_confirm: 'something else',
      next,
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain('The two passwords differ');
    expect(await mails(email)).toEqual([]);

    const sent = await browser.post('/cabinet/sign-up', {
      _csrf: csrfOf(form),
      email,
      name: 'Egor',
      password: PASSWORD,
      password_confirm: PASSWORD,
      next,
    });
    expect(sent.status).toBe(303);
    const checkMail = await browser.follow(sent);
    expect(checkMail.text).toContain('Check your mail');
    // The notice alone, and the way back to sign in still going where the person was going.
    expect(checkMail.text).not.toContain('<form method="post" action="/cabinet/sign-up"');
    expect(checkMail.text).toContain(`href="/cabinet/sign-in?next=${encodeURIComponent(next)}"`);
    expect((await mails(email))[0].subject).toBe('svc ID: confirm your e-mail address');

    // The link from the mail, opened in another browser: showing it (as a mail scanner would) spends nothing.
    const link = await linkPath(email, '/cabinet/sign-up/confirm');
    const other = new Browser({ 'Accept-Language': 'en' });
    await other.get(link);
    const confirm = await other.get(link);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Confirm and sign in');
    const token = /name="token" value="([^"]+)"/.exec(confirm.text)![1];
    const refused = await other.post('/cabinet/sign-up/confirm', { token });
    expect(refused.status).toBe(403);

    const confirmed = await other.post('/cabinet/sign-up/confirm', { _csrf: csrfOf(confirm), token });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe(next);
    expect(other.cookies.get('svc_session')).toMatch(/^ct_/);
    const profile = await other.get('/cabinet/view/profile');
    expect(profile.status).toBe(200);
    expect(profile.text).toContain('value="Egor"');
    const svcId = (await server.services.db.query('SELECT id FROM users WHERE lower(email) = lower($1)', [email]))
      .rows[0].id;
    expect(profile.text).toContain(svcId);

    const used = await other.post('/cabinet/sign-up/confirm', { _csrf: csrfOf(confirm), token });
    expect(used.status).toBe(400);
    expect(used.text).toContain('This link does not work');
  });

  it('welcomes on the profile when no safe next was given, in Russian', async () => {
    const browser = new Browser({ 'Accept-Language': 'ru' });
    const email = uniqueEmail('novice');
    const form = await browser.get('/cabinet/sign-up');
    expect(form.text).toContain('Создать учётную запись');
    await browser.post('/cabinet/sign-up', {
      _csrf: csrfOf(form),
      email,
      name: '',
      password: PASSWORD,
      password_confirm: PASSWORD,
      next: 'https://evil.example/x',
    });
    expect((await mails(email))[0].subject).toBe('svc ID: подтвердите адрес электронной почты');
    const confirm = await browser.get(await linkPath(email, '/cabinet/sign-up/confirm'));
    const token = /name="token" value="([^"]+)"/.exec(confirm.text)![1];
    const done = await browser.post('/cabinet/sign-up/confirm', { _csrf: csrfOf(confirm), token });
    expect(done.location).toBe('/cabinet/view/profile?done=signed_up');
    expect((await browser.follow(done)).text).toContain('Учётная запись готова');
  });

  it('says in words that a link does not work', async () => {
    const page = await new Browser({ 'Accept-Language': 'ru' }).get('/cabinet/sign-up/confirm?token=sup_forged');
    expect(page.status).toBe(400);
    expect(page.text).toContain('Эта ссылка не работает');
  });
});

describe('forgotten password pages', () => {
  it('keeps where the person was going through the mail, and the new password leads back there', async () => {
    const { email } = await accountWithPassword();
    const next = '/sso/authorize?client_id=shop&redirect_uri=https%3A%2F%2Fshop.example%2Fcb&state=s1';
    // An address of its own: reset mails are limited per client address in the database all tests share.
    const browser = new Browser({ 'Accept-Language': 'ru', 'X-Forwarded-For': uniqueLoopback() });
    const form = await browser.get(`/cabinet/forgot-password?next=${encodeURIComponent(next)}`);
    expect(form.text).toContain(`<input type="hidden" name="next" value="${next.replace(/&/g, '&#38;')}">`);
    const sent = await browser.post('/cabinet/forgot-password', { _csrf: csrfOf(form), email, next });
    expect(sent.location).toBe(`/cabinet/forgot-password?done=sent&next=${encodeURIComponent(next)}`);
    const notice = await browser.follow(sent);
    expect(notice.text).toContain('ссылка для нового пароля');
    expect(notice.text).not.toContain('<form method="post" action="/cabinet/forgot-password"');
    expect(notice.text).toContain(`href="/cabinet/sign-in?next=${encodeURIComponent(next)}"`);

    const reset = await browser.get(await linkPath(email, '/cabinet/reset-password'));
    const token = /name="token" value="([^"]+)"/.exec(reset.text)![1];
    const done = await browser.post('/cabinet/reset-password', {
      _csrf: csrfOf(reset),
      token,
      password: 'the new password',
      password_confirm: 'the new password',
    });
    expect(done.location).toBe(next);
  });

  it('never leads a reset to another site, whatever next was given', async () => {
    const { email } = await accountWithPassword();
    const browser = new Browser({ 'X-Forwarded-For': uniqueLoopback() });
    const form = await browser.get('/cabinet/forgot-password?next=https%3A%2F%2Fevil.example%2F');
    expect(form.text).toContain('<input type="hidden" name="next" value="/cabinet">');
    const sent = await browser.post('/cabinet/forgot-password', {
      _csrf: csrfOf(form),
      email,
      next: '//evil.example/',
    });
    expect(sent.location).toBe('/cabinet/forgot-password?done=sent');
    const reset = await browser.get(await linkPath(email, '/cabinet/reset-password'));
    const done = await browser.post('/cabinet/reset-password', {
      _csrf: csrfOf(reset),
      token: /name="token" value="([^"]+)"/.exec(reset.text)![1],
      password: 'the new password',
      password_confirm: 'the new password',
    });
    expect(done.location).toBe('/cabinet/view/security?done=password_reset');
  });

  it('mails a link; the reset page sets the password, signs in and says so', async () => {
    const { email } = await accountWithPassword();
    const elsewhere = new Browser();
    await signIn(elsewhere, email);
    const browser = new Browser({ 'Accept-Language': 'en' });
    const form = await browser.get('/cabinet/forgot-password');
    expect((await browser.post('/cabinet/forgot-password', { email })).status).toBe(403);
    const sent = await browser.post('/cabinet/forgot-password', { _csrf: csrfOf(form), email });
    expect(sent.location).toBe('/cabinet/forgot-password?done=sent');
    const notice = await browser.follow(sent);
    expect(notice.text).toContain('a link to set a new password is on its way');
    // The notice alone: no filled form below it that would look unsent.
    expect(notice.text).not.toContain('<form method="post" action="/cabinet/forgot-password"');
    // An unknown address gets the same answer.
    const unknown = await browser.post('/cabinet/forgot-password', {
      _csrf: csrfOf(form),
      email: uniqueEmail('nobody'),
    });
    expect(unknown.location).toBe(sent.location);

    const reset = await browser.get(await linkPath(email, '/cabinet/reset-password'));
    expect(reset.status).toBe(200);
    const token = /name="token" value="([^"]+)"/.exec(reset.text)![1];
    const short = await browser.post('/cabinet/reset-password', {
      _csrf: csrfOf(reset),
      token,
      password: 'short',
      password_confirm: 'short',
    });
    expect(short.status).toBe(400);
    expect(short.text).toContain('The password is too short');
    const done = await browser.post('/cabinet/reset-password', {
      _csrf: csrfOf(reset),
      token,
      password: 'the new password',
      password_confirm: 'the new password',
    });
    expect(done.location).toBe('/cabinet/view/security?done=password_reset');
    expect((await browser.follow(done)).text).toContain('Your new password is set');
    // The other browser was signed out.
    expect((await elsewhere.get('/cabinet/view/profile')).status).toBe(303);
    expect((await browser.get(`/cabinet/reset-password?token=${encodeURIComponent(token)}`)).status).toBe(400);
  });
});

describe('profile page', () => {
  it('saves the name and the language, and the pages follow the language', async () => {
    const { email } = await accountWithPassword('Old');
    const browser = new Browser({ 'Accept-Language': 'en' });
    await signIn(browser, email);
    const page = await browser.get('/cabinet/view/profile');
    expect(page.text).toContain('value="Old"');
    // Plain words for a private person, no "organization".
    expect(page.text).toContain('<dt>Name in deals</dt><dd>Old</dd>');
    expect(page.text).not.toMatch(/organi[sz]ation/i);
    expect((await browser.post('/cabinet/view/profile', { name: 'New', locale: 'ru' })).status).toBe(403);
    const tooLong = await browser.post('/cabinet/view/profile', {
      _csrf: csrfOf(page),
      name: 'x'.repeat(201),
      locale: 'ru',
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('The name is too long');

    const saved = await browser.post('/cabinet/view/profile', { _csrf: csrfOf(page), name: 'New', locale: 'ru' });
    expect(saved.location).toBe('/cabinet/view/profile?done=saved');
    expect(saved.setCookies.some((line) => line.startsWith('svc_lang=ru;'))).toBe(true);
    const after = await browser.follow(saved);
    expect(after.text).toContain('Профиль сохранён.');
    expect(after.text).toContain('value="New"');
    expect(after.text).toMatch(/<option value="ru" lang="ru" selected>/);
    expect(after.text).toContain('<dt>Имя в сделках</dt>');
    const locale = await server.services.db.query(
      'SELECT locale, locale_chosen, name FROM users WHERE lower(email) = lower($1)',
      [email],
    );
    // Chosen by the person: a marketplace's buyer_locale no longer changes it.
    expect(locale.rows[0]).toEqual({ locale: 'ru', locale_chosen: true, name: 'New' });
  });
});

describe('the time zone on the profile page', () => {
  it('offers the zones with Moscow time first, saves a choice, and refuses one not on the list', async () => {
    const { email } = await accountWithPassword('Zina');
    const browser = new Browser({ 'Accept-Language': 'ru' });
    await signIn(browser, email);
    const page = await browser.get('/cabinet/view/profile');
    expect(page.text).toContain('<label for="time_zone">Часовой пояс для времени на страницах и в письмах</label>');
    expect(page.text).toMatch(
      /<select class="field" id="time_zone" name="time_zone"[^>]*><option value="" selected>Московское время/,
    );
    expect(page.text).toContain('<option value="Asia/Vladivostok">Asia/Vladivostok</option>');

    const bad = await browser.post('/cabinet/view/profile', {
      _csrf: csrfOf(page),
      name: 'Other',
      locale: 'ru',
      time_zone: 'Mars/Olympus_Mons',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Выберите часовой пояс из списка.');
    const zone = async () =>
      (await server.services.db.query('SELECT time_zone, name FROM users WHERE lower(email) = lower($1)', [email]))
        .rows[0];
    expect(await zone()).toEqual({ time_zone: null, name: 'Zina' });

    const saved = await browser.post('/cabinet/view/profile', {
      _csrf: csrfOf(page),
      name: 'Zina',
      locale: 'ru',
      time_zone: 'Asia/Vladivostok',
    });
    expect(saved.location).toBe('/cabinet/view/profile?done=saved');
    expect((await browser.follow(saved)).text).toContain('<option value="Asia/Vladivostok" selected>');
    expect(await zone()).toEqual({ time_zone: 'Asia/Vladivostok', name: 'Zina' });
    // The sessions list shows its times in that zone, named.
    expect((await browser.get('/cabinet/view/security')).text).toMatch(/\d{2}:\d{2} Asia\/Vladivostok/);

    const moscow = await browser.post('/cabinet/view/profile', {
      _csrf: csrfOf(page),
      name: 'Zina',
      locale: 'ru',
      time_zone: '',
    });
    expect(moscow.status).toBe(303);
    expect(await zone()).toEqual({ time_zone: null, name: 'Zina' });
  });
});

describe('security page', () => {
  it('changes the password with words for both outcomes, and only this browser stays signed in', async () => {
    const { email } = await accountWithPassword();
    const browser = new Browser({ 'Accept-Language': 'en', 'X-Forwarded-For': uniqueLoopback() });
    const other = new Browser();
    await signIn(browser, email);
    await signIn(other, email);
    const page = await browser.get('/cabinet/view/security');
    const wrong = await browser.post('/cabinet/view/security/password', {
      _csrf: csrfOf(page),
      current_password: 'not the password',
      password: 'brand new password',
      password_confirm: 'brand new password',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('The current password is wrong');
    const changed = await browser.post('/cabinet/view/security/password', {
      _csrf: csrfOf(page),
      current_password: PASSWORD,
      password: 'brand new password',
      password_confirm: 'brand new password',
    });
    expect(changed.location).toBe('/cabinet/view/security?done=password_changed');
    expect((await browser.follow(changed)).text).toContain('Your password is changed');
    expect((await other.get('/cabinet/view/security')).status).toBe(303);
  });

  it('lists sessions with this device marked, revokes one, and signs out everywhere after a confirmation', async () => {
    const { email } = await accountWithPassword();
    const desk =
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const browser = new Browser({ 'Accept-Language': 'en', 'User-Agent': desk });
    const phone = new Browser({
      'User-Agent':
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1',
    });
    const tablet = new Browser({ 'User-Agent': 'Tablet browser' });
    for (const b of [browser, phone, tablet]) await signIn(b, email);
    const page = await browser.get('/cabinet/view/security');
    // Each device by a name a person recognises; the raw User-Agent in the title.
    expect(page.text).toContain(
      `<strong title="${desk}">Chrome on Windows</strong> <span class="status">(this device)`,
    );
    expect(page.text).toContain('>Unknown browser</strong>');
    expect(page.text).not.toMatch(/Safari on iPhone<\/strong> <span/);
    const phoneId = new RegExp(
      `Safari on iPhone</strong>[\\s\\S]*?/cabinet/view/sessions/(${UUID_SOURCE})/revoke`,
    ).exec(page.text)![1];

    expect((await browser.post(`/cabinet/view/sessions/${phoneId}/revoke`, {})).status).toBe(403);
    const revoked = await browser.post(`/cabinet/view/sessions/${phoneId}/revoke`, { _csrf: csrfOf(page) });
    expect(revoked.location).toBe('/cabinet/view/security?done=session_revoked');
    expect((await browser.follow(revoked)).text).toContain('That session is signed out.');
    expect((await phone.get('/cabinet/view/security')).status).toBe(303);
    expect((await tablet.get('/cabinet/view/security')).status).toBe(200);

    const confirm = await browser.get('/cabinet/view/security/sign-out-everywhere');
    expect(confirm.text).toContain('Yes, sign out everywhere');
    // Without the confirmation, only the confirmation page again.
    const unconfirmed = await browser.post('/cabinet/view/security/sign-out-everywhere', { _csrf: csrfOf(confirm) });
    expect(unconfirmed.status).toBe(200);
    expect((await tablet.get('/cabinet/view/security')).status).toBe(200);
    const out = await browser.post('/cabinet/view/security/sign-out-everywhere', {
      _csrf: csrfOf(confirm),
      confirmed: 'yes',
    });
    expect(out.location).toBe('/cabinet/sign-in?signed_out=everywhere');
    expect((await browser.follow(out)).text).toContain('You have signed out on every device.');
    expect((await tablet.get('/cabinet/view/security')).status).toBe(303);
    expect((await browser.get('/cabinet/view/security')).status).toBe(303);
  });

  it('speaks Russian', async () => {
    const { email } = await accountWithPassword();
    const browser = new Browser({
      'Accept-Language': 'ru',
      'User-Agent':
        'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
    });
    await signIn(browser, email);
    const page = await browser.get('/cabinet/view/security');
    expect(page.text).toContain('>Chrome на Android</strong>');
    expect(page.text).toContain('Сменить пароль');
    expect(page.text).toContain('это устройство');
    expect(page.text).toContain('Выйти везде');
  });
});
