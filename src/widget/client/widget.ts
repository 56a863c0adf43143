// One widget on the page: keeps the deal and its token, shows where the deal stands and the next step, follows the
// status by polling (no reload), and announces every change through an aria-live region.
import { WidgetApi, WidgetError, type Deal, type DealInput } from './api.ts';
import { errorMessage, formatMoney, translator, type Locale, type MessageKey, type Translate } from './i18n.ts';
import { STYLES } from './styles.ts';

export type Mode = 'full' | 'compact' | 'button';
export type Theme = 'light' | 'dark';

export interface WidgetOptions {
  mode: Mode;
  theme: Theme;
  locale: Locale;
  base: string;
  input: DealInput;
}

type Phase = 'start' | 'rejected' | 'approve' | 'pay' | 'finish' | 'held' | 'paid' | 'refunded' | 'disputed';

const FAST_POLL_MS = 3000;
const SLOW_POLL_MS = 15000;

function phaseOf(deal: Deal | undefined): Phase {
  const status = deal?.status ?? 'created';
  if (status === 'approval') return 'approve';
  if (status === 'approved') return deal!.payments.some((p) => p.status === 'pending' && p.payment_url) ? 'finish' : 'pay';
  if (status === 'escrow_hold') return 'held';
  if (status === 'rejected' || status === 'paid' || status === 'refunded' || status === 'disputed') return status;
  return 'start';
}

/** A tiny element builder: attributes, then children (text is always text, never markup). */
function h(tag: string, attributes: Record<string, string> = {}, ...children: (Node | string | false)[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child !== false) element.append(child);
  return element;
}

export class Widget {
  private readonly api: WidgetApi;
  private readonly t: Translate;
  private readonly root: ShadowRoot;
  private readonly live: HTMLElement;
  private readonly body: HTMLElement;
  private readonly storageKey: string;
  private deal?: Deal;
  private token?: { value: string; expires: number };
  private busy = false;
  private error?: MessageKey;
  private timer?: number;
  private shown = '';

