// The integrator's journey in Chromium: a marketplace's developer opens the API reference at /docs on the deal
// creation, makes a creation the API refuses, and opens the problem's `type` address to learn what to do, in English at
// a desktop and in Russian on a phone. axe finds nothing serious on either page (Swagger UI's own faults are mended in
// src/http/docs.ts), nothing is wider than the screen, and screenshots go to test-output/integrator/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMarketplace } from '../factories.ts';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';
import { axeFindings, horizontalOverflow } from '../a11y.ts';

const SCREENSHOTS = path.resolve('test-output/integrator');
const DESKTOP = { width: 1280, height: 800 };

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer();
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('an integrator reads the reference and a refusal', () => {
  for (const { lang, size } of [
    { lang: 'en', size: DESKTOP },
    { lang: 'ru', size: PHONE },
  ] as const) {
    it(`in ${lang === 'en' ? 'English' : 'Russian'} at ${size.width} px`, async () => {
      const context = await browser.newContext({ locale: lang === 'ru' ? 'ru-RU' : 'en-GB', viewport: size });
      try {
        const page = await context.newPage();
        // A deep link opens the operation, as a link in a chat or in our README would.
        await page.goto(`${server.url}/docs#/Deals/createDeal`);
        const creation = page.locator('#operations-Deals-createDeal');
        await creation.locator('.opblock-body').waitFor();
        // The example is a deal as a marketplace sends one, not values made up from the field rules.
        expect(await creation.locator('.opblock-body').innerText()).toContain('"external_id": "order-1042"');
        // The reference is written in English and says so, whatever the browser's language.
        expect(await page.getAttribute('html', 'lang')).toBe('en');
        expect(await axeFindings(page)).toEqual([]);
        expect(await horizontalOverflow(page)).toBe(0);
        await page.screenshot({ path: path.join(SCREENSHOTS, `docs-create-deal-${lang}-${size.width}.png`) });

        // The integrator's server sends an amount that is no number; the refusal names its page.
        const shop = await insertMarketplace(server.services);
        const refused = await post(
          `${server.url}/api/mkt/deals`,
          { external_id: 'order-1', title: 'Bicycle', buyer_email: 'buyer@example.com', amount: 'a lot' },
          { 'X-Svc-Key': shop.secret_key },
        );
        expect(refused.status).toBe(400);
        const problem = await json(refused);
        // `type` is under BASE_URL, which the test server does not listen on: its path is opened on the server.
        const { pathname } = new URL(problem.type);
        expect(pathname).toBe('/problems/validation_failed');

        const explained = await page.goto(`${server.url}${pathname}`);
        expect(explained?.status()).toBe(200);
        expect(await page.getAttribute('html', 'lang')).toBe(lang);
        const heading = await page.locator('h1').innerText();
        expect(heading).toMatch(lang === 'ru' ? /[а-яё]/i : /^[^а-яё]+$/i);
        expect(await page.locator('body').innerText()).toContain('validation_failed');
        expect(await axeFindings(page)).toEqual([]);
        expect(await horizontalOverflow(page)).toBe(0);
        await page.screenshot({ path: path.join(SCREENSHOTS, `problem-${lang}-${size.width}.png`), fullPage: true });
      } finally {
        await context.close();
      }
    });
  }
});
