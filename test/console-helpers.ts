// Administrators for tests: a person with a role, a password and a confirmed TOTP secret, signed in through
// POST /admin/login (as the console's sign-in does), with the cookie and CSRF token of the console's forms.
import { ensureUser, setPassword } from '../src/accounts/users.ts';
import { encryptSecret, keyedDigest } from '../src/secrets.ts';
import { currentStep, newTotpSecret, totpCode } from '../src/admin/totp.ts';
import type { AdminRole } from '../src/admin/auth.ts';
import { json, post, uniqueEmail, type TestServer } from './helpers.ts';

export const ADMIN_PASSWORD = 'an administrator password';

export interface TestAdministrator {
  id: string;
  email: string;
  role: AdminRole;
  secret: string;
  /** For the JSON operations: Authorization: Bearer <token>. */
  token: string;
  headers: Record<string, string>;
  /** For the console's pages: the Cookie header and the `_csrf` of its forms. */
  cookie: string;
  csrf: string;
}

export async function administrator(server: TestServer, role: AdminRole = 'admin'): Promise<TestAdministrator> {
  const { db, masterKey } = server.services;
  const email = uniqueEmail(`admin-${role}`);
  const { user } = await ensureUser(db, { email, name: `Test ${role}` });
  await setPassword(db, user.id, ADMIN_PASSWORD);
  const secret = newTotpSecret();
  await db.query(
    `INSERT INTO administrators (user_id, role, totp_secret_sealed, totp_confirmed_at, created_by) VALUES ($1, $2, $3, now(), 'test')`,
    [user.id, role, encryptSecret(masterKey, secret)],
  );
  const token = await signIn(server, email, secret);
  return {
    id: user.id,
    email,
    role,
    secret,
    token,
    headers: { Authorization: `Bearer ${token}` },
    cookie: `svc_admin=${token}`,
    csrf: keyedDigest(masterKey, 'console-csrf', token),
  };
}

/**
 * POST /admin/login with the code of the next step not yet used (a code works once). The earliest step the server
 * takes is the one before the current: when a 30 s step ends between choosing the code and the server checking it, that
 * code has left the window, so the sign-in is tried once more with a code of the new step.
 */
export async function signIn(server: TestServer, email: string, secret: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const result = await server.services.db.query<{ last: string }>(
      'SELECT totp_last_step AS last FROM administrators a JOIN users u ON u.id = a.user_id WHERE lower(u.email) = lower($1)',
      [email],
    );
    const chosenAt = currentStep();
    const step = Math.max(chosenAt - 1, Number(result.rows[0].last) + 1);
    const response = await post(`${server.url}/admin/login`, {
      email,
      password: ADMIN_PASSWORD,
      totp: totpCode(secret, step),
    });
    if (response.status === 200) return (await json(response)).token;
    if (attempt === 1 && currentStep() !== chosenAt) continue;
    throw new Error(`admin sign-in: ${response.status} ${await response.text()}`);
  }
}