  constructor(
    host: HTMLElement,
    private readonly options: WidgetOptions,
  ) {
    this.api = new WidgetApi(options.base);
    this.t = translator(options.locale);
    this.storageKey = `svc-widget:${options.input.public_key}:${options.input.external_id}`;
    this.root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
    this.root.replaceChildren();
    adoptStyles(this.root);
    this.live = h('div', { class: 'sr', role: 'status', 'aria-live': 'polite' });
    this.body = h('section', { class: `w ${options.mode} ${options.theme}`, lang: options.locale, 'aria-label': this.t('brand') });
    this.root.append(this.body, this.live);
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && this.deal) void this.refresh();
    });
  }

  /** First paint, then the deal the buyer already started here (its token kept in this browser), if any. */
  async mount(): Promise<void> {
    const { input } = this.options;
    if (!input.public_key || !input.external_id || !input.buyer_email) this.error = 'errSetup';
    this.render();
    const saved = this.load();
    if (!saved || this.error) return;
    this.token = { value: saved.token, expires: saved.expires };
    this.deal = { id: saved.id } as Deal;
    await this.refresh();
  }

  private async run(action: () => Promise<void>): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.error = undefined;
    this.render();
    try {
      await action();
    } catch (error) {
      const problem = error instanceof WidgetError ? error : new WidgetError('other', 0);
      this.error = errorMessage(problem.code, problem.status);
    } finally {
      this.busy = false;
      this.render();
      this.schedule();
    }
  }

  /** Continue: create the deal (or renew its token), then the contract and the approval. */
  private onContinue = () =>
    this.run(async () => {
      const id = await this.ensureToken();
      this.deal = await this.withToken((token) => this.api.start(id, token, this.options.locale));
    });

  private onPay = () =>
    this.run(async () => {
      const id = await this.ensureToken();
      const payment = await this.withToken((token) => this.api.escrow(id, token, this.options.locale));
      // Live: the acquirer's page takes over the window and brings the buyer back to the cabinet.
      if (payment.payment_url) return window.location.assign(payment.payment_url);
      this.deal = await this.withToken((token) => this.api.deal(id, token));
    });

  private async refresh(): Promise<void> {
    if (this.busy || !this.deal) return;
    try {
      const id = await this.ensureToken();
      this.deal = await this.withToken((token) => this.api.deal(id, token));
      this.error = undefined;
    } catch (error) {
      const problem = error instanceof WidgetError ? error : new WidgetError('other', 0);
      if (!this.deal.cabinet_url && (problem.status === 403 || problem.status === 404)) {
        this.forget(); // a deal saved in this browser that the service no longer knows: start afresh
      } else {
        this.error = errorMessage(problem.code, problem.status);
      }
    }
    this.render();
    this.schedule();
  }

  /** The deal id with a token that is still good, renewed by repeating the (idempotent) creation. */
  private async ensureToken(): Promise<string> {
    if (this.deal?.id && this.token && this.token.expires - Date.now() > 30_000) return this.deal.id;
    const created = await this.api.create(this.options.input);
    this.token = { value: created.widget_token, expires: Date.parse(created.expires_at) };
    this.deal = { ...(this.deal ?? ({} as Deal)), id: created.id, status: created.status };
    this.save(created.id);
    return created.id;
  }

  /** Runs a call with the token; one renewal and retry when the server says the token is no longer good. */
  private async withToken<T>(call: (token: string) => Promise<T>): Promise<T> {
    try {
      return await call(this.token!.value);
    } catch (error) {
      if (!(error instanceof WidgetError) || error.status !== 401) throw error;
      this.token = undefined;
      await this.ensureToken();
      return call(this.token!.value);
    }
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    const phase = phaseOf(this.deal);
    if (!this.deal?.cabinet_url || phase === 'paid' || phase === 'refunded') return;
    const delay = phase === 'approve' || phase === 'finish' ? FAST_POLL_MS : SLOW_POLL_MS;
    this.timer = window.setTimeout(() => void this.refresh(), delay);
  }

  private render(): void {
    const { t } = this;
    const deal = this.deal?.cabinet_url ? this.deal : undefined;
    const phase = phaseOf(deal);
    const input = this.options.input;
    const money = formatMoney(deal?.amount ?? input.amount, deal?.currency ?? input.currency, this.options.locale);
    const [text, action] = this.step(phase, deal, money);
    const statusText = this.error ? t(this.error) : this.busy ? t('busy') : text;
    const key = `${phase}|${statusText}|${this.busy}`;
    if (key === this.shown) return; // polling must not rebuild (and steal focus from) an unchanged widget
    const hadFocus = this.root.activeElement !== null;
    this.shown = key;

    const message = h('p', { class: this.error ? 'error' : phase === 'held' ? 'state' : '' }, statusText);
    const parts: Node[] = [];
    if (this.options.mode === 'full') {
      parts.push(h('div', { class: 'head' }, h('span', { class: 'brand' }, t('brand')), h('span', { class: 'amount' }, money)));
      if (input.title) parts.push(h('p', { class: 'title' }, input.title));
      parts.push(this.steps(phase));
      if (phase === 'start' && !this.error) parts.push(h('p', {}, t('intro')));
    }
    if (this.options.mode === 'button') parts.push(...(action ? [action] : []), h('p', { class: 'note' }, statusText));
    else parts.push(message, ...(action ? [action] : []));
    this.body.replaceChildren(...parts);
    if (hadFocus && action) action.focus();
    if (!this.busy) this.live.textContent = t('status', { text: statusText });
  }

  /** What to say in this phase, and the one next step (a button or a link) when there is one. */
  private step(phase: Phase, deal: Deal | undefined, money: string): [string, HTMLElement | undefined] {
    const { t } = this;
    const button = (label: string, onClick: () => void) => {
      const element = h('button', { type: 'button', class: 'action' }, label);
      if (this.busy || this.error === 'errSetup') element.setAttribute('disabled', '');
      element.addEventListener('click', onClick);
      return element;
    };
    const link = (label: string, href: string) => h('a', { class: 'action', href, target: '_blank', rel: 'noopener' }, label);
    switch (phase) {
      case 'start':
        return [t('startText'), button(t('continue'), this.onContinue)];
      case 'rejected':
        return [t('rejectedText'), button(t('continue'), this.onContinue)];
      case 'approve':
        return [t('approveText', { email: deal!.buyer_email }), link(t('approveLink'), deal!.cabinet_url)];
      case 'pay':
        return [t('payText', { amount: money }), button(t('pay'), this.onPay)];
      case 'finish':
        return [t('finishText'), link(t('finishPayment'), deal!.payments.find((p) => p.status === 'pending')!.payment_url!)];
      case 'held':
        return [`${t('heldTitle')}. ${t('heldText')}`, link(t('openCabinet'), deal!.cabinet_url)];
      default:
        return [t(`${phase}Text` as MessageKey), link(t('openCabinet'), deal!.cabinet_url)];
    }
  }

  private steps(phase: Phase): HTMLElement {
    const order: Phase[][] = [['start', 'rejected'], ['approve'], ['pay', 'finish'], ['held', 'paid', 'refunded', 'disputed']];
    const labels: MessageKey[] = ['stepContract', 'stepApproval', 'stepPayment', 'stepHeld'];
    const current = order.findIndex((phases) => phases.includes(phase));
    return h(
      'ol',
      { 'aria-label': this.t('brand') },
      ...labels.map((label, index) =>
        h('li', index < current || (index === 3 && current === 3) ? { class: 'done' } : index === current ? { 'aria-current': 'step' } : {}, this.t(label)),
      ),
    );
  }

  private load(): { id: string; token: string; expires: number } | undefined {
    try {
      const saved = JSON.parse(window.localStorage.getItem(this.storageKey) ?? 'null');
      return saved && typeof saved.id === 'string' && typeof saved.token === 'string' ? saved : undefined;
    } catch {
      return undefined; // storage blocked (privacy settings): the buyer presses Continue again
    }
  }

  private forget(): void {
    this.deal = undefined;
    this.token = undefined;
    try {
      window.localStorage.removeItem(this.storageKey);
    } catch {
      // storage blocked: nothing was kept
    }
  }

  private save(id: string): void {
    try {
      window.localStorage.setItem(this.storageKey, JSON.stringify({ id, token: this.token!.value, expires: this.token!.expires }));
    } catch {
      // storage blocked: the widget still works for this page view
    }
  }
}

function adoptStyles(root: ShadowRoot): void {
  // Constructed stylesheets pass a storefront CSP without 'unsafe-inline'; older browsers get a <style>.
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
    root.adoptedStyleSheets = [sheet];
  } catch {
    root.append(h('style', {}, STYLES));
  }
}
