// Administrators are people: made by an administrator (the bootstrap token here), they set a password and TOTP from
// the mailed link, sign in with a code that works once, act within their role, and are audited by their e-mail; a
// change of role or a disabling holds at once. Pages are driven over HTTP without JavaScript, as a browser would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentStep, totpCode } from '../../src/admin/totp.ts';
import { json, post, startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';
import { PageBrowser } from '../page-browser.ts';
import { ADMIN_PASSWORD, administrator, signIn } from '../console-helpers.ts';

let server: TestServer;
let other: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  // A second instance over the same database: what one instance changes, the other must see at once.
  other = await startTestServer();
});
afterAll(async () => {
  await other?.stop();
  await server?.stop();
});

const bootstrap = () => ({ Authorization: `Bearer ${server.adminToken}` });

/** A browser without JavaScript against this file's server (test/page-browser.ts). */
class Browser extends PageBrowser {
  constructor(headers: Record<string, string> = { 'Accept-Language': 'en' }) {
    super(server, headers);
  }
}

const field = (text: string, name: string) =>
  text.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1]?.replace(/&#38;/g, '&') ?? '';

async function setupLink(email: string): Promise<string> {
  let link: string | undefined;
  await expect
    .poll(async () => {
      const mail = await json(
        await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers: bootstrap() }),
      );
      link = mail.items
        .map((item: { text: string }) => item.text.match(/\/admin\/setup\?token=\S+/)?.[0])
        .find(Boolean);
      return link;
    })
    .toBeDefined();
  return link!;
}

