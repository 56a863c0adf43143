// POST /cabinet/login limits wrong passwords per account and per address, with the SSO login form's windows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser, setPassword } from '../src/accounts/users.ts';
import { json, post, startTestServer, uniqueEmail, type TestServer } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { SSO_LOGIN_ACCOUNT_LIMIT: '3', SSO_LOGIN_ADDRESS_LIMIT: '50' } });
});
afterAll(() => server?.stop());

async function userWithPassword(password: string) {
  const email = uniqueEmail('login');
  const { user } = await ensureUser(server.services.db, { email });
  await setPassword(server.services.db, user.id, password);
  return email;
}

const login = (email: string, password: string) => post(`${server.url}/cabinet/login`, { email, password });

describe('POST /cabinet/login', () => {
  it('locks an account after the limit of wrong passwords, even for the right one, with Retry-After', async () => {
    const email = await userWithPassword('right password');
    for (let i = 0; i < 3; i++) expect((await login(email, 'wrong password')).status).toBe(401);
    const locked = await login(email, 'right password');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await json(locked)).code).toBe('too_many_attempts');

    const other = await userWithPassword('other password');
    expect((await login(other, 'other password')).status).toBe(200);
  });

  it('starts the account afresh after a correct password', async () => {
    const email = await userWithPassword('right password');
    for (let i = 0; i < 2; i++) expect((await login(email, 'wrong password')).status).toBe(401);
    expect((await login(email, 'right password')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await login(email, 'wrong password')).status).toBe(401);
    expect((await login(email, 'right password')).status).toBe(200);
  });
});
