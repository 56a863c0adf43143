// The account's own JSON operations over HTTP against the real PostgreSQL: sign-up with its confirmation mail,
// forgotten and changed passwords, the shared link mechanism (single-use, expiring, bound to its purpose), the
// profile and the sessions; and that no answer tells whether an address has an account.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { ensureInvitation, invitationToken } from '../../src/accounts/tokens.ts';
import { keyedDigest } from '../../src/secrets.ts';
import {
  json,
  post,
  startTestServer,
  uniqueEmail,
  uniqueLoopback,
  type TestServer,
  UUID_PATTERN,
  UUID_SOURCE,
} from '../helpers.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const PASSWORD = 'a strong password';
const url = (path: string) => `${server.url}${path}`;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function mails(email: string): Promise<{ subject: string; text: string }[]> {
  const response = await fetch(url(`/admin/mail?to=${encodeURIComponent(email)}`), {
    headers: bearer(server.adminToken),
  });
  return (await json(response)).items;
}

/** The token of the newest mailed link to this path, e.g. /cabinet/reset-password. */
async function linkToken(email: string, path: string): Promise<string> {
  const token = (await mails(email))
    .map((mail) => new RegExp(`${path}\\?token=(\\S+)`).exec(mail.text)?.[1])
    .find(Boolean);
  expect(token, `a mail to ${email} with a ${path} link`).toBeDefined();
  return token!;
}

async function login(email: string, password: string): Promise<Response> {
  return post(url('/cabinet/login'), { email, password });
}

async function signedIn(email: string, password = PASSWORD, headers: Record<string, string> = {}): Promise<string> {
  const response = await post(url('/cabinet/login'), { email, password }, headers);
  expect(response.status).toBe(200);
  return (await json(response)).token;
}

async function userWithPassword(options: { locale?: 'ru' | 'en'; name?: string } = {}) {
  const email = uniqueEmail('acct');
  const { user } = await ensureUser(server.services.db, { email, name: options.name ?? 'Ann' });
  await setPassword(server.services.db, user.id, PASSWORD);
  if (options.locale)
    await server.services.db.query('UPDATE users SET locale = $2 WHERE id = $1', [user.id, options.locale]);
  return { email, user };
}

const me = (token: string) => fetch(url('/cabinet/profile'), { headers: bearer(token) });

describe('sign-up', () => {
  it('mails a confirmation; confirming makes the account with svc ID, personal organization, name and password', async () => {
    const email = uniqueEmail('signup');
    const answer = await post(url('/cabinet/signup'), {
      email,
      password: PASSWORD,
      name: 'Boris Petrov',
      locale: 'en',
    });
    expect(answer.status).toBe(202);
    // Nothing exists before the address is confirmed.
    expect((await login(email, PASSWORD)).status).toBe(401);
    const [mail] = await mails(email);
    expect(mail.subject).toBe('svc ID: confirm your e-mail address');
    expect(mail.text).toContain('Hello Boris Petrov,');

    const confirmed = await post(url('/cabinet/signup/confirm'), {
      token: await linkToken(email, '/cabinet/sign-up/confirm'),
    });
    expect(confirmed.status).toBe(200);
    const session = await json(confirmed);
    expect(session.token).toMatch(/^ct_/);
    const profile = await json(await me(session.token));
    expect(profile).toMatchObject({ email, name: 'Boris Petrov', locale: 'en', org: { name: 'Boris Petrov' } });
    expect(profile.svc_id).toMatch(UUID_PATTERN);
    const org = await server.services.db.query('SELECT personal, owner_id FROM organizations WHERE id = $1', [
      profile.org.id,
    ]);
    expect(org.rows[0]).toEqual({ personal: true, owner_id: profile.svc_id });
    expect((await login(email, PASSWORD)).status).toBe(200);
    // The link works once.
    const again = await post(url('/cabinet/signup/confirm'), {
      token: await linkToken(email, '/cabinet/sign-up/confirm'),
    });
    expect(again.status).toBe(400);
    expect((await json(again)).code).toBe('invalid_token');
  });

  it('answers an address that has an account exactly as a new one, and mails its owner instead', async () => {
    const { email } = await userWithPassword({ locale: 'en' });
    const fresh = uniqueEmail('fresh');
    const known = await post(url('/cabinet/signup'), { email, password: 'another password' });
    const unknown = await post(url('/cabinet/signup'), { email: fresh, password: 'another password' });
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(await json(known)).toEqual(await json(unknown));
    const [mail] = await mails(email);
    expect(mail.subject).toBe('svc ID: you already have an account');
    expect(mail.text).toContain(`${server.url}/cabinet/forgot-password`);
    expect(mail.text).not.toContain('/cabinet/sign-up/confirm');
    // The owner's password is untouched.
    expect((await login(email, PASSWORD)).status).toBe(200);
    expect((await login(email, 'another password')).status).toBe(401);
  });

  it('lets an invited user without a password finish through the confirmation link, and the invitation then stops working', async () => {
    const email = uniqueEmail('invited');
    const { user } = await ensureUser(server.services.db, { email, name: '' });
    const invitation = (await ensureInvitation(server.services.db, user.id))!;
    expect((await post(url('/cabinet/signup'), { email, password: PASSWORD, name: 'Vera' })).status).toBe(202);
    const confirmed = await post(url('/cabinet/signup/confirm'), {
      token: await linkToken(email, '/cabinet/sign-up/confirm'),
    });
    expect(confirmed.status).toBe(200);
    const profile = await json(await me((await json(confirmed)).token));
    expect(profile).toMatchObject({ svc_id: user.id, name: 'Vera' });
    const accepted = await post(url('/cabinet/invite/accept'), {
      token: invitationToken(server.services.masterKey, invitation.id),
      password: 'hijacked password',
    });
    expect(accepted.status).toBe(400);
    expect((await login(email, PASSWORD)).status).toBe(200);
  });

  it('refuses a bad body with 400 and sends nothing', async () => {
    const email = uniqueEmail('bad');
    for (const body of [
      { email, password: 'short' },
      { email: 'not an address', password: PASSWORD },
      { email, password: PASSWORD, colour: 'red' },
    ]) {
      const response = await post(url('/cabinet/signup'), body);
      expect(response.status).toBe(400);
      expect((await json(response)).code).toBe('validation_failed');
    }
    expect(await mails(email)).toEqual([]);
  });
});

