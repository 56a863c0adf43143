// The widget API as the script calls it: JSON over fetch, the token in X-Svc-Widget-Token, problems as WidgetError.

export interface DealInput {
  public_key: string;
  external_id: string;
  buyer_email: string;
  seller_email: string;
  title: string;
  amount: number;
  currency: string;
  /** The language the buyer sees the widget in: their mail and cabinet pages follow it. */
  buyer_locale: 'ru' | 'en';
}

export interface Created {
  id: string;
  status: string;
  widget_token: string;
  expires_at: string;
  /** True only when this creation invited the buyer (a mail to set a password). */
  invitation_sent: boolean;
}

export interface Deal {
  id: string;
  status: string;
  title: string;
  buyer_email: string;
  amount: number;
  currency: string;
  payments: { status: string; payment_url: string | null }[];
  cabinet_url: string;
  /** The deal's documents in the cabinet, or null while it has none. */
  contract_url: string | null;
  mode: 'sandbox' | 'live';
}

export interface Payment {
  status: string;
  payment_url?: string;
}

export class WidgetError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
  ) {
    super(code);
  }
}

export class WidgetApi {
  constructor(private readonly base: string) {}

  create(input: DealInput): Promise<Created> {
    return this.call('POST', '/api/mkt/widget/deals', undefined, input);
  }

  /** The deal of this order with a fresh token, or undefined when the order has no deal yet (204). */
  async lookup(input: DealInput): Promise<Created | undefined> {
    return (
      (await this.call<Created | undefined>('POST', '/api/mkt/widget/deals/lookup', undefined, input)) ?? undefined
    );
  }

  deal(id: string, token: string): Promise<Deal> {
    return this.call('GET', `/api/mkt/widget/deals/${encodeURIComponent(id)}`, token);
  }

  start(id: string, token: string, locale: string): Promise<Deal> {
    return this.call('POST', `/api/mkt/widget/deals/${encodeURIComponent(id)}/start`, token, { locale });
  }

  escrow(id: string, token: string, locale: string): Promise<Payment> {
    return this.call('POST', `/api/mkt/widget/deals/${encodeURIComponent(id)}/escrow?locale=${locale}`, token);
  }

  private async call<T>(method: string, path: string, token?: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers['X-Svc-Widget-Token'] = token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
      });
    } catch {
      throw new WidgetError('network', 0); // offline, or the origin is not registered (CORS)
    }
    if (response.status === 204) return undefined as T;
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new WidgetError(typeof data.code === 'string' ? data.code : 'http', response.status);
    return data as T;
  }
}
