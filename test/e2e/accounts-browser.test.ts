// Accounts and single sign-on as people meet them, in Debian's Chromium: a new user arrives from a client site's
// "Sign in with svc", signs up, confirms the mail, consents and lands back at the client, whose server reads their
// name; a second client needs no password; a forgotten password is reset from its mail; a data key issued in the
// cabinet works on the data API and stops at once when revoked. Once in English at a desktop width, once in Russian
// at a phone width.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, uniqueEmail, type TestServer, UUID_PATTERN } from '../helpers.ts';
import { exchange, registerClient, type Client } from '../sso-helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 900 };

let main: TestServer;
let data: TestServer;
let browser: Browser;
let callbacks: http.Server;
let redirectUri: string;
let shop: Client;
let forum: Client;

beforeAll(async () => {
  main = await startTestServer();
  data = await startTestServer({ kind: 'data' });
  // The client sites: their callback page only says where the browser got to; their servers exchange the code below.
  callbacks = http.createServer((_request, response) =>
    response.end('<!doctype html><title>Client</title><p id="client">back at the client</p>'),
  );
  await new Promise<void>((resolve) => callbacks.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`;
  shop = await registerClient(main, { name: 'Corner Shop', redirect_uris: redirectUri });
  forum = await registerClient(main, { name: 'Makers Forum', redirect_uris: redirectUri });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => callbacks?.close(resolve));
  await data?.stop();
  await main?.stop();
});

const authorizeUrl = (client: Client, state: string) =>
  `${main.url}/sso/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: redirectUri, state, scope: 'openid profile email org' })}`;

/** The newest link to this path in the mails to this address, once it has arrived. */
async function linkFromMail(email: string, path: string): Promise<string> {
  let link: string | undefined;
  await expect
    .poll(
      async () => {
        const mail = await json(
          await fetch(`${main.url}/admin/mail?to=${encodeURIComponent(email)}`, {
            headers: { Authorization: `Bearer ${main.adminToken}` },
          }),
        );
        link = mail.items
          .map((item: { text: string }) => item.text.match(new RegExp(`https?://\\S+${path}\\?token=\\S+`))?.[0])
          .find(Boolean);
        return link;
      },
      { timeout: 10_000 },
    )
    .toBeDefined();
  return link!;
}

/** Follows the browser to the client's callback and has the client's server buy the profile with the code. */
async function profileAtClient(page: Page, client: Client, state: string) {
  await page.waitForURL((url) => url.pathname === '/callback');
  const landed = new URL(page.url());
  expect(landed.searchParams.get('state')).toBe(state);
  expect(await page.textContent('#client')).toBe('back at the client');
  const answer = await exchange(main, {
    client_id: client.client_id,
    client_secret: client.client_secret,
    code: landed.searchParams.get('code'),
    redirect_uri: redirectUri,
  });
  expect(answer.status).toBe(200);
  return json(answer);
}

const people = [
  {
    lang: 'en',
    viewport: DESKTOP,
    name: 'Nina Walker',
    words: { consent: 'Corner Shop', checkMail: /mail/i, keyRevoked: /revoked/i },
  },
  {
    lang: 'ru',
    viewport: PHONE,
    name: 'Нина Ходокова',
    words: { consent: 'Corner Shop', checkMail: /письм/i, keyRevoked: /отозван/i },
  },
] as const;

