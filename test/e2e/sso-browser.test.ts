// A real browser (Debian's Chromium, driven by playwright-core): a user without a token follows a client's sign-in
// link, signs in on the form, allows the client on the consent page, and lands on the client's redirect URI with code
// and state; the client's server then exchanges the code for the profile. A second client then needs no password,
// only its consent. Checks that the pages' CSP lets the forms' 303 reach the client.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser as Chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, uniqueLoopback, type TestServer } from '../helpers.ts';
import { PASSWORD, authorizeUrl, createUser, exchange, registerClient, type Client } from '../sso-helpers.ts';
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, launchChromium } from '../chromium.ts';

let server: TestServer;
let callbacks: http.Server;
let redirectUri: string;
let client: Client;
let second: Client;
let browser: BrowserContext;
let profileDir: string;

beforeAll(async () => {
  server = await startTestServer();
  // The client site: its callback page just says it got there.
  callbacks = http.createServer((_request, response) =>
    response.end('<!doctype html><title>Client</title><p>signed in</p>'),
  );
  await new Promise<void>((resolve) => callbacks.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`;
  client = await registerClient(server, { name: 'Browser shop', redirect_uris: redirectUri });
  second = await registerClient(server, { name: 'Second shop', redirect_uris: redirectUri });
  profileDir = mkdtempSync(path.join(os.tmpdir(), 'sso-chromium-'));
  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
});
afterAll(async () => {
  await browser?.close();
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  await new Promise((resolve) => callbacks?.close(resolve));
  await server?.stop();
});

describe('signing in through the form in a browser', () => {
  it('lands on the client redirect URI with code and state, and the code buys the profile', async () => {
    const user = await createUser(server, 'Vera');
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused/i.test(message.text())) violations.push(message.text());
    });

    await page.goto(
      authorizeUrl(server, {
        client_id: client.client_id,
        redirect_uri: redirectUri,
        state: 'browser-state',
        scope: 'openid profile email org',
      }),
    );
    expect(await page.title()).toContain('Sign in');
    await page.fill('#email', user.email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL((url) => url.pathname === '/sso/consent'), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).toBe('Let Browser shop sign you in with svc ID?');
    await Promise.all([page.waitForURL((url) => url.pathname === '/callback'), page.click('button[value=allow]')]);

    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(redirectUri);
    expect(landed.searchParams.get('state')).toBe('browser-state');
    expect(landed.searchParams.get('iss')).toBe(server.url);
    const code = landed.searchParams.get('code');
    expect(code).toMatch(/^ac_/);
    expect(await page.textContent('p')).toBe('signed in');
    expect(violations).toEqual([]);

    const profile = await exchange(server, {
      client_id: client.client_id,
      client_secret: client.client_secret,
      code,
      redirect_uri: redirectUri,
    });
    expect(await json(profile)).toMatchObject({ svc_id: user.id, email: user.email, name: 'Vera' });
    await page.close();
  });

  it('signs in to a second client without the password: only its consent', async () => {
    const page = await browser.newPage();
    await page.goto(
      authorizeUrl(server, { client_id: second.client_id, redirect_uri: redirectUri, state: 'second-state' }),
    );
    expect(new URL(page.url()).pathname).toBe('/sso/consent');
    expect(await page.locator('input[name=password]').count()).toBe(0);
    await Promise.all([page.waitForURL((url) => url.pathname === '/callback'), page.click('button[value=allow]')]);
    expect(new URL(page.url()).searchParams.get('state')).toBe('second-state');
    expect(new URL(page.url()).searchParams.get('code')).toMatch(/^ac_/);
    await page.close();
  });

  it('cannot be framed by another site', async () => {
    const page = await browser.newPage();
    const framing = `data:text/html,<iframe src="${authorizeUrl(server, { client_id: client.client_id, redirect_uri: redirectUri, state: 's' })}"></iframe>`;
    await page.goto(framing);
    await page.waitForTimeout(500);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    // Blocked frames stay empty (Chromium shows its error page, never ours).
    const content = frame ? await frame.content().catch(() => '') : '';
    expect(content).not.toContain('name="password"');
    await page.close();
  });
});

describe('a forgotten password on the sign-in form', () => {
  let fresh: Chromium;
  beforeAll(async () => {
    fresh = await launchChromium();
  });
  afterAll(() => fresh?.close());

  /** The reset link of the newest reset mail to this address. */
  async function resetLink(email: string): Promise<string> {
    let link: string | undefined;
    await expect
      .poll(async () => {
        const mail = await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, {
          headers: { Authorization: `Bearer ${server.adminToken}` },
        });
        link = (await json(mail)).items
          .map((item: { text: string }) => /https?:\/\/\S+\/cabinet\/reset-password\?token=\S+/.exec(item.text)?.[0])
          .find(Boolean);
        return link;
      })
      .toBeDefined();
    return link!;
  }

  it.each([
    ['en', { width: 1280, height: 800 }, 'Let Browser shop sign you in with svc ID?'],
    ['ru', PHONE, 'Разрешить сайту «Browser shop» вход через svc ID?'],
  ] as const)(
    'keeps the way back to the site (%s): the mail’s link sets a password and the sign-in goes on',
    async (locale, viewport, consentTitle) => {
      const user = await createUser(server, 'Olga');
      // An address of its own: reset mails are limited per client address in the database all tests share.
      const context = await fresh.newContext({
        locale: locale === 'ru' ? 'ru-RU' : 'en-US',
        viewport,
        extraHTTPHeaders: { 'X-Forwarded-For': uniqueLoopback() },
      });
      const page = await context.newPage();
      await page.goto(
        authorizeUrl(server, {
          client_id: client.client_id,
          redirect_uri: redirectUri,
          state: `forgot-${locale}`,
          lang: locale,
        }),
      );
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/cabinet/forgot-password'),
        page.click('a[href^="/cabinet/forgot-password"]'),
      ]);
      await page.fill('#email', user.email);
      await Promise.all([
        page.waitForURL((url) => url.searchParams.get('done') === 'sent'),
        page.click('form[action="/cabinet/forgot-password"] button[type=submit]'),
      ]);
      // "Check your mail" alone: no filled form below it that would look unsent.
      expect(await page.locator('.notice').isVisible()).toBe(true);
      expect(await page.locator('form[action="/cabinet/forgot-password"]').count()).toBe(0);
      expect(await page.getAttribute('html', 'lang')).toBe(locale);
      expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(viewport.width);

      await page.goto(await resetLink(user.email));
      await page.fill('#password', 'a brand new password');
      await page.fill('#password_confirm', 'a brand new password');
      // The reset leads back to the site's sign-in, which asks this site's consent the first time.
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/sso/consent'),
        page.click('form[action="/cabinet/reset-password"] button[type=submit]'),
      ]);
      expect(await page.textContent('h1')).toBe(consentTitle);
      await Promise.all([page.waitForURL((url) => url.pathname === '/callback'), page.click('button[value=allow]')]);
      expect(new URL(page.url()).searchParams.get('state')).toBe(`forgot-${locale}`);
      expect(new URL(page.url()).searchParams.get('code')).toMatch(/^ac_/);
      await context.close();
    },
  );
});
