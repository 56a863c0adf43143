// The SSO login form as a browser without JavaScript meets it, over real HTTP: the page and its headers, its title
// and links, nothing from other origins, CSRF, wrong passwords, 303 to the consent page and then to the client with
// code, state and iss, Russian, and the limits on wrong passwords per account and address, per address, and the
// per-account ceiling.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, uniqueEmail, uniqueLoopback, type TestServer } from '../helpers.ts';
import {
  PASSWORD,
  REDIRECT_URI,
  authorizeUrl,
  createUser,
  exchange,
  registerClient,
  type Client,
} from '../sso-helpers.ts';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  server = await startTestServer({
    env: { SSO_LOGIN_ACCOUNT_ADDRESS_LIMIT: '3', SSO_LOGIN_ADDRESS_LIMIT: '6', SSO_LOGIN_ACCOUNT_LIMIT: '5' },
  });
  client = await registerClient(server, { name: 'Bike Shop <b>' });
});
afterAll(async () => {
  await server?.stop();
});

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * One request as a browser sends it, from a chosen loopback address: the per-address limit is shared by the whole
 * test run's database, so tests that exhaust it use an address of their own.
 */
function request(
  method: string,
  url: string,
  options: { form?: Record<string, string>; cookie?: string; from?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      url,
      {
        method,
        localAddress: options.from,
        headers: {
          Accept: 'text/html',
          ...(options.cookie ? { Cookie: options.cookie } : {}),
          ...(body
            ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) }
            : {}),
          ...options.headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const params = (extra: Record<string, string> = {}) => ({
  client_id: client.client_id,
  redirect_uri: REDIRECT_URI,
  state: 'state-1',
  ...extra,
});
const hidden = (page: Reply) =>
  Object.fromEntries(
    [...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], unescape(m[2])]),
  );
