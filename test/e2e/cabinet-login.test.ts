// POST /cabinet/login limits wrong passwords per account and address, per address, and by a per-account ceiling, with
// the SSO login form's windows. The client address comes from X-Forwarded-For (TRUST_PROXY=1), so each test picks
// addresses of its own (uniqueLoopback: no other test signs in from them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { json, post, startTestServer, uniqueEmail, uniqueLoopback, type TestServer } from '../helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: {
      TRUST_PROXY: '1',
      SSO_LOGIN_ACCOUNT_ADDRESS_LIMIT: '3',
      SSO_LOGIN_ADDRESS_LIMIT: '50',
      SSO_LOGIN_ACCOUNT_LIMIT: '6',
    },
  });
});
afterAll(() => server?.stop());

async function userWithPassword(password: string) {
  const email = uniqueEmail('login');
  const { user } = await ensureUser(server.services.db, { email });
  await setPassword(server.services.db, user.id, password);
  return email;
}

const login = (email: string, password: string, from: string) =>
  post(`${server.url}/cabinet/login`, { email, password }, { 'X-Forwarded-For': from });

describe('POST /cabinet/login', () => {
  it('stops an address after the limit of wrong passwords for the account, even for the right one, with Retry-After', async () => {
    const email = await userWithPassword('right password');
    const from = uniqueLoopback();
    for (let i = 0; i < 3; i++) expect((await login(email, 'wrong password', from)).status).toBe(401);
    const locked = await login(email, 'right password', from);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await json(locked)).code).toBe('too_many_attempts');

    const other = await userWithPassword('other password');
    expect((await login(other, 'other password', from)).status).toBe(200);
  });

  it('lets the owner in from another address however long a stranger keeps guessing from theirs', async () => {
    const email = await userWithPassword('right password');
    const from = uniqueLoopback();
    const stranger = await Promise.all(Array.from({ length: 12 }, () => login(email, 'guess', from)));
    expect(stranger.filter((reply) => reply.status === 401)).toHaveLength(3);
    expect(stranger.filter((reply) => reply.status === 429)).toHaveLength(9);
    expect((await login(email, 'right password', uniqueLoopback())).status).toBe(200);
  });

  it('holds an account at its ceiling (SSO_LOGIN_ACCOUNT_LIMIT) against guessing from many addresses', async () => {
    const email = await userWithPassword('right password');
    for (let i = 0; i < 6; i++) expect((await login(email, 'guess', uniqueLoopback())).status).toBe(401);
    const held = await login(email, 'guess', uniqueLoopback());
    expect(held.status).toBe(429);
    expect((await json(held)).code).toBe('too_many_attempts');
    expect((await login(email, 'right password', uniqueLoopback())).status).toBe(429); // until the window ends
  });

  it('starts the address afresh after a correct password', async () => {
    const email = await userWithPassword('right password');
    const from = uniqueLoopback();
    for (let i = 0; i < 2; i++) expect((await login(email, 'wrong password', from)).status).toBe(401);
    expect((await login(email, 'right password', from)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await login(email, 'wrong password', from)).status).toBe(401);
    expect((await login(email, 'right password', from)).status).toBe(200);
  });
});
