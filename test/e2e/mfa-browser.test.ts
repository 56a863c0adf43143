// Second factors as a buyer meets them, in Debian's Chromium with its virtual authenticator (the DevTools protocol's
// WebAuthn domain: a CTAP2 platform authenticator that keeps discoverable credentials and verifies the person): the
// buyer turns on an authenticator app and a passkey on the security page, then signs in with the app's code, with the
// passkey as the second step, and with the passkey alone. A registration or a sign-in the browser sent is refused when
// sent again (its challenge is spent). Every page on the way passes axe, once in English at a desktop width and once
// in Russian at a phone width; screenshots go to test-output/mfa/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentStep, totpCode } from '../../src/admin/totp.ts';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';
import { axeFindings, horizontalOverflow } from '../a11y.ts';

const DESKTOP = { width: 1280, height: 900 };
const PASSWORD = 'a strong password';
const SCREENSHOTS = path.resolve('test-output/mfa');

let server: TestServer;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  server = await startTestServer();
  // WebAuthn takes a domain, never an IP address, for its relying party: the pages are opened at localhost.
  origin = server.url.replace('127.0.0.1', 'localhost');
  server.services.config.BASE_URL = origin;
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A platform authenticator in this page's browser, as a phone's or a laptop's would be. */
async function virtualAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
}

