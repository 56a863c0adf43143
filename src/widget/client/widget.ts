// One widget on the page: finds its order's deal on load (the lookup) and shows where it stands and the next step,
// follows the status by polling (no reload), and announces every change through an aria-live region.
//
// Between page views the browser keeps no token: the storefront's page is shared with every other script on it, so
// localStorage and sessionStorage are no place for a credential. The order (external_id and the buyer's e-mail, in the
// container's data attributes) finds its deal again, as the storefront's own order page would. sessionStorage keeps one
// harmless fact only: that this tab's creation sent the buyer an invitation, so a reload still says so.
import { WidgetApi, WidgetError, type Created, type Deal, type DealInput } from './api.ts';
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

type Phase =
  | 'loading'
  | 'start'
  | 'rejected'
  | 'approve'
  | 'pay'
  | 'finish'
  | 'held'
  | 'paid'
  | 'refunded'
  | 'disputed'
  | 'cancelled';

const FAST_POLL_MS = 3000;
const SLOW_POLL_MS = 15000;
/** Statuses whose next step is Continue (the contract and the approval). */
const CONTINUE_STATUSES = ['created', 'docs', 'rejected'];
/** Phases after which nothing changes any more: no polling. */
const FINAL_PHASES: Phase[] = ['paid', 'refunded', 'cancelled'];

function phaseOf(deal: Deal | undefined): Phase {
  const status = deal?.status ?? 'created';
  if (status === 'approval') return 'approve';
  if (status === 'approved')
    return deal!.payments.some((p) => p.status === 'pending' && p.payment_url) ? 'finish' : 'pay';
  if (status === 'escrow_hold') return 'held';
  if (
    status === 'rejected' ||
    status === 'paid' ||
    status === 'refunded' ||
    status === 'disputed' ||
    status === 'cancelled'
  )
    return status;
  return 'start';
}

/** A tiny element builder: attributes, then children (text is always text, never markup). */
function h(tag: string, attributes: Record<string, string> = {}, ...children: (Node | string | false)[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child !== false) element.append(child);
  return element;
}

/** Storage the page may refuse (privacy settings, sandboxed frames): every use is best effort. */
function stored(storage: () => Storage, action: (storage: Storage) => string | null | void): string | null {
  try {
    return action(storage()) ?? null;
  } catch {
    return null;
  }
}

