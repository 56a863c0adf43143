// Issue 20's insider findings, each as the attack was made: support and arbiter read live links in the mail outbox
// (and took over an administrator's setup and a buyer's account with them); a second setup link worked after setup; setup
// guessed passwords without limit; administrator sessions and SSO tokens outlived a password change, a reset and "sign
// out everywhere"; a revocation racing a code exchange left a working token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { createSession } from '../../src/accounts/sessions.ts';
import { ensureInvitation, invitationToken } from '../../src/accounts/tokens.ts';
import { currentStep, totpCode } from '../../src/admin/totp.ts';
import { sendSetupLink } from '../../src/admin/administrators.ts';
import { freePort } from '../../src/dev/ports.ts';
import {
  askPasswordReset,
  json,
  post,
  startTestServer,
  uniqueEmail,
  type TestServer,
  UUID_SOURCE,
} from '../helpers.ts';
import { PageBrowser } from '../page-browser.ts';
import { ADMIN_PASSWORD, administrator, signIn, type TestAdministrator } from '../console-helpers.ts';
import { REDIRECT_URI, basic, codeFor, oidcToken, registerClient, type Client } from '../sso-helpers.ts';

let server: TestServer;
let support: TestAdministrator;
let arbiter: TestAdministrator;
let site: Client;

beforeAll(async () => {
  server = await startTestServer({ env: { TRUST_PROXY: '1' } });
  [support, arbiter] = await Promise.all([administrator(server, 'support'), administrator(server, 'arbiter')]);
  site = await registerClient(server, { name: 'Bike Forum' });
});
afterAll(async () => {
  await server?.stop();
});

const bootstrap = () => ({ Authorization: `Bearer ${server.adminToken}` });
const outbox = async (email: string, headers: Record<string, string>) =>
  json(await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers }));
const LINK = new RegExp(`(inv|rst|ads|sup)_${UUID_SOURCE}\\.[A-Za-z0-9_-]{43}`);
const audit = async (query: string) =>
  (await json(await fetch(`${server.url}/admin/audit?${query}`, { headers: bootstrap() }))).items;

/** A person with a password and a cabinet session, as a deal and an invitation make them. */
async function person(password = 'the old password') {
  const email = uniqueEmail('person');
  const { user } = await ensureUser(server.services.db, { email, name: 'Olga Buyer' });
  await setPassword(server.services.db, user.id, password);
  const session = await createSession(server.services.db, user.id, 3600);
  return { id: user.id, email, password, headers: { Authorization: `Bearer ${session.token}` } };
}

describe('the mail outbox', () => {
  it('masks live links for support and the arbiter, in JSON and on the page, so a reset mailed to a buyer cannot be taken', async () => {
    const buyer = await person();
    expect((await askPasswordReset(server.url, buyer.email)).status).toBe(202);
    for (const operator of [support, arbiter]) {
      const read = await outbox(buyer.email, operator.headers);
      expect(read.links).toBe('masked');
      expect(read.items).toHaveLength(1);
      expect(read.items[0].text).not.toMatch(LINK);
      expect(read.items[0].text).toContain('/cabinet/reset-password?token=rst_…');
      const page = await fetch(`${server.url}/admin/view/mail?to=${encodeURIComponent(buyer.email)}`, {
        headers: { Cookie: operator.cookie, 'Accept-Language': 'en' },
      });
      expect(page.status).toBe(200);
      const text = await page.text();
      expect(text).not.toMatch(LINK);
      expect(text).toContain('rst_…');
      expect(text).toContain('Links (invitations, password resets, setups) are masked');
    }
    // Nothing of the masked reads could sign anyone in, and the audit shows no whole read by them.
    expect(await audit(`action=readMail&actor=${encodeURIComponent(support.email)}`)).toEqual([]);
  });

  it('shows them whole to the admin role in the development outbox, and audits each such read', async () => {
    const buyer = await person();
    await askPasswordReset(server.url, buyer.email);
    const read = await outbox(buyer.email, bootstrap());
    expect(read.links).toBe('whole');
    expect(read.items[0].text).toMatch(LINK);
    // Every test server's token is named `test`: the record is found by the mail it names.
    const [entry] = await audit(`action=readMail&object_id=${read.items[0].id}`);
    expect(entry).toMatchObject({
      actor: 'token:test',
      action: 'readMail',
      object_type: 'mail',
      object_id: read.items[0].id,
    });
    expect(entry.after).toEqual({ to: buyer.email, mail_ids: [read.items[0].id] });
    // The audit names the mails, never their links.
    expect(JSON.stringify(entry)).not.toMatch(LINK);
  });

  it('keeps no link of a mail once SMTP has sent it, and shows every role masked text', async () => {
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData: (stream, _session, done) => stream.on('data', () => {}).on('end', () => done()),
    });
    const port = await freePort();
    await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
    const relayed = await startTestServer({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, TRUST_PROXY: '1' } });
    try {
      const buyer = await person();
      expect((await askPasswordReset(relayed.url, buyer.email)).status).toBe(202);
      const stored = await relayed.services.db.query<{ status: string; text_body: string }>(
        'SELECT status, text_body FROM mail_outbox WHERE recipient = $1',
        [buyer.email],
      );
      expect(stored.rows).toHaveLength(1);
      expect(stored.rows[0].status).toBe('sent');
      expect(stored.rows[0].text_body).not.toMatch(LINK);
      expect(stored.rows[0].text_body).toContain('rst_…');
      const read = await json(
        await fetch(`${relayed.url}/admin/mail?to=${encodeURIComponent(buyer.email)}`, {
          headers: { Authorization: `Bearer ${relayed.adminToken}` },
        }),
      );
      expect(read.links).toBe('masked');
    } finally {
      await relayed.stop();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
  });
});

