// The widget's pages on the main server: the result of a Pay-safely navigation (sandbox, or a refusal), and in
// development a demo storefront that embeds the script with the demo marketplace.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { notFound } from '../http/problem.ts';
import { STYLESHEET_PATH } from '../web/layout.ts';
import { html, type SafeHtml } from '../http/html.ts';
import type { DemoCredentials } from '../dev/demo.ts';

export const RESULT_PATH = '/widget/escrow-result';
export const DEMO_PATH = '/widget/demo';

const WORDS = {
  en: {
    heldTitle: 'The money is held in escrow',
    held: 'The seller receives it only after you confirm the deal in your cabinet. You can go back to the shop.',
    failedTitle: 'The payment did not start',
    deal_not_approved: 'The terms are not approved yet. Approve them in your cabinet, then press Pay safely again.',
    acquirer_unavailable: 'The payment service is not answering. Try again in a minute.',
    acquirer_refused: 'The payment service refused the payment. Try again later or choose another card.',
    other: 'Something went wrong. Try again in a few minutes.',
    cabinet: 'Open the deal in your cabinet',
    test: 'Test mode: this shop is not live yet, so no real money was taken.',
  },
  ru: {
    heldTitle: 'Деньги зарезервированы',
    held: 'Продавец получит их только после того, как вы подтвердите сделку в личном кабинете. Можно вернуться в магазин.',
    failedTitle: 'Оплата не началась',
    deal_not_approved:
      'Условия ещё не согласованы. Согласуйте их в личном кабинете и снова нажмите «Оплатить безопасно».',
    acquirer_unavailable: 'Платёжный сервис не отвечает. Попробуйте через минуту.',
    acquirer_refused: 'Платёжный сервис отклонил оплату. Попробуйте позже или выберите другую карту.',
    other: 'Что-то пошло не так. Попробуйте через несколько минут.',
    cabinet: 'Открыть сделку в личном кабинете',
    test: 'Тестовый режим: магазин ещё не подключён к оплате, настоящие деньги не списаны.',
  },
} as const;

const ResultQuery = z.object({
  deal_id: z.uuid().optional().catch(undefined),
  locale: z.enum(['ru', 'en']).catch('ru'),
  status: z.string().optional(),
  error: z.string().optional(),
});

export function widgetPages(api: Api, services: Services): void {
  api.router.get(RESULT_PATH, (ctx) => {
    const query = ResultQuery.parse(ctx.query);
    const w = WORDS[query.locale];
    const held = !query.error && (query.status === 'hold' || query.status === 'released');
    const reason = query.error && query.error in w ? w[query.error as keyof typeof w] : w.other;
    const title = held ? w.heldTitle : w.failedTitle;
    // Only a sandbox payment lands here held (a live one goes to the acquirer's page): say that it was a test.
    const body = html`<h1>${title}</h1><p role="status">${held ? w.held : reason}</p>
${held && html`<p class="notice">${w.test}</p>`}
${query.deal_id && html`<p><a href="/cabinet/view/deals/${query.deal_id}">${w.cabinet}</a></p>`}`;
    sendPage(ctx, query.locale, title, body);
  });

  // Development only: never when NODE_ENV=production (the Docker image), and only where `npm start` wrote the demo
  // credentials (DATA_DIR/demo-credentials.json); read per request, as each start may replace them.
  api.router.get(DEMO_PATH, (ctx) => {
    const file = path.join(services.config.DATA_DIR, 'demo-credentials.json');
    if (services.config.NODE_ENV === 'production' || !existsSync(file)) throw notFound(`No route ${ctx.path}.`);
    const demo = JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials;
    const pick = <T extends string>(value: unknown, allowed: readonly T[]) =>
      allowed.includes(value as T) ? (value as T) : allowed[0];
    const locale = pick(ctx.query.locale, ['ru', 'en'] as const);
    const attributes = {
      mode: pick(ctx.query.mode, ['full', 'compact', 'button'] as const),
      theme: pick(ctx.query.theme, ['light', 'dark'] as const),
      email: typeof ctx.query.email === 'string' && ctx.query.email ? ctx.query.email : 'buyer@example.com',
      order:
        typeof ctx.query.order === 'string' && ctx.query.order ? ctx.query.order : `demo-${Date.now().toString(36)}`,
    };
    const link = (name: string, value: string) => {
      const next = new URLSearchParams({ ...attributes, locale, [name]: value });
      return html`<a href="${DEMO_PATH}?${next.toString()}">${value}</a> `;
    };
    const body = html`<h1>Demo storefront</h1>
<p>A product page of the demo marketplace (${demo.marketplace.name}) with the widget embedded as a shop would do it.
The buyer's invitation mail is in the development outbox (<code>GET /admin/mail</code> with the admin token).</p>
<p>Mode: ${link('mode', 'full')}${link('mode', 'compact')}${link('mode', 'button')} ·
Theme: ${link('theme', 'light')}${link('theme', 'dark')} · Language: ${link('locale', 'ru')}${link('locale', 'en')} ·
<a href="${DEMO_PATH}?${new URLSearchParams({ ...attributes, locale, order: `demo-${Date.now().toString(36)}` }).toString()}">new order</a></p>
<h2>Bicycle “Aris 28”</h2>
<p>Aluminium frame, 21 gears. Order ${attributes.order}, buyer ${attributes.email}.</p>
<div id="aris-deal-widget" data-public-key="${demo.marketplace.public_key}" data-marketplace-id="${demo.marketplace.id}"
  data-external-id="${attributes.order}" data-buyer-email="${attributes.email}" data-seller-email="seller@example.com"
  data-title="Bicycle Aris 28" data-amount="1500" data-currency="RUB"
  data-mode="${attributes.mode}" data-theme="${attributes.theme}" data-locale="${locale}"></div>
<script src="/widget/marketplace.js"></script>`;
    sendPage(ctx, locale, 'Demo storefront', body);
  });
}

function sendPage(ctx: Context, lang: string, title: string, body: SafeHtml): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>\n${
    html`<html lang="${lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>${title}</title><link rel="stylesheet" href="${STYLESHEET_PATH}"></head>
<body><main>${body}</main></body></html>`.value
  }`;
}