describe('a new administrator', () => {
  it('is invited by mail, sets a password and TOTP on the setup page, and is signed in to the console', async () => {
    const email = uniqueEmail('new-admin');
    const created = await post(`${server.url}/admin/administrators`, { email, role: 'arbiter' }, bootstrap());
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ email, role: 'arbiter', status: 'invited', created_by: 'token:test' });
    expect((await post(`${server.url}/admin/administrators`, { email, role: 'admin' }, bootstrap())).status).toBe(409);

    const browser = new Browser();
    const link = await setupLink(email);
    const page = await browser.get(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toContain('<svg');
    expect(page.text).not.toMatch(/<script/);
    // The key in groups of four, and a link that opens the authenticator app on the same phone.
    const grouped = page.text.match(/<code id="totp-secret" class="secret-value">([A-Z2-7 ]+)<\/code>/)![1];
    expect(grouped).toMatch(/^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/);
    const secret = grouped.replace(/ /g, '');
    expect(page.text).toMatch(/<a class="button secondary" id="otpauth-link" href="otpauth:\/\/totp\/[^"]*secret=/);
    // Reloading shows the same secret: the app was perhaps set up already.
    expect((await browser.get(link)).text).toContain(secret);

    const form = { _csrf: field(page.text, '_csrf'), token: field(page.text, 'token') };
    // Two passwords that differ change nothing and say so.
    const differ = await browser.post('/admin/setup', {
      ...form,
      password: 'a new admin password',
      password_repeat: 'another admin password',
      totp: totpCode(secret, currentStep()),
    });
    expect(differ.status).toBe(400);
    expect(differ.text).toContain('The two passwords differ');
    const wrong = await browser.post('/admin/setup', {
      ...form,
      password: 'a new admin password',
      totp: '000000' === totpCode(secret, currentStep()) ? '111111' : '000000',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('The code is wrong');
    const done = await browser.post('/admin/setup', {
      ...form,
      password: 'a new admin password',
      totp: totpCode(secret, currentStep()),
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/admin');
    expect(done.setCookies.find((line) => line.startsWith('svc_admin=adm_'))).toMatch(
      /Path=\/admin; Max-Age=\d+; HttpOnly; SameSite=Strict/,
    );
    const home = await browser.get('/admin');
    expect(home.status).toBe(200);
    expect(home.text).toContain(email);
    expect(home.text).toContain('arbiter');
    // The link worked once.
    expect((await browser.get(link)).status).toBe(400);

    const list = await json(await fetch(`${server.url}/admin/administrators`, { headers: bootstrap() }));
    expect(list.items.find((item: { email: string }) => item.email === email)).toMatchObject({
      status: 'active',
      role: 'arbiter',
    });
  });
});

describe('signing in', () => {
  it('needs the password and a code that works once; the console form says what went wrong', async () => {
    const admin = await administrator(server, 'support');
    const code = totpCode(admin.secret, currentStep() + 1);
    const login = (totp: string, password = ADMIN_PASSWORD) =>
      post(`${server.url}/admin/login`, { email: admin.email, password, totp });
    expect((await login(code, 'not the password')).status).toBe(401);
    const first = await login(code);
    expect(first.status).toBe(200);
    expect(await json(first)).toMatchObject({ role: 'support', token: expect.stringMatching(/^adm_/) });
    const again = await login(code);
    expect(again.status).toBe(401);
    expect((await json(again)).code).toBe('unauthorized');

    // The console's form, by another administrator (this one's codes up to the next step are spent).
    const person = await administrator(server, 'support');
    const browser = new Browser();
    const form = await browser.get('/admin/sign-in');
    expect(form.status).toBe(200);
    const fields = {
      _csrf: field(form.text, '_csrf'),
      next: '/admin/view/audit',
      email: person.email,
      password: ADMIN_PASSWORD,
    };
    const refused = await browser.post('/admin/sign-in', { ...fields, totp: '12345x' });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('The e-mail, the password or the code is wrong');
    const signed = await browser.post('/admin/sign-in', {
      ...fields,
      totp: totpCode(person.secret, currentStep() + 1),
    });
    expect(signed.status).toBe(303);
    expect(signed.location).toBe('/admin/view/audit');
    const audit = await browser.get('/admin/view/audit');
    expect(audit.status).toBe(200);
    const signOut = await browser.post('/admin/sign-out', { _csrf: field(audit.text, '_csrf') });
    expect(signOut.location).toBe('/admin/sign-in?signed_out=1');
    expect((await browser.get('/admin')).location).toBe('/admin/sign-in?next=%2Fadmin');
  });

  it('never leads elsewhere after signing in', async () => {
    const browser = new Browser();
    const form = await browser.get('/admin/sign-in?next=https://evil.example/');
    expect(field(form.text, 'next')).toBe('/admin');
    const cabinet = await browser.get('/admin/sign-in?next=/cabinet');
    expect(field(cabinet.text, 'next')).toBe('/admin');
  });
});

describe('roles', () => {
  it('lets every role read, only admin change, and holds a change of role or a disabling at once on every instance', async () => {
    const arbiter = await administrator(server, 'arbiter');
    const support = await administrator(server, 'support');
    const boss = await administrator(server, 'admin');
    const create = (headers: Record<string, string>, at = server) =>
      post(`${at.url}/admin/marketplaces`, { name: 'Role shop', mode: 'sandbox' }, headers);

    for (const who of [arbiter, support]) {
      const refused = await create(who.headers);
      expect(refused.status).toBe(403);
      expect((await json(refused)).code).toBe('forbidden');
      expect((await fetch(`${server.url}/admin/audit`, { headers: who.headers })).status).toBe(200);
    }
    expect((await create(boss.headers)).status).toBe(201);

    // Promoted on one instance, admin at once on the other.
    const promoted = await fetch(`${server.url}/admin/administrators/${support.id}`, {
      method: 'PATCH',
      headers: { ...boss.headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ role: 'admin' }),
    });
    expect(promoted.status).toBe(200);
    expect((await create(support.headers, other)).status).toBe(201);

    const disabled = await fetch(`${server.url}/admin/administrators/${support.id}`, {
      method: 'PATCH',
      headers: { ...boss.headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(await json(disabled)).toMatchObject({ status: 'disabled' });
    expect((await fetch(`${other.url}/admin/audit`, { headers: support.headers })).status).toBe(401);
    expect(
      (await fetch(`${other.url}/admin`, { headers: { Cookie: support.cookie }, redirect: 'manual' })).headers.get(
        'location',
      ),
    ).toMatch(/^\/admin\/sign-in/);
    // Nor can they sign in again while disabled.
    await expect(signIn(server, support.email, support.secret)).rejects.toThrow(/401/);

    // The audit log names each change by the administrator's e-mail, with the object before and after.
    const { items } = await json(
      await fetch(`${server.url}/admin/audit?object_id=${support.id}`, { headers: bootstrap() }),
    );
    expect(items.map((item: { action: string; actor: string }) => [item.action, item.actor])).toEqual([
      ['updateAdministrator', boss.email],
      ['updateAdministrator', boss.email],
    ]);
    expect(items[0].before).toMatchObject({ status: 'active', role: 'admin' });
    expect(items[0].after).toMatchObject({ status: 'disabled' });
  });

  it('refuses a page change by a role that may not, as a page', async () => {
    const support = await administrator(server, 'support');
    const response = await fetch(`${server.url}/admin/view/administrators`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: support.cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'en' },
      body: new URLSearchParams({ _csrf: support.csrf, email: uniqueEmail('x'), role: 'admin' }).toString(),
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('Your role may not do this');
  });
});

describe('the administrators page', () => {
  it('adds an administrator, asks before disabling one, and audits both by the e-mail of who did it', async () => {
    const boss = await administrator(server, 'admin');
    const browser = new Browser();
    browser.cookies.set('svc_admin', boss.token);
    const email = uniqueEmail('paged');
    const added = await browser.post('/admin/view/administrators', { _csrf: boss.csrf, email, role: 'support' });
    expect(added.location).toBe('/admin/view/administrators?done=added');
    const page = await browser.get(added.location!);
    expect(page.text).toContain('The administrator was added');
    expect(page.text).toContain(email);
    const id = (await json(await fetch(`${server.url}/admin/administrators`, { headers: bootstrap() }))).items.find(
      (item: { email: string }) => item.email === email,
    ).id;

    const asked = await browser.post(`/admin/view/administrators/${id}`, { _csrf: boss.csrf, intent: 'disable' });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain(`Disable ${email}?`);
    const confirmed = await browser.post(`/admin/view/administrators/${id}`, {
      _csrf: boss.csrf,
      intent: 'disable',
      confirmed: 'yes',
    });
    expect(confirmed.location).toBe('/admin/view/administrators?done=saved');
    const forged = await browser.post(`/admin/view/administrators/${id}`, { _csrf: 'forged', intent: 'enable' });
    expect(forged.status).toBe(403);

    const audit = await browser.get(`/admin/view/audit?object_id=${id}`);
    expect(audit.text).toContain('createAdministrator');
    expect(audit.text).toContain('updateAdministrator');
    expect(audit.text).toContain(boss.email);
  });
});