const unescape = (value: string) => value.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
const cookieOf = (page: Reply) => (page.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');

/** Opens the form and posts it with these credentials, as a browser would. */
/**
 * Signs in on the form from `from`, or else from an address of this sign-in's own: this server's low limits per
 * address count in the database every test file shares, and other files sign in from 127.0.0.1 at the same time.
 */
async function signInOnForm(
  email: string,
  password: string,
  options: { from?: string; extra?: Record<string, string> } = {},
) {
  const from = options.from ?? uniqueLoopback();
  const page = await request('GET', authorizeUrl(server, params(options.extra)), { from });
  expect(page.status).toBe(200);
  return request('POST', `${server.url}/sso/authorize`, {
    form: { ...hidden(page), email, password },
    cookie: cookieOf(page),
    from,
  });
}

describe('the login form', () => {
  it('is a server-rendered page that cannot be framed, leaks no referrer and loads nothing from other origins', async () => {
    const page = await request('GET', authorizeUrl(server, params()));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('no-store');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    // The form posts here and its answer leads to the client: form-action allows exactly those two origins.
    expect(csp).toMatch(/form-action 'self' https:\/\/client\.example\.com(;|$)/);
    expect(csp).not.toMatch(/script-src/);
    const sources = [...page.text.matchAll(/(?:src|href|action)="([^"]+)"/g)].map((m) => m[1]);
    for (const source of sources) expect(source.startsWith('/')).toBe(true);
    expect(page.text).not.toMatch(/<script/);
    expect(page.text).toContain('<h1>Sign in to svc ID to continue to Bike Shop &#60;b&#62;</h1>'); // escaped, never markup
    expect(page.text).toContain('client.example.com');
    // Both links lead to the cabinet's pages; after signing up the user comes back to this very request.
    const signUp = new URL(
      page.text.match(/<a href="([^"]+)">Create an account<\/a>/)![1].replace(/&#38;/g, '&'),
      server.url,
    );
    expect(signUp.pathname).toBe('/cabinet/sign-up');
    expect(new URL(signUp.searchParams.get('next')!, server.url).href).toBe(authorizeUrl(server, params()));
    // The reset keeps the way back to this very request.
    const forgot = new URL(
      page.text.match(/<a href="([^"]+)">Forgot your password\?<\/a>/)![1].replace(/&#38;/g, '&'),
      server.url,
    );
    expect(forgot.pathname).toBe('/cabinet/forgot-password');
    expect(new URL(forgot.searchParams.get('next')!, server.url).href).toBe(authorizeUrl(server, params()));
    expect(hidden(page)).toMatchObject({
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      state: 'state-1',
      lang: 'en',
    });
  });

  it('signs in, starting the browser session; the first time the client asks, consent; then 303 with code, state and iss', async () => {
    const user = await createUser(server, 'Boris');
    const response = await signInOnForm(user.email, PASSWORD);
    expect(response.status).toBe(303);
    const consent = new URL(response.headers.location!, server.url);
    expect(consent.pathname).toBe('/sso/consent');
    expect(Object.fromEntries(consent.searchParams)).toEqual(params());
    // The form's sign-in is this browser's cabinet session now, beside the one createUser made through POST /cabinet/login.
    const session = (response.headers['set-cookie'] ?? []).find((line) => line.startsWith('svc_session=ct_'));
    expect(session).toBeDefined();
    const sessions = await server.services.db.query('SELECT count(*) FROM cabinet_sessions WHERE user_id = $1', [
      user.id,
    ]);
    expect(sessions.rows[0].count).toBe(2);

    const cookie = session!.split(';')[0];
    const page = await request('GET', consent.href, { cookie });
    expect(page.status).toBe(200);
    const allowed = await request('POST', `${server.url}/sso/consent`, {
      form: { ...hidden(page), decision: 'allow' },
      cookie,
    });
    expect(allowed.status).toBe(303);
    const location = new URL(allowed.headers.location!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe('state-1');
    expect(location.searchParams.get('iss')).toBe(server.url);
    const body = {
      client_id: client.client_id,
      client_secret: client.client_secret,
      code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT_URI,
    };
    expect(await json(await exchange(server, body))).toMatchObject({
      svc_id: user.id,
      email: user.email,
      name: 'Boris',
    });

    // The next sign-in on the form goes straight to the client.
    const next = await signInOnForm(user.email, PASSWORD);
    expect(next.status).toBe(303);
    expect(new URL(next.headers.location!).searchParams.get('code')).toMatch(/^ac_/);
  });

  it('shows the form again with 401 for a wrong password, keeping the request and the e-mail', async () => {
    const user = await createUser(server);
    const response = await signInOnForm(user.email, 'not the password');
    expect(response.status).toBe(401);
    expect(response.headers.location).toBeUndefined();
    expect(response.text).toContain('The e-mail or the password is wrong');
    expect(hidden(response)).toMatchObject({ state: 'state-1', client_id: client.client_id });
    expect(response.text).toContain(`value="${user.email}"`);
  });

  it("refuses a post without the form token (403) or with another browser's token", async () => {
    const user = await createUser(server);
    const page = await request('GET', authorizeUrl(server, params()));
    const form: Record<string, string> = { ...hidden(page), email: user.email, password: PASSWORD };
    const withoutCookie = await request('POST', `${server.url}/sso/authorize`, { form });
    expect(withoutCookie.status).toBe(403);
    expect(withoutCookie.headers.location).toBeUndefined();
    const other = await request('GET', authorizeUrl(server, params()));
    expect((await request('POST', `${server.url}/sso/authorize`, { form, cookie: cookieOf(other) })).status).toBe(403);
    const { _csrf: _dropped, ...noToken } = form;
    expect(
      (await request('POST', `${server.url}/sso/authorize`, { form: noToken, cookie: cookieOf(page) })).status,
    ).toBe(403);
  });

  it('checks the carried request again: a redirect_uri swapped in the form is a 400 page', async () => {
    const user = await createUser(server);
    const page = await request('GET', authorizeUrl(server, params()));
    const form = {
      ...hidden(page),
      redirect_uri: 'https://evil.example.org/callback',
      email: user.email,
      password: PASSWORD,
    };
    const response = await request('POST', `${server.url}/sso/authorize`, { form, cookie: cookieOf(page) });
    expect(response.status).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.text).toContain('data-code="redirect_uri_not_allowed"');
  });

  it('speaks Russian for Accept-Language ru, ui_locales=ru or lang=ru, and keeps it through the post', async () => {
    const ru = await request('GET', authorizeUrl(server, params()), {
      headers: { 'Accept-Language': 'ru-RU,ru;q=0.9,en;q=0.5' },
    });
    expect(ru.text).toContain('<html lang="ru">');
    expect(ru.text).toContain('<h1>Войдите в svc ID, чтобы продолжить на Bike Shop &#60;b&#62;</h1>');
    expect(ru.text).toContain('Создать учётную запись');
    expect(ru.text).not.toContain('аккаунт');
    expect(ru.text).toContain('Забыли пароль?');
    expect((await request('GET', authorizeUrl(server, params({ ui_locales: 'ru en' })))).text).toContain(
      'чтобы продолжить на',
    );
    const page = await request('GET', authorizeUrl(server, params({ lang: 'ru' })));
    expect(hidden(page).lang).toBe('ru');
    const wrong = await request('POST', `${server.url}/sso/authorize`, {
      form: { ...hidden(page), email: uniqueEmail('ru'), password: 'wrong password' },
      cookie: cookieOf(page),
      from: uniqueLoopback(),
    });
    expect(wrong.text).toContain('Неверная электронная почта или пароль');
    const error = await request(
      'GET',
      authorizeUrl(server, { client_id: 'nobody', redirect_uri: REDIRECT_URI, state: 's', lang: 'ru' }),
    );
    expect(error.status).toBe(400);
    expect(error.text).toContain('Эта ссылка для входа не работает');
  });
});

