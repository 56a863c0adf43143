// Data API keys in the cabinet, over real HTTP: the signed-in user issues named keys as JSON and on the page, uses them
// against two data server instances (REST /v1/me and MCP), sees their usage, and revokes them: refused at once
// everywhere. The key is shown once and never listed; other users' keys are 404; bad names and the active-key limit
// change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { ACTIVE_DATA_KEYS_MAX, TARIFF_QUOTAS } from '../../src/data-api/keys.ts';
import { json, post, startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';
import { PageBrowser } from '../page-browser.ts';
import { bearer, dataKey } from '../doubles/data-setup.ts';

let main: TestServer;
let dataServers: TestServer[];
const PASSWORD = 'a strong password';

beforeAll(async () => {
  [main, ...dataServers] = await Promise.all([
    startTestServer(),
    startTestServer({ kind: 'data' }),
    startTestServer({ kind: 'data' }),
  ]);
});
afterAll(async () => {
  await Promise.all([main, ...dataServers].map((server) => server?.stop()));
});

/** A user with a password; returns the e-mail, the user id and a cabinet token's headers. */
async function signedInUser(prefix = 'keys'): Promise<{ email: string; id: string; auth: Record<string, string> }> {
  const email = uniqueEmail(prefix);
  const { user } = await ensureUser(main.services.db, { email });
  await setPassword(main.services.db, user.id, PASSWORD);
  const login = await post(`${main.url}/cabinet/login`, { email, password: PASSWORD });
  expect(login.status).toBe(200);
  return { email, id: user.id, auth: { Authorization: `Bearer ${(await json(login)).token}` } };
}

const issue = (auth: Record<string, string>, body: unknown) => post(`${main.url}/cabinet/data-keys`, body, auth);
const list = async (auth: Record<string, string>) =>
  json(await fetch(`${main.url}/cabinet/data-keys`, { headers: auth }));
const usage = async (auth: Record<string, string>) =>
  json(await fetch(`${main.url}/cabinet/data-usage`, { headers: auth }));
const revoke = (auth: Record<string, string>, id: string) =>
  post(`${main.url}/cabinet/data-keys/${id}/revoke`, {}, auth);
const keyRows = async (userId: string) =>
  (await main.services.db.query('SELECT * FROM data_keys WHERE account_id = $1', [userId])).rows;

const restMe = (server: TestServer, key: string) => fetch(`${server.url}/v1/me`, { headers: bearer(key) });
const mcpCall = (server: TestServer, key: string) =>
  post(
    `${server.url}/mcp/`,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_corpora', arguments: {} } },
    { ...bearer(key), Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
  );

describe('data keys as JSON for the signed-in user', () => {
  it('issues a named key shown once that works on the data server; the list shows name and prefix, never the key', async () => {
    const user = await signedInUser();
    expect(await usage(user.auth)).toMatchObject({
      tariff: 'free',
      monthly_quota: TARIFF_QUOTAS.free,
      used: 0,
      remaining: TARIFF_QUOTAS.free,
    });
    expect((await main.services.db.query('SELECT 1 FROM data_accounts WHERE id = $1', [user.id])).rowCount).toBe(0);

    const response = await issue(user.auth, { name: '  Reports server ' });
    expect(response.status).toBe(201);
    const issued = await json(response);
    expect(issued).toEqual({
      id: expect.any(String),
      name: 'Reports server',
      key: expect.stringMatching(/^svc_mcp_[A-Za-z0-9_-]{43}$/),
    });
    const account = await main.services.db.query('SELECT tariff FROM data_accounts WHERE id = $1', [user.id]);
    expect(account.rows).toEqual([{ tariff: 'free' }]);

    const me = await restMe(dataServers[0], issued.key);
    expect(me.status).toBe(200);
    expect(await json(me)).toMatchObject({ account_id: user.id, tariff: 'free' });

    const { items } = await list(user.auth);
    expect(items).toEqual([
      {
        id: issued.id,
        name: 'Reports server',
        prefix: issued.key.slice(0, 12),
        created_at: expect.any(String),
        revoked_at: null,
      },
    ]);
    expect(issued.key.slice(0, 12)).toMatch(/^svc_mcp_.{4}$/);
    const secretPart = issued.key.slice(12);
    expect(JSON.stringify(items)).not.toContain(secretPart);
    expect(JSON.stringify(await keyRows(user.id))).not.toContain(secretPart);
  });

  it('revokes a key: 401 at once on REST and MCP on every data server instance; the other key goes on', async () => {
    const user = await signedInUser();
    const doomed = await json(await issue(user.auth, { name: 'doomed' }));
    const kept = await json(await issue(user.auth, { name: 'kept' }));
    for (const server of dataServers) {
      expect((await restMe(server, doomed.key)).status).toBe(200);
      expect((await mcpCall(server, doomed.key)).status).toBe(200);
    }

    const response = await revoke(user.auth, doomed.id);
    expect(response.status).toBe(200);
    const revoked = await json(response);
    expect(revoked).toMatchObject({ id: doomed.id, name: 'doomed', revoked_at: expect.any(String) });

    for (const server of dataServers) {
      const rest = await restMe(server, doomed.key);
      expect(rest.status).toBe(401);
      expect((await json(rest)).code).toBe('unauthorized');
      expect((await mcpCall(server, doomed.key)).status).toBe(401);
      expect((await restMe(server, kept.key)).status).toBe(200);
    }

    // Revoking twice is fine and keeps the first time.
    const again = await revoke(user.auth, doomed.id);
    expect(again.status).toBe(200);
    expect((await json(again)).revoked_at).toBe(revoked.revoked_at);
    const { items } = await list(user.auth);
    expect(
      items.map((item: { name: string; revoked_at: string | null }) => [item.name, item.revoked_at !== null]),
    ).toEqual([
      ['kept', false],
      ['doomed', true],
    ]);
  });

  it("answers 404 for another user's key and changes nothing", async () => {
    const owner = await signedInUser('owner');
    const other = await signedInUser('other');
    const issued = await json(await issue(owner.auth, { name: 'mine' }));
    for (const id of [issued.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await revoke(other.auth, id);
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe('not_found');
    }
    expect((await restMe(dataServers[0], issued.key)).status).toBe(200);
    expect((await list(other.auth)).items).toEqual([]);
  });

  it('shows the usage the data requests made, across keys, REST and MCP', async () => {
    const user = await signedInUser();
    const first = await json(await issue(user.auth, { name: 'one' }));
    const second = await json(await issue(user.auth, { name: 'two' }));
    expect((await restMe(dataServers[0], first.key)).status).toBe(200);
    expect((await restMe(dataServers[1], second.key)).status).toBe(200);
    expect((await mcpCall(dataServers[0], second.key)).status).toBe(200);
    const now = await usage(user.auth);
    expect(now).toEqual({
      tariff: 'free',
      monthly_quota: TARIFF_QUOTAS.free,
      used: 3,
      remaining: TARIFF_QUOTAS.free - 3,
      resets_at: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00\.000Z$/),
    });
    expect(new Date(now.resets_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('keeps the tariff and the keys an administrator issued, listing them without a name or prefix of old', async () => {
    const user = await signedInUser();
    const support = await dataKey(main.services.db, 'pro', user.email);
    const mine = await issue(user.auth, { name: 'mine' });
    expect(mine.status).toBe(201);
    expect(await usage(user.auth)).toMatchObject({ tariff: 'pro', monthly_quota: TARIFF_QUOTAS.pro });
    expect((await list(user.auth)).items.map((item: { name: string }) => item.name).sort()).toEqual(['', 'mine']);
    // A key from before names and prefixes (as the migration leaves them) is listed with an unknown prefix.
    await main.services.db.query(`UPDATE data_keys SET prefix = NULL WHERE account_id = $1 AND name = ''`, [user.id]);
    const old = (await list(user.auth)).items.find((item: { name: string }) => item.name === '');
    expect(old).toMatchObject({ prefix: null, revoked_at: null });
    expect((await restMe(dataServers[0], support.key)).status).toBe(200);
  });

  it(`limits a user to ${ACTIVE_DATA_KEYS_MAX} active keys, also when they are asked for at once`, async () => {
    const user = await signedInUser();
    const responses = await Promise.all(
      Array.from({ length: ACTIVE_DATA_KEYS_MAX + 5 }, (_, i) => issue(user.auth, { name: `key ${i}` })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(ACTIVE_DATA_KEYS_MAX);
    const refused = responses[statuses.indexOf(409)];
    expect(await json(refused)).toMatchObject({ status: 409, code: 'too_many_data_keys' });
    expect(await keyRows(user.id)).toHaveLength(ACTIVE_DATA_KEYS_MAX);
    // Revoking one makes room for one.
    const { items } = await list(user.auth);
    expect((await revoke(user.auth, items[0].id)).status).toBe(200);
    expect((await issue(user.auth, { name: 'replacement' })).status).toBe(201);
    expect((await issue(user.auth, { name: 'one too many' })).status).toBe(409);
  });

  it('keeps the 20 newest revoked keys, so issuing and revoking in a loop cannot fill the table either', async () => {
    const user = await signedInUser();
    for (let i = 0; i < 22; i++) {
      const issued = await json(await issue(user.auth, { name: `round ${i}` }));
      expect((await revoke(user.auth, issued.id)).status).toBe(200);
    }
    const names = (await keyRows(user.id)).map((row) => row.name);
    expect(names).toHaveLength(21);
    expect(names).not.toContain('round 0');
    expect(names).toContain('round 21');
  });

  it('refuses a bad name with 400 and issues nothing', async () => {
    const user = await signedInUser();
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: 'a\u0000b' },
      { name: 'ok', tariff: 'pro' },
      { name: 5 },
    ]) {
      const response = await issue(user.auth, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await json(response)).code).toBe('validation_failed');
    }
    expect((await issue(user.auth, { name: 'x'.repeat(100) })).status).toBe(201);
    expect(await keyRows(user.id)).toHaveLength(1);
  });

  it('requires a cabinet token', async () => {
    for (const response of [
      await fetch(`${main.url}/cabinet/data-keys`),
      await fetch(`${main.url}/cabinet/data-usage`),
      await post(`${main.url}/cabinet/data-keys`, { name: 'x' }),
      await post(
        `${main.url}/cabinet/data-keys/00000000-0000-4000-8000-000000000000/revoke`,
        {},
        { Authorization: 'Bearer ct_wrong' },
      ),
    ]) {
      expect(response.status).toBe(401);
    }
  });
});

/** A browser without JavaScript against this file's server (test/page-browser.ts). */
class Browser extends PageBrowser {
  constructor(headers: Record<string, string> = {}) {
    super(main, headers);
  }

  async signIn(email: string, lang: 'en' | 'ru'): Promise<void> {
    const form = await this.get(`/cabinet/sign-in?lang=${lang}`);
    const signedIn = await this.post('/cabinet/sign-in', {
      _csrf: csrfOf(form.text),
      email,
      password: PASSWORD,
      next: '/cabinet/view/data-keys',
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/cabinet/view/data-keys');
  }
}

const csrfOf = (html: string) => html.match(/name="_csrf" value="([^"]+)"/)![1];

describe('the data keys page', () => {
  const WORDS = {
    en: {
      title: 'Data API keys',
      copy: 'Copy the key now',
      revoked: 'The key was revoked',
      confirm: 'Revoke the key?',
      blank: 'Give the key a name',
      free: 'Free',
      limit: 'You already have',
    },
    ru: {
      title: 'Ключи API данных',
      copy: 'Скопируйте ключ сейчас',
      revoked: 'Ключ отозван',
      confirm: 'Отозвать ключ?',
      blank: 'Дайте ключу название',
      free: 'Бесплатный',
      limit: 'У вас уже',
    },
  } as const;

  for (const lang of ['en', 'ru'] as const) {
    it(`issues a key shown once, lists it, and revokes it only from the confirmation form (${lang})`, async () => {
      const words = WORDS[lang];
      const user = await signedInUser(`page-${lang}`);
      const browser = new Browser();
      expect((await browser.get('/cabinet/view/data-keys')).location).toBe(
        '/cabinet/sign-in?next=%2Fcabinet%2Fview%2Fdata-keys',
      );
      await browser.signIn(user.email, lang);

      const empty = await browser.get('/cabinet/view/data-keys');
      expect(empty.status).toBe(200);
      expect(empty.headers.get('cache-control')).toBe('no-store');
      expect(empty.text).toContain(`<h1>${words.title}</h1>`);
      expect(empty.text).toContain(words.free);
      expect(empty.text).toMatch(/>0 (of|из) 1[\s,]?000 /); // nothing used yet
      const csrf = csrfOf(empty.text);

      // Without the CSRF token nothing is issued.
      expect((await browser.post('/cabinet/view/data-keys', { name: 'forged' })).status).toBe(403);
      expect(await keyRows(user.id)).toHaveLength(0);

      const blank = await browser.post('/cabinet/view/data-keys', { _csrf: csrf, name: '  ' });
      expect(blank.status).toBe(400);
      expect(blank.text).toContain(words.blank);
      const control = await browser.post('/cabinet/view/data-keys', { _csrf: csrf, name: 'a\u0001b' });
      expect(control.status).toBe(400);
      expect(await keyRows(user.id)).toHaveLength(0);

      const issued = await browser.post('/cabinet/view/data-keys', { _csrf: csrf, name: 'Laptop <script>' });
      expect(issued.status).toBe(200);
      expect(issued.location).toBeNull();
      expect(issued.headers.get('cache-control')).toBe('no-store');
      expect(issued.text).toContain(words.copy);
      expect(issued.text).toContain('Laptop &#60;script&#62;');
      const key = issued.text.match(/<code class="text" id="new-key">(svc_mcp_[A-Za-z0-9_-]{43})<\/code>/)![1];
      expect((await restMe(dataServers[0], key)).status).toBe(200);

      // The list shows the name and the prefix, the usage the request made, and never the key again.
      const listed = await browser.get('/cabinet/view/data-keys');
      expect(listed.text).toContain('Laptop &#60;script&#62;');
      expect(listed.text).toContain(`${key.slice(0, 12)}…`);
      expect(listed.text).not.toContain(key.slice(12));
      expect(listed.text).toMatch(/>1 (of|из) 1[\s,]?000 /);
      const [{ id }] = (await list(user.auth)).items;
      expect(listed.text).toContain(`/cabinet/view/data-keys/${id}/revoke`);

      // The link opens the confirmation; a form without confirmed=yes (or without the token) revokes nothing.
      const confirm = await browser.get(`/cabinet/view/data-keys/${id}/revoke`);
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain(words.confirm);
      expect(confirm.text).toContain('name="confirmed" value="yes"');
      expect((await browser.post(`/cabinet/view/data-keys/${id}/revoke`, { confirmed: 'yes' })).status).toBe(403);
      const unconfirmed = await browser.post(`/cabinet/view/data-keys/${id}/revoke`, { _csrf: csrf });
      expect(unconfirmed.status).toBe(200);
      expect(unconfirmed.text).toContain(words.confirm);
      expect((await restMe(dataServers[0], key)).status).toBe(200);

      const done = await browser.post(`/cabinet/view/data-keys/${id}/revoke`, {
        _csrf: csrfOf(confirm.text),
        confirmed: 'yes',
      });
      expect(done.status).toBe(303);
      expect(done.location).toBe('/cabinet/view/data-keys?done=revoked');
      expect((await restMe(dataServers[1], key)).status).toBe(401);
      expect((await mcpCall(dataServers[0], key)).status).toBe(401);
      const after = await browser.get(done.location!);
      expect(after.text).toContain(words.revoked);
      expect(after.text).not.toContain(`/cabinet/view/data-keys/${id}/revoke`);
    });
  }

  it("answers 404 for another user's key and tells the limit in words", async () => {
    const owner = await signedInUser('owner');
    const theirs = await json(await issue(owner.auth, { name: 'theirs' }));
    const user = await signedInUser('page');
    const browser = new Browser();
    await browser.signIn(user.email, 'en');
    const csrf = csrfOf((await browser.get('/cabinet/view/data-keys')).text);
    expect((await browser.get(`/cabinet/view/data-keys/${theirs.id}/revoke`)).status).toBe(404);
    expect(
      (await browser.post(`/cabinet/view/data-keys/${theirs.id}/revoke`, { _csrf: csrf, confirmed: 'yes' })).status,
    ).toBe(404);
    expect((await restMe(dataServers[0], theirs.key)).status).toBe(200);

    for (let i = 0; i < ACTIVE_DATA_KEYS_MAX; i++) expect((await issue(user.auth, { name: `k${i}` })).status).toBe(201);
    const refused = await browser.post('/cabinet/view/data-keys', { _csrf: csrf, name: 'one more' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain(WORDS.en.limit);
    expect(await keyRows(user.id)).toHaveLength(ACTIVE_DATA_KEYS_MAX);
  });
});
