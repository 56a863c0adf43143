// A browser without JavaScript over real HTTP, for the server-rendered pages (cabinet, SSO, console): keeps its
// cookies by name, never follows redirects by itself, posts forms urlencoded (multipart when they carry files).
import { expect } from 'vitest';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
  /** The Set-Cookie lines of the answer, as sent. */
  setCookies: string[];
}

export class PageBrowser {
  readonly cookies = new Map<string, string>();

  /** `base` is the server (or its URL); `headers` go with every request (a language, a client address). */
  constructor(
    private readonly base: { url: string } | string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async request(
    method: string,
    path: string,
    form?: Record<string, string> | FormData,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const urlencoded = form !== undefined && !(form instanceof FormData);
    const response = await fetch(new URL(path, typeof this.base === 'string' ? this.base : this.base.url), {
      method,
      redirect: 'manual',
      headers: {
        ...(cookie ? { Cookie: cookie } : {}),
        ...(urlencoded ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        ...this.headers,
        ...headers,
      },
      body: form instanceof FormData ? form : form ? new URLSearchParams(form).toString() : undefined,
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      if (/max-age=0(;|$)/i.test(line)) this.cookies.delete(pair.slice(0, at));
      else this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get('location'),
      setCookies,
    };
  }

  get(path: string, headers?: Record<string, string>): Promise<Reply> {
    return this.request('GET', path, undefined, headers);
  }

  post(path: string, form: Record<string, string>): Promise<Reply> {
    return this.request('POST', path, form);
  }

  /** A form with files, as a browser sends it: multipart/form-data with this browser's cookies. */
  postMultipart(path: string, form: FormData): Promise<Reply> {
    return this.request('POST', path, form);
  }

  /** GETs the address a 303 points to. */
  async follow(reply: Reply): Promise<Reply> {
    expect(reply.status).toBe(303);
    return this.get(reply.location!);
  }
}