describe('forgotten password', () => {
  it('mails a single-use link; the reset sets the password and ends every session', async () => {
    const { email } = await userWithPassword({ locale: 'ru', name: 'Анна' });
    const other = await signedIn(email);
    expect((await post(url('/cabinet/password/forgot'), { email })).status).toBe(202);
    const [mail] = await mails(email);
    expect(mail.subject).toBe('svc ID: новый пароль');
    const token = await linkToken(email, '/cabinet/reset-password');
    expect(token).toMatch(/^rst_/);

    const reset = await post(url('/cabinet/password/reset'), { token, password: 'the new password' });
    expect(reset.status).toBe(200);
    expect((await me((await json(reset)).token)).status).toBe(200);
    expect((await me(other)).status).toBe(401);
    expect((await login(email, PASSWORD)).status).toBe(401);
    expect((await login(email, 'the new password')).status).toBe(200);
    expect((await mails(email))[0].subject).toBe('svc ID: пароль изменён');

    const again = await post(url('/cabinet/password/reset'), { token, password: 'yet another password' });
    expect(again.status).toBe(400);
    expect((await json(again)).code).toBe('invalid_token');
    expect((await login(email, 'the new password')).status).toBe(200);
  });

  it('refuses expired, forged and other-purpose tokens', async () => {
    const { email, user } = await userWithPassword();
    await post(url('/cabinet/password/forgot'), { email });
    const token = await linkToken(email, '/cabinet/reset-password');
    const id = new RegExp(`^rst_(${UUID_SOURCE})\\.`).exec(token)![1];
    const forged = `rst_${id}.${'A'.repeat(43)}`;
    // The same id under another purpose's prefix and digest: a reset link never passes as an invitation.
    const asInvitation = `inv_${id}.${keyedDigest(server.services.masterKey, 'invitation', id)}`;
    const refusals = [
      await post(url('/cabinet/password/reset'), { token: forged, password: 'forged password' }),
      await post(url('/cabinet/invite/accept'), { token: asInvitation, password: 'forged password' }),
      await post(url('/cabinet/invite/accept'), { token: token.replace(/^rst_/, 'inv_'), password: 'forged password' }),
    ];
    expect(refusals.map((response) => response.status)).toEqual([400, 400, 400]);
    // An invitation is no reset link either.
    const invited = await ensureUser(server.services.db, { email: uniqueEmail('inv') });
    const invitation = (await ensureInvitation(server.services.db, invited.user.id))!;
    const wrongPurpose = await post(url('/cabinet/password/reset'), {
      token: invitationToken(server.services.masterKey, invitation.id),
      password: 'forged password',
    });
    expect((await json(wrongPurpose)).code).toBe('invalid_token');

    await server.services.db.query(`UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      id,
    ]);
    const expired = await post(url('/cabinet/password/reset'), { token, password: 'late password' });
    expect(expired.status).toBe(400);
    expect((await json(expired)).code).toBe('invalid_token');
    expect((await login(email, PASSWORD)).status).toBe(200);
    const stored = await server.services.db.query('SELECT data, used_at FROM account_tokens WHERE user_id = $1', [
      user.id,
    ]);
    expect(JSON.stringify(stored.rows)).not.toContain(token.split('.')[1]);
  });

  it('answers every address alike, and mails at most 3 an hour per address', async () => {
    const { email } = await userWithPassword();
    const stranger = uniqueEmail('nobody');
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await post(url('/cabinet/password/forgot'), { email }));
    const unknown = await post(url('/cabinet/password/forgot'), { email: stranger });
    expect([...answers, unknown].map((response) => response.status)).toEqual([202, 202, 202, 202, 202, 202]);
    expect(await json(unknown)).toEqual(await json(answers[0]));
    expect((await mails(email)).length).toBe(3);
    // The address without an account hears that there is none (and how to make one), with no link that resets anything:
    // the same work as for an account, so the answer's time tells nothing either.
    const told = await mails(stranger);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ subject: 'svc ID: учётной записи с этим адресом нет' });
    expect(told[0].text).toContain('/cabinet/sign-up');
    expect(told[0].text).not.toMatch(/token=/);
  });

  it('limits mails per client address too', async () => {
    const from = uniqueLoopback();
    const statuses: number[] = [];
    const emails: string[] = [];
    for (let i = 0; i < 21; i++) {
      const { email } = await userWithPassword();
      emails.push(email);
      statuses.push(await postFrom(from, '/cabinet/password/forgot', { email }));
    }
    expect(new Set(statuses)).toEqual(new Set([202]));
    expect((await mails(emails[19])).length).toBe(1);
    expect(await mails(emails[20])).toEqual([]);
  });
});

/** A JSON POST from a loopback address of the test's own, since limits per client address count in the shared database. */
function postFrom(
  localAddress: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url(path),
      { method: 'POST', localAddress, headers: { 'Content-Type': 'application/json', ...headers } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode!));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe('changing the password', () => {
  it('needs the current password and ends the other sessions, not this one', async () => {
    const { email } = await userWithPassword();
    const mine = await signedIn(email);
    const other = await signedIn(email);
    // From an address of its own: wrong passwords count per address in the database every test shares.
    expect(
      await postFrom(
        uniqueLoopback(),
        '/cabinet/password',
        { current_password: 'not it at all', new_password: 'brand new password' },
        bearer(mine),
      ),
    ).toBe(400);
    expect((await me(other)).status).toBe(200);

    const changed = await post(
      url('/cabinet/password'),
      { current_password: PASSWORD, new_password: 'brand new password' },
      bearer(mine),
    );
    expect(changed.status).toBe(200);
    expect(await json(changed)).toEqual({ revoked_sessions: 1 });
    expect((await me(mine)).status).toBe(200);
    expect((await me(other)).status).toBe(401);
    expect((await login(email, PASSWORD)).status).toBe(401);
    expect((await login(email, 'brand new password')).status).toBe(200);
    expect((await mails(email))[0].subject).toBe('svc ID: пароль изменён');
  });

  it('counts wrong current passwords against the sign-in limits', async () => {
    const { email } = await userWithPassword();
    const mine = await signedIn(email);
    const from = uniqueLoopback();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        await postFrom(
          from,
          '/cabinet/password',
          { current_password: `wrong ${i}`, new_password: 'brand new password' },
          bearer(mine),
        ),
      );
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
  });
});

describe('profile', () => {
  it('shows and changes the name and the language; a bad language is 400 and changes nothing', async () => {
    const { email, user } = await userWithPassword({ name: 'Old Name' });
    const token = await signedIn(email);
    expect(await json(await me(token))).toMatchObject({
      svc_id: user.id,
      email,
      name: 'Old Name',
      locale: 'ru',
      org: { name: 'Old Name' },
    });

    const bad = await fetch(url('/cabinet/profile'), {
      method: 'PATCH',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Changed', locale: 'de' }),
    });
    expect(bad.status).toBe(400);
    expect((await json(bad)).code).toBe('validation_failed');
    expect(await json(await me(token))).toMatchObject({ name: 'Old Name', locale: 'ru' });

    const good = await fetch(url('/cabinet/profile'), {
      method: 'PATCH',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'New Name', locale: 'en' }),
    });
    expect(good.status).toBe(200);
    expect(await json(good)).toMatchObject({ name: 'New Name', locale: 'en', org: { name: 'New Name' } });
    expect(await json(await me(token))).toMatchObject({ name: 'New Name', locale: 'en' });
    // Mail follows the language.
    await post(url('/cabinet/password/forgot'), { email });
    expect((await mails(email))[0].subject).toBe('svc ID: set a new password');
  });

  it('is 401 without a cabinet token', async () => {
    expect((await fetch(url('/cabinet/profile'))).status).toBe(401);
    expect((await fetch(url('/cabinet/sessions'), { headers: bearer('ct_nothing') })).status).toBe(401);
  });
});

describe('sessions', () => {
  it('lists them with the current one marked; revoking one ends it at once; another user’s is 404', async () => {
    const { email } = await userWithPassword();
    const phone = await signedIn(email, PASSWORD, { 'User-Agent': 'Phone browser 1.0' });
    const laptop = await signedIn(email, PASSWORD, { 'User-Agent': 'Laptop browser 2.0' });
    const listed = await json(await fetch(url('/cabinet/sessions'), { headers: bearer(laptop) }));
    expect(listed.items).toHaveLength(2);
    const byAgent = Object.fromEntries(listed.items.map((item: { user_agent: string }) => [item.user_agent, item]));
    expect(byAgent['Laptop browser 2.0'].current).toBe(true);
    expect(byAgent['Phone browser 1.0'].current).toBe(false);
    expect(Object.keys(byAgent['Phone browser 1.0']).sort()).toEqual([
      'created_at',
      'current',
      'id',
      'last_used_at',
      'user_agent',
    ]);

    const { email: otherEmail } = await userWithPassword();
    const stranger = await signedIn(otherEmail);
    const notTheirs = await post(
      url(`/cabinet/sessions/${byAgent['Phone browser 1.0'].id}/revoke`),
      {},
      bearer(stranger),
    );
    expect(notTheirs.status).toBe(404);
    expect((await post(url('/cabinet/sessions/not-an-id/revoke'), {}, bearer(laptop))).status).toBe(404);
    expect((await me(phone)).status).toBe(200);

    const revoked = await post(url(`/cabinet/sessions/${byAgent['Phone browser 1.0'].id}/revoke`), {}, bearer(laptop));
    expect(revoked.status).toBe(200);
    expect((await me(phone)).status).toBe(401);
    expect((await me(laptop)).status).toBe(200);
  });

  it('signs out everywhere', async () => {
    const { email } = await userWithPassword();
    const tokens = [await signedIn(email), await signedIn(email), await signedIn(email)];
    const response = await post(url('/cabinet/logout-everywhere'), {}, bearer(tokens[0]));
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ revoked_sessions: 3 });
    for (const token of tokens) expect((await me(token)).status).toBe(401);
  });
});

describe('invitations on the shared mechanism', () => {
  it('keeps links of the old shape working once, for 14 days', async () => {
    const email = uniqueEmail('old-link');
    const { user } = await ensureUser(server.services.db, { email });
    const { id } = (await ensureInvitation(server.services.db, user.id))!;
    // The shape mailed before account tokens existed: inv_{id}.{HMAC(master key, "invitation:id")}.
    const link = `inv_${id}.${keyedDigest(server.services.masterKey, 'invitation', id)}`;
    const accepted = await post(url('/cabinet/invite/accept'), { token: link, password: PASSWORD });
    expect(accepted.status).toBe(200);
    expect((await post(url('/cabinet/invite/accept'), { token: link, password: PASSWORD })).status).toBe(400);
    const expiry = await server.services.db.query(
      `SELECT expires_at - created_at AS ttl FROM account_tokens WHERE id = $1`,
      [id],
    );
    expect(expiry.rows[0].ttl).toMatchObject({ days: 14 });
  });
});
