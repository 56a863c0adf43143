// The entry of /widget/marketplace.js: defines window.SvcWidget.init({container, mode, theme, locale}) and, once the
// page is parsed, initialises every #aris-deal-widget from its data attributes.
import type { Locale } from './i18n.ts';
import { Widget, type Mode, type Theme } from './widget.ts';

export interface InitOptions {
  /** A selector or the element; its data-* attributes describe the deal. */
  container: string | HTMLElement;
  mode?: Mode;
  theme?: Theme;
  locale?: Locale;
}

const pick = <T extends string>(value: string | undefined, allowed: readonly T[], fallback: T): T =>
  allowed.includes(value as T) ? (value as T) : fallback;

// Where the script came from is where the API is (document.currentScript is only set while the script first runs).
const script = document.currentScript as HTMLScriptElement | null;
const base = script?.src ? new URL(script.src).origin : window.location.origin;

function init(options: InitOptions): Widget | undefined {
  const host =
    typeof options.container === 'string' ? document.querySelector<HTMLElement>(options.container) : options.container;
  if (!host) return undefined;
  const data = host.dataset;
  const locale = pick(options.locale ?? data.locale, ['ru', 'en'] as const, 'ru');
  const widget = new Widget(host, {
    base,
    mode: pick(options.mode ?? data.mode, ['full', 'compact', 'button'] as const, 'full'),
    theme: pick(options.theme ?? data.theme, ['light', 'dark'] as const, 'light'),
    locale,
    input: {
      public_key: data.publicKey ?? '',
      external_id: data.externalId ?? '',
      buyer_email: data.buyerEmail ?? '',
      seller_email: data.sellerEmail ?? '',
      title: data.title ?? '',
      amount: Number(data.amount ?? 0) || 0,
      currency: data.currency || 'RUB',
      buyer_locale: locale,
    },
  });
  void widget.mount();
  return widget;
}

function initAll(): void {
  // The embedding snippet names one id; a page that repeats it still gets every widget.
  document.querySelectorAll<HTMLElement>('#aris-deal-widget').forEach((container) => {
    if (!container.shadowRoot) init({ container });
  });
}

declare global {
  interface Window {
    SvcWidget: { init: typeof init };
  }
}

window.SvcWidget = { init };
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', initAll);
else initAll();