/** A new administrator made with the bootstrap token: their id and the setup link mailed to them. */
async function invitedAdministrator(role: 'admin' | 'support' = 'support') {
  const email = uniqueEmail('new-admin');
  const created = await json(await post(`${server.url}/admin/administrators`, { email, role }, bootstrap()));
  const links = async () =>
    (await outbox(email, bootstrap())).items
      .map((item: { text: string }) => item.text.match(/\/admin\/setup\?token=\S+/)?.[0])
      .filter(Boolean) as string[];
  return { id: created.id as string, email, links };
}

const field = (text: string, name: string) =>
  text.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1]?.replace(/&#38;/g, '&') ?? '';

async function openSetup(link: string) {
  const browser = new PageBrowser(server, { 'Accept-Language': 'en' });
  const page = await browser.get(link);
  expect(page.status).toBe(200);
  const secret = page.text
    .match(/<code id="totp-secret" class="secret-value">([A-Z2-7 ]+)<\/code>/)![1]
    .replace(/ /g, '');
  return { browser, secret, form: { _csrf: field(page.text, '_csrf'), token: field(page.text, 'token') } };
}

describe("an administrator's setup", () => {
  it('spends every other setup link and invitation of the account, and is audited', async () => {
    const newcomer = await invitedAdministrator();
    await sendSetupLink(server.services, newcomer.id);
    // The same person was also invited to a deal as a buyer (no password yet): that link sets a password too.
    const invitation = await ensureInvitation(server.services.db, newcomer.id);
    const inviteToken = invitationToken(server.services.masterKey, invitation!.id);
    const [second, first] = await newcomer.links();
    expect(first && second && first !== second).toBe(true);

    const setup = await openSetup(first);
    const done = await setup.browser.post('/admin/setup', {
      ...setup.form,
      password: 'a new admin password',
      totp: totpCode(setup.secret, currentStep()),
    });
    expect(done.status).toBe(303);

    // The other link neither shows the secret now in use nor signs in.
    const later = await new PageBrowser(server, { 'Accept-Language': 'en' }).get(second);
    expect(later.status).toBe(400);
    expect(later.text).not.toContain(setup.secret);
    const accepted = await post(`${server.url}/cabinet/invite/accept`, {
      token: inviteToken,
      password: 'somebody else',
    });
    expect(accepted.status).toBe(400);
    expect((await json(accepted)).code).toBe('invalid_invitation');

    const [entry] = await audit(`action=completeAdministratorSetup&object_id=${newcomer.id}`);
    expect(entry).toMatchObject({ actor: newcomer.email, object_type: 'administrator', object_id: newcomer.id });
  });

  it('counts wrong passwords and codes against the sign-in limits: 429 with Retry-After, and then not even the right ones pass', async () => {
    const newcomer = await invitedAdministrator();
    // An account with a password already: the setup asks for it, which made the page a password oracle.
    await setPassword(server.services.db, newcomer.id, ADMIN_PASSWORD);
    const [link] = await newcomer.links();
    const setup = await openSetup(link);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (await setup.browser.post('/admin/setup', { ...setup.form, password: `guess ${i}`, totp: '000000' })).status,
      );
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
    const refused = await setup.browser.post('/admin/setup', {
      ...setup.form,
      password: ADMIN_PASSWORD,
      totp: totpCode(setup.secret, currentStep()),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.text).toContain('Too many');
    const status = await server.services.db.query('SELECT totp_confirmed_at FROM administrators WHERE user_id = $1', [
      newcomer.id,
    ]);
    expect(status.rows[0].totp_confirmed_at).toBeNull();
  });
});

/** An access token of the OpenID Connect flow for this person at the test's site. */
async function ssoAccess(cabinet: Record<string, string>): Promise<string> {
  const code = await codeFor(server, site, cabinet.Authorization.slice('Bearer '.length));
  const response = await oidcToken(
    server,
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
    { Authorization: basic(site.client_id, site.client_secret) },
  );
  expect(response.status).toBe(200);
  return (await json(response)).access_token;
}
const userinfo = async (token: string) =>
  (await fetch(`${server.url}/sso/userinfo`, { headers: { Authorization: `Bearer ${token}` } })).status;
const cabinetStatus = async (headers: Record<string, string>) =>
  (await fetch(`${server.url}/cabinet/profile`, { headers })).status;
const adminStatus = async (token: string) =>
  (await fetch(`${server.url}/admin/audit?limit=1`, { headers: { Authorization: `Bearer ${token}` } })).status;

/** A person who is also an administrator: two cabinet sessions, an administrator sign-in and an SSO token. */
async function everywhere() {
  const operator = await administrator(server, 'support');
  const sessions = await Promise.all([1, 2].map(() => createSession(server.services.db, operator.id, 3600)));
  const [here, there] = sessions.map((session): Record<string, string> => ({
    Authorization: `Bearer ${session.token}`,
  })) as [Record<string, string>, Record<string, string>];
  const access = await ssoAccess(there);
  for (const status of [
    await cabinetStatus(here),
    await cabinetStatus(there),
    await adminStatus(operator.token),
    await userinfo(access),
  ])
    expect(status).toBe(200);
  return { operator, here, there, access };
}

describe('sessions end together', () => {
  it('a password change ends the other cabinet sessions, the administrator sign-ins and the SSO tokens', async () => {
    const { operator, here, there, access } = await everywhere();
    const changed = await post(
      `${server.url}/cabinet/password`,
      { current_password: ADMIN_PASSWORD, new_password: 'a brand new password' },
      here,
    );
    expect(changed.status).toBe(200);
    expect(await cabinetStatus(here)).toBe(200);
    expect(await cabinetStatus(there)).toBe(401);
    expect(await adminStatus(operator.token)).toBe(401);
    expect(await userinfo(access)).toBe(401);
  });

  it('a reset ends all of them', async () => {
    const { operator, here, there, access } = await everywhere();
    expect((await askPasswordReset(server.url, operator.email)).status).toBe(202);
    const token = (await outbox(operator.email, bootstrap())).items[0].text.match(/token=(rst_\S+)/)[1];
    expect((await post(`${server.url}/cabinet/password/reset`, { token, password: 'a reset password' })).status).toBe(
      200,
    );
    for (const status of [
      await cabinetStatus(here),
      await cabinetStatus(there),
      await adminStatus(operator.token),
      await userinfo(access),
    ])
      expect(status).toBe(401);
  });

  it('"sign out everywhere" ends the SSO tokens and administrator sign-ins too', async () => {
    const { operator, here, there, access } = await everywhere();
    const out = await post(`${server.url}/cabinet/logout-everywhere`, {}, here);
    expect(out.status).toBe(200);
    expect(await json(out)).toEqual({ revoked_sessions: 2 });
    for (const status of [
      await cabinetStatus(here),
      await cabinetStatus(there),
      await adminStatus(operator.token),
      await userinfo(access),
    ])
      expect(status).toBe(401);
    // The operator signs in again afresh.
    expect(await adminStatus(await signIn(server, operator.email, operator.secret))).toBe(200);
  });

  it('a revocation racing a code exchange never leaves a working token', async () => {
    const exchangeOf = (code: string) =>
      oidcToken(
        server,
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
        { Authorization: basic(site.client_id, site.client_secret) },
      );
    const outcomes: string[] = [];
    for (let round = 0; round < 16; round++) {
      const user = await person();
      const code = await codeFor(server, site, user.headers.Authorization.slice('Bearer '.length));
      const revoke =
        round % 2 === 0
          ? () =>
              post(
                `${server.url}/cabinet/connected-sites/${encodeURIComponent(site.client_id)}/revoke`,
                {},
                user.headers,
              )
          : () => post(`${server.url}/cabinet/logout-everywhere`, {}, user.headers);
      const [exchanged, revoked] = await Promise.all([exchangeOf(code), revoke()]);
      expect(revoked.status).toBe(200);
      if (exchanged.status === 200) {
        outcomes.push('exchanged first');
        expect(await userinfo((await json(exchanged)).access_token)).toBe(401);
      } else {
        outcomes.push('revoked first');
        expect(exchanged.status).toBe(400);
      }
    }
    expect(outcomes).toHaveLength(16);
  });
});