/** axe finds nothing serious, the page fits the screen, and a screenshot is kept for a reviewer. */
async function checkPage(page: Page, name: string, lang: string, width: number) {
  expect(await page.getAttribute('html', 'lang')).toBe(lang);
  const findings = await axeFindings(page);
  expect(findings, `${name}: ${JSON.stringify(findings)}`).toEqual([]);
  expect(await horizontalOverflow(page), `${name} is wider than the screen`).toBe(0);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${lang}-${width}.png`), fullPage: true });
}

/** The JSON body of the next POST to this path the page sends. */
function nextBody(page: Page, pathname: string): Promise<string> {
  return page
    .waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === pathname)
    .then((request) => request.postData() ?? '');
}

/** Sends a body the page sent once more, from the page (its cookies and its form token header). */
function sendAgain(
  page: Page,
  pathname: string,
  body: string,
  csrf: string,
): Promise<{ status: number; code: string }> {
  return page.evaluate(
    async ({ pathname, body, csrf }) => {
      const response = await fetch(pathname, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
        body,
      });
      return { status: response.status, code: ((await response.json()) as { code: string }).code };
    },
    { pathname, body, csrf },
  );
}

async function signOut(page: Page) {
  await page.click('header form button[type=submit]');
  await page.waitForURL((url) => url.pathname === '/cabinet/sign-in');
}

async function password(page: Page, email: string) {
  await page.goto(`${origin}/cabinet/sign-in?next=${encodeURIComponent('/cabinet/view/profile')}`);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('main form[action="/cabinet/sign-in"] button[type=submit]');
}

describe.each([
  { lang: 'en', size: DESKTOP },
  { lang: 'ru', size: PHONE },
])('a buyer in $lang at $size.width px', ({ lang, size }) => {
  const words =
    lang === 'en'
      ? {
          setUp: 'Set up an authenticator app',
          turnOn: 'Turn on',
          saved: 'I have saved them',
          added: 'The passkey is added.',
          usePasskey: 'Use a passkey',
          signInPasskey: 'Sign in with a passkey',
        }
      : {
          setUp: 'Подключить приложение-аутентификатор',
          turnOn: 'Включить',
          saved: 'Я их сохранил',
          added: 'Ключ доступа добавлен.',
          usePasskey: 'Войти ключом доступа',
          signInPasskey: 'Войти ключом доступа',
        };

  it('turns on an authenticator app and a passkey, and signs in with each', async () => {
    const email = uniqueEmail(`mfa-${lang}`);
    const { user } = await ensureUser(server.services.db, { email, name: 'Vera Buyer' });
    await setPassword(server.services.db, user.id, PASSWORD);
    const context = await browser.newContext({ viewport: size, locale: lang });
    const page = await context.newPage();
    await virtualAuthenticator(context, page);
    await page.goto(`${origin}/cabinet/sign-in?lang=${lang}`);

    // A password alone still signs in: the account has no second factor yet.
    await password(page, email);
    await page.waitForURL((url) => url.pathname === '/cabinet/view/profile');
    await page.goto(`${origin}/cabinet/view/security`);
    await checkPage(page, 'security', lang, size.width);

    // The app: its key, then its code turns it on, and the recovery codes are shown once.
    await page.click(`text=${words.setUp}`);
    await page.waitForSelector('#totp-secret');
    await checkPage(page, 'totp-setup', lang, size.width);
    const secret = (await page.textContent('#totp-secret'))!.replace(/\s/g, '');
    const setupStep = currentStep();
    await page.fill('#code', totpCode(secret, setupStep));
    await page.click(`button:has-text("${words.turnOn}")`);
    await page.waitForSelector('#recovery-codes');
    expect(await page.locator('#recovery-codes li').count()).toBe(10);
    await checkPage(page, 'recovery-codes', lang, size.width);
    await page.click(`text=${words.saved}`);

    // The passkey: named, created by the authenticator, listed by its name.
    const csrf = (await page.getAttribute('form[data-passkey=register]', 'data-csrf'))!;
    const registration = nextBody(page, '/cabinet/mfa/passkeys');
    await page.fill('#passkey-name', 'Vera’s laptop');
    await page.click('#passkey-add');
    const sent = await registration;
    await page.waitForURL((url) => url.searchParams.get('done') === 'passkey_added');
    expect(await page.textContent('.notice')).toBe(words.added);
    expect(await page.textContent('main')).toContain('Vera’s laptop');
    await checkPage(page, 'security-with-factors', lang, size.width);
    // The same registration again: its challenge is spent.
    expect(await sendAgain(page, '/cabinet/mfa/passkeys', sent, csrf)).toEqual({
      status: 400,
      code: 'invalid_passkey_response',
    });
    await signOut(page);

    // Signing in with the password and the app's code (of the next step: the setup's code was used), back to `next`.
    await password(page, email);
    await page.waitForURL((url) => url.pathname === '/cabinet/sign-in/second-factor');
    await checkPage(page, 'second-factor', lang, size.width);
    await page.fill('#totp-code', totpCode(secret, setupStep + 1));
    await page.click('form:has(#totp-code) button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/cabinet/view/profile');
    await signOut(page);

    // The password, then the passkey as the second factor.
    await password(page, email);
    await page.waitForURL((url) => url.pathname === '/cabinet/sign-in/second-factor');
    const assertion = nextBody(page, '/cabinet/mfa/passkeys/sign-in');
    await page.click(`#passkey-button:has-text("${words.usePasskey}")`);
    const signedIn = await assertion;
    await page.waitForURL((url) => url.pathname === '/cabinet/view/profile');
    await signOut(page);

    // The passkey alone, from the sign-in page: the authenticator names the account.
    await page.goto(`${origin}/cabinet/sign-in`);
    await checkPage(page, 'sign-in', lang, size.width);
    const alone = nextBody(page, '/cabinet/mfa/passkeys/sign-in');
    await page.click(`#passkey-button:has-text("${words.signInPasskey}")`);
    const aloneBody = await alone;
    await page.waitForURL((url) => url.pathname === '/cabinet');
    expect(await page.textContent('header')).toContain(email);
    // Sent again from a browser that is not signed in (its pre-session form token), the spent challenge is refused.
    const stranger = await browser.newContext();
    const strangerPage = await stranger.newPage();
    await strangerPage.goto(`${origin}/cabinet/sign-in`);
    const strangerCsrf = (await strangerPage.getAttribute('div[data-passkey]', 'data-csrf'))!;
    for (const body of [aloneBody, signedIn])
      expect(await sendAgain(strangerPage, '/cabinet/mfa/passkeys/sign-in', body, strangerCsrf)).toEqual({
        status: 400,
        code: 'invalid_passkey_response',
      });
    await stranger.close();
    await context.close();
  });
});