describe('limits on wrong passwords', () => {
  it('stops an address after SSO_LOGIN_ACCOUNT_ADDRESS_LIMIT wrong passwords for the account: 429 with Retry-After, even for the right one', async () => {
    const user = await createUser(server);
    for (let i = 0; i < 3; i++)
      expect((await signInOnForm(user.email, `wrong ${i}`, { from: '127.0.0.11' })).status).toBe(401);
    const locked = await signInOnForm(user.email, PASSWORD, { from: '127.0.0.11' });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(locked.text).toContain('Too many wrong passwords');
    expect(locked.headers.location).toBeUndefined();
  });

  it("never locks the owner out for a stranger's guesses from another address", async () => {
    const user = await createUser(server);
    const stranger = uniqueLoopback();
    for (let i = 0; i < 5; i++)
      expect((await signInOnForm(user.email, `guess ${i}`, { from: stranger })).status).toBe(i < 3 ? 401 : 429);
    expect((await signInOnForm(user.email, PASSWORD, { from: uniqueLoopback() })).status).toBe(303);
  });

  it('holds an account guessed from many addresses at its ceiling (SSO_LOGIN_ACCOUNT_LIMIT)', async () => {
    const user = await createUser(server);
    for (let i = 0; i < 5; i++)
      expect((await signInOnForm(user.email, `guess ${i}`, { from: uniqueLoopback() })).status).toBe(401);
    expect((await signInOnForm(user.email, PASSWORD, { from: uniqueLoopback() })).status).toBe(429);
  });

  it('a correct password starts its address afresh', async () => {
    const user = await createUser(server);
    for (let i = 0; i < 2; i++)
      expect((await signInOnForm(user.email, `wrong ${i}`, { from: '127.0.0.13' })).status).toBe(401);
    expect((await signInOnForm(user.email, PASSWORD, { from: '127.0.0.13' })).status).toBe(303);
    for (let i = 0; i < 2; i++)
      expect((await signInOnForm(user.email, `wrong ${i}`, { from: '127.0.0.13' })).status).toBe(401);
    expect((await signInOnForm(user.email, PASSWORD, { from: '127.0.0.13' })).status).toBe(303);
  });

  it('limits one address guessing across many accounts (SSO_LOGIN_ADDRESS_LIMIT), concurrent guesses included', async () => {
    const from = '127.0.0.14';
    const guesses = await Promise.all(
      Array.from({ length: 8 }, () => signInOnForm(uniqueEmail('nobody'), 'guess', { from })),
    );
    expect(guesses.filter((reply) => reply.status === 401)).toHaveLength(6);
    expect(guesses.filter((reply) => reply.status === 429)).toHaveLength(2);
    const user = await createUser(server);
    expect((await signInOnForm(user.email, PASSWORD, { from })).status).toBe(429);
    expect((await signInOnForm(user.email, PASSWORD, { from: '127.0.0.15' })).status).toBe(303);
  });
});