describe.each(people)('a person in $lang', ({ lang, viewport, name, words }) => {
  it('signs up from a client, confirms, consents, comes back named; a second client needs no password; resets a forgotten password; uses and revokes a data key', async () => {
    const email = uniqueEmail(`browser-${lang}`);
    const context = await browser.newContext({ locale: lang === 'ru' ? 'ru-RU' : 'en-US', viewport });
    const page = await context.newPage();
    const typedPasswords: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && /password=/.test(request.postData() ?? ''))
        typedPasswords.push(new URL(request.url()).pathname);
    });

    // 1. From the shop's "Sign in with svc" to the sign-up form, carried by the link on the sign-in form.
    await page.goto(authorizeUrl(shop, `shop-${lang}`));
    expect(await page.getAttribute('html', 'lang')).toBe(lang);
    expect(await page.textContent('main')).toContain('Corner Shop');
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/cabinet/sign-up'),
      page.click('a[href^="/cabinet/sign-up"]'),
    ]);
    await page.fill('#email', email);
    await page.fill('#name', name);
    await page.fill('#password', 'my first password');
    await page.fill('#password_confirm', 'my first password');
    await page.click('main button[type=submit]');
    await expect.poll(() => page.textContent('main')).toMatch(words.checkMail);

    // 2. The confirmation mail's link: a button spends it, then the consent page names the shop; Allow goes back.
    await page.goto(await linkFromMail(email, '/cabinet/sign-up/confirm'));
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/sso/consent'),
      page.click('main button[type=submit]'),
    ]);
    expect(await page.textContent('main')).toContain(words.consent);
    await page.click('button[name=decision][value=allow]');
    const atShop = await profileAtClient(page, shop, `shop-${lang}`);
    expect(atShop).toMatchObject({ email, name });
    expect(atShop.svc_id).toMatch(UUID_PATTERN);
    expect(atShop.org.name).toBeTruthy();

    // 3. The forum: the browser is signed in already, so only its consent is asked, never a password.
    const passwordsBefore = typedPasswords.length;
    await page.goto(authorizeUrl(forum, `forum-${lang}`));
    await page.waitForURL((url) => url.pathname === '/sso/consent');
    expect(await page.textContent('main')).toContain('Makers Forum');
    expect(await page.locator('input[type=password]').count()).toBe(0);
    await page.click('button[name=decision][value=allow]');
    expect(await profileAtClient(page, forum, `forum-${lang}`)).toMatchObject({ svc_id: atShop.svc_id, name });
    expect(typedPasswords.length).toBe(passwordsBefore);
    // The JSON operations also take the browser's session.
    const profile = await page.request.get(`${main.url}/cabinet/profile`);
    expect(await profile.json()).toMatchObject({ svc_id: atShop.svc_id, name, email });

    // 4. Signed out, the password forgotten: the mail's link sets a new one and signs in.
    await page.goto(`${main.url}/cabinet`);
    await page.click('header button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/cabinet/sign-in');
    await page.click('a[href^="/cabinet/forgot-password"]');
    await page.fill('#email', email);
    await page.click('main button[type=submit]');
    await expect.poll(() => page.textContent('main')).toMatch(words.checkMail);
    await page.goto(await linkFromMail(email, '/cabinet/reset-password'));
    await page.fill('#password', 'my second password');
    await page.fill('#password_confirm', 'my second password');
    await Promise.all([
      page.waitForURL((url) => url.pathname !== '/cabinet/reset-password'),
      page.click('main button[type=submit]'),
    ]);
    expect(await page.locator('header button[type=submit]').count()).toBe(1);
    const oldPassword = await fetch(`${main.url}/cabinet/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: 'my first password' }),
    });
    expect(oldPassword.status).toBe(401);

    // 5. A data key from the cabinet's section: shown once, it works on the data API, and after revoking it is 401 at once.
    await page.click(`header a[href="/cabinet/view/data-keys"]`);
    await page.fill('#name', 'laptop');
    await page.click('main form[method=post] button[type=submit]');
    const key = (await page.textContent('#new-key'))!.trim();
    expect(key).toMatch(/^svc_mcp_/);
    const me = () => fetch(`${data.url}/v1/me`, { headers: { Authorization: `Bearer ${key}` } });
    expect((await me()).status).toBe(200);
    await page.goto(`${main.url}/cabinet/view/data-keys`);
    expect(await page.textContent('main')).not.toContain(key);
    await page.click('main a[href$="/revoke"]');
    await page.click('main button.danger');
    await expect.poll(() => page.textContent('main')).toMatch(words.keyRevoked);
    expect((await me()).status).toBe(401);

    await context.close();
  });
});