export class Widget {
  private readonly api: WidgetApi;
  private readonly t: Translate;
  private readonly root: ShadowRoot;
  private readonly live: HTMLElement;
  private readonly body: HTMLElement;
  private deal?: Deal;
  private token?: { value: string; expires: number };
  /** The first lookup has not answered yet: the widget does not know the deal's state, so it offers no step. */
  private loading = false;
  /** The last lookup failed (offline, limited): polling tries it again. */
  private lookupFailed = false;
  /** This deal's creation sent the buyer an invitation to set a password. */
  private invited = false;
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
    this.root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
    this.root.replaceChildren();
    adoptStyles(this.root);
    this.live = h('div', { class: 'sr', role: 'status', 'aria-live': 'polite' });
    this.body = h('section', {
      class: `w ${options.mode} ${options.theme}`,
      lang: options.locale,
      'aria-label': this.t('brand'),
    });
    this.root.append(this.body, this.live);
    document.addEventListener('visibilitychange', () => {
      // Back to this tab: the deal may have moved (or begun, in another tab) meanwhile.
      if (document.visibilityState === 'visible' && !this.loading && this.error !== 'errSetup') void this.refresh();
    });
  }

  /** First paint (no step yet), then the order's deal as it stands, if the order has one. */
  async mount(): Promise<void> {
    const { input } = this.options;
    // Earlier versions kept the token in localStorage, where any script of the storefront could read it: drop it.
    stored(
      () => window.localStorage,
      (storage) => storage.removeItem(`svc-widget:${input.public_key}:${input.external_id}`),
    );
    if (!input.public_key || !input.external_id || !input.buyer_email) {
      this.error = 'errSetup';
      this.render();
      return;
    }
    this.loading = true;
    this.render();
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

  /** Continue: create the deal (or find it), then the contract and the approval when that is its next step. */
  private onContinue = () =>
    this.run(async () => {
      const id = await this.ensureToken(true);
      const next = CONTINUE_STATUSES.includes(this.deal!.status);
      this.deal = await this.withToken((token) =>
        next ? this.api.start(id, token, this.options.locale) : this.api.deal(id, token),
      );
    });

  private onPay = () =>
    this.run(async () => {
      const id = await this.ensureToken(true);
      const payment = await this.withToken((token) => this.api.escrow(id, token, this.options.locale));
      // Live: the acquirer's page takes over the window and brings the buyer back to the cabinet.
      if (payment.payment_url) return window.location.assign(payment.payment_url);
      this.deal = await this.withToken((token) => this.api.deal(id, token));
    });

  /** The deal as it stands now (found by the lookup when the widget has none yet); nothing when the order has none. */
  private async refresh(): Promise<void> {
    if (this.busy) return;
    try {
      const id = await this.ensureToken(false);
      if (id) this.deal = await this.withToken((token) => this.api.deal(id, token));
      this.error = undefined;
      this.lookupFailed = false;
    } catch (error) {
      const problem = error instanceof WidgetError ? error : new WidgetError('other', 0);
      // Offline, limited or a service restarting: try again later. A conflict or a setup error stays as it is.
      this.lookupFailed =
        !this.deal?.cabinet_url && (problem.status === 0 || problem.status === 429 || problem.status >= 500);
      this.error = errorMessage(problem.code, problem.status);
    }
    this.loading = false;
    this.render();
    this.schedule();
  }

  /**
   * The deal id with a token that is still good. Without one, the lookup finds the order's deal with a fresh token;
   * when the order has none, `create` makes it (a button press) or the answer is undefined (a page load, polling).
   * A button pressed with no deal known creates at once: the creation is idempotent and answers an existing deal too.
   */
  private async ensureToken(create: true): Promise<string>;
  private async ensureToken(create: false): Promise<string | undefined>;
  private async ensureToken(create: boolean): Promise<string | undefined> {
    if (this.deal?.id && this.token && this.token.expires - Date.now() > 30_000) return this.deal.id;
    const { input } = this.options;
    const found =
      create && !this.deal?.id
        ? await this.api.create(input)
        : ((await this.api.lookup(input)) ?? (create ? await this.api.create(input) : undefined));
    if (!found) {
      this.deal = undefined; // the order has no deal (any more): the buyer starts with Continue
      this.token = undefined;
      return undefined;
    }
    this.adopt(found);
    return found.id;
  }

  private adopt(found: Created): void {
    this.token = { value: found.widget_token, expires: Date.parse(found.expires_at) };
    this.lookupFailed = false;
    this.deal =
      this.deal?.id === found.id
        ? { ...this.deal, status: found.status }
        : ({ id: found.id, status: found.status } as Deal);
    const key = `svc-widget:invited:${found.id}`;
    if (found.invitation_sent)
      stored(
        () => window.sessionStorage,
        (storage) => storage.setItem(key, '1'),
      );
    this.invited =
      found.invitation_sent ||
      stored(
        () => window.sessionStorage,
        (storage) => storage.getItem(key),
      ) === '1';
  }

  /** Runs a call with the token; one renewal and retry when the server says the token is no longer good. */
  private async withToken<T>(call: (token: string) => Promise<T>): Promise<T> {
    try {
      return await call(this.token!.value);
    } catch (error) {
      if (!(error instanceof WidgetError) || error.status !== 401) throw error;
      this.token = undefined;
      if (!(await this.ensureToken(false))) throw error;
      return call(this.token!.value);
    }
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    const phase = phaseOf(this.deal);
    if (this.lookupFailed) {
      this.timer = window.setTimeout(() => void this.refresh(), SLOW_POLL_MS);
      return;
    }
    if (!this.deal?.cabinet_url || FINAL_PHASES.includes(phase)) return;
    const delay = phase === 'approve' || phase === 'finish' ? FAST_POLL_MS : SLOW_POLL_MS;
    this.timer = window.setTimeout(() => void this.refresh(), delay);
  }

  private render(): void {
    const { t } = this;
    const deal = this.deal?.cabinet_url ? this.deal : undefined;
    const phase: Phase = this.loading ? 'loading' : phaseOf(deal);
    const input = this.options.input;
    const money = formatMoney(deal?.amount ?? input.amount, deal?.currency ?? input.currency, this.options.locale);
    const [text, action] = this.step(phase, deal, money);
    const statusText = this.error ? t(this.error) : this.busy ? t('busy') : text;
    const key = `${phase}|${statusText}|${this.busy}`;
    if (key === this.shown) return; // polling must not rebuild (and steal focus from) an unchanged widget
    const hadFocus = this.root.activeElement !== null;
    this.shown = key;

    const message = h('p', { class: this.error ? 'error' : phase === 'held' ? 'state' : '' }, statusText);
    const amount = h('span', { class: 'amount' }, money);
    // A sandbox deal says so before anything is pressed: its "payment" holds no real money.
    const extras: HTMLElement[] = [];
    if (deal?.mode === 'sandbox') extras.push(h('p', { class: 'test' }, t('testText')));
    if (deal?.contract_url && (phase === 'approve' || phase === 'pay'))
      extras.push(
        h('a', { class: 'contract', href: deal.contract_url, target: '_blank', rel: 'noopener' }, t('readContract')),
      );
    const parts: Node[] = [];
    switch (this.options.mode) {
      case 'full':
        parts.push(
          h(
            'div',
            { class: 'head' },
            h('span', { class: 'brand' }, t('brand')),
            deal?.mode === 'sandbox' && h('span', { class: 'badge' }, t('testMode')),
            amount,
          ),
        );
        if (input.title) parts.push(h('p', { class: 'title' }, input.title));
        parts.push(this.steps(phase));
        if (phase === 'start' && !this.error) parts.push(h('p', {}, t('intro')));
        parts.push(message, ...(action ? [action] : []), ...extras);
        break;
      case 'compact':
        // One row: the amount, where the deal stands, the next step; under it, what a safe deal is.
        parts.push(amount, message, ...(action ? [action] : []), ...extras, h('p', { class: 'note' }, t('about')));
        break;
      case 'button':
        parts.push(
          ...(action ? [action] : []),
          ...extras,
          h('p', { class: 'note' }, amount, ' · ', t('about')),
          h('p', { class: `note${this.error ? ' error' : ''}` }, statusText),
        );
        break;
    }
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
    const link = (label: string, href: string) =>
      h('a', { class: 'action', href, target: '_blank', rel: 'noopener' }, label);
    switch (phase) {
      case 'loading':
        return [t('loading'), undefined];
      case 'start':
        return [t('startText'), button(t('continue'), this.onContinue)];
      case 'rejected':
        return [t('rejectedText'), button(t('continue'), this.onContinue)];
      case 'approve': {
        // The invitation line only when this deal's creation sent one: a returning buyer signs in as usual.
        const invitation = this.invited ? ` ${t('invitedText', { email: deal!.buyer_email })}` : '';
        return [`${t('approveText')}${invitation}`, link(t('approveLink'), deal!.cabinet_url)];
      }
      case 'pay':
        return [t('payText', { amount: money }), button(t(deal?.mode === 'sandbox' ? 'payTest' : 'pay'), this.onPay)];
      case 'finish':
        return [
          t('finishText'),
          link(t('finishPayment'), deal!.payments.find((p) => p.status === 'pending')!.payment_url!),
        ];
      case 'held':
        return [`${t('heldTitle')}. ${t('heldText')}`, link(t('openCabinet'), deal!.cabinet_url)];
      case 'cancelled':
        return [t('cancelledText'), undefined];
      default:
        return [t(`${phase}Text` as MessageKey), link(t('openCabinet'), deal!.cabinet_url)];
    }
  }

  private steps(phase: Phase): HTMLElement {
    const order: Phase[][] = [
      ['start', 'rejected'],
      ['approve'],
      ['pay', 'finish'],
      ['held', 'paid', 'refunded', 'disputed'],
    ];
    const labels: MessageKey[] = ['stepContract', 'stepApproval', 'stepPayment', 'stepHeld'];
    // Loading and cancelled are on no step: nothing is marked.
    const current = order.findIndex((phases) => phases.includes(phase));
    return h(
      'ol',
      { 'aria-label': this.t('brand') },
      ...labels.map((label, index) =>
        h(
          'li',
          current >= 0 && (index < current || (index === 3 && current === 3))
            ? { class: 'done' }
            : index === current
              ? { 'aria-current': 'step' }
              : {},
          this.t(label),
        ),
      ),
    );
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
