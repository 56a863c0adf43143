// Administrators as people: made by the bootstrap token or another administrator, set up from a mailed link
// (password and TOTP), signed in with e-mail, password and a code, changed or disabled by an administrator.
import { randomUUID } from 'node:crypto';
import type { Services } from '../services.ts';
import type { DbClient } from '../db.ts';
import { inTransaction } from '../db.ts';
import { isUuid } from '../uuid.ts';
import { problem, unauthorized } from '../http/problem.ts';
import { decryptSecret, encryptSecret, hashSecret, newSecret } from '../secrets.ts';
import { ensureUser, findLogin, findMailRecipient, followLocale } from '../accounts/users.ts';
import { hashPassword, verifyPassword } from '../accounts/passwords.ts';
import { countLoginAttempt, loginLimits, loginSubjects, loginSucceeded } from '../accounts/login-limits.ts';
import { consumeToken, issueToken, tokenUsable } from '../accounts/tokens.ts';
import { adminSetupMail } from '../mail/templates.ts';
import { ADMIN_TOKEN_PREFIX, type AdminRole } from './auth.ts';
import { recordAudit } from './audit.ts';
import { matchingStep, newTotpSecret, otpauthUri } from './totp.ts';

/** How long an administrator's sign-in lasts: a working day, then the code is asked again. */
export const ADMIN_SESSION_SECONDS = 12 * 3600;
const TOTP_ISSUER = 'svc console';

export interface Administrator {
  id: string;
  email: string;
  name: string;
  role: AdminRole;
  status: 'invited' | 'active' | 'disabled';
  created_at: string;
  created_by: string;
}

const COLUMNS = `a.user_id AS id, u.email, u.name, a.role, a.created_at, a.created_by,
  CASE WHEN a.disabled_at IS NOT NULL THEN 'disabled' WHEN a.totp_confirmed_at IS NULL THEN 'invited' ELSE 'active' END AS status`;

const view = (row: Omit<Administrator, 'created_at'> & { created_at: Date }): Administrator => ({
  ...row,
  created_at: row.created_at.toISOString(),
});

export async function listAdministrators(db: DbClient): Promise<Administrator[]> {
  const result = await db.query(
    `SELECT ${COLUMNS} FROM administrators a JOIN users u ON u.id = a.user_id ORDER BY a.created_at, u.email`,
  );
  return result.rows.map(view);
}

/**
 * A page of the console's list, newest first (a colleague just invited opens it), by role, status and part of the
 * e-mail, after an administrator's id.
 */
export async function administratorPage(
  db: DbClient,
  filter: { q?: string; role?: AdminRole; status?: Administrator['status']; startingAfter?: string; limit: number },
): Promise<{ items: Administrator[]; has_more: boolean }> {
  const pattern = filter.q ? `%${filter.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const result = await db.query(
    `SELECT * FROM (SELECT ${COLUMNS} FROM administrators a JOIN users u ON u.id = a.user_id) x
      WHERE ($1::text IS NULL OR x.role = $1) AND ($2::text IS NULL OR x.status = $2)
        AND ($3::text IS NULL OR lower(x.email) LIKE $3)
        AND ($4::uuid IS NULL OR (x.created_at, x.id) < (SELECT created_at, user_id FROM administrators WHERE user_id = $4))
      ORDER BY x.created_at DESC, x.id DESC LIMIT $5`,
    [filter.role ?? null, filter.status ?? null, pattern, filter.startingAfter ?? null, filter.limit + 1],
  );
  return { items: result.rows.slice(0, filter.limit).map(view), has_more: result.rows.length > filter.limit };
}

export async function findAdministrator(db: DbClient, id: string): Promise<Administrator | undefined> {
  if (!isUuid(id)) return undefined;
  const result = await db.query(
    `SELECT ${COLUMNS} FROM administrators a JOIN users u ON u.id = a.user_id WHERE a.user_id = $1`,
    [id],
  );
  return result.rows[0] && view(result.rows[0]);
}

/**
 * A new administrator: the account of this e-mail (made when there is none, as the accounts module makes them) with
 * the role, and a mail with the one-time setup link. 409 when they are an administrator already.
 */
export async function createAdministrator(
  services: Services,
  actor: string,
  input: { email: string; role: AdminRole; locale?: 'ru' | 'en' },
): Promise<Administrator> {
  const { db } = services;
  const { user } = await ensureUser(db, { email: input.email });
  // The invitation's language, and the account's unless its person chose one: a new account is Russian without it.
  if (input.locale) await followLocale(db, user.id, input.locale);
  const inserted = await db.query(
    `INSERT INTO administrators (user_id, role, created_by) VALUES ($1, $2, $3) ON CONFLICT (user_id) DO NOTHING`,
    [user.id, input.role, actor],
  );
  if (inserted.rowCount === 0)
    throw problem('administrator_exists', `${user.email} is an administrator already; change their role instead.`);
  await sendSetupLink(services, user.id);
  return (await findAdministrator(db, user.id))!;
}

/** The setup link, mailed again (a new one; an earlier one still works until it is used or expires). */
export async function sendSetupLink(services: Services, administratorId: string): Promise<void> {
  const administrator = (await findAdministrator(services.db, administratorId))!;
  const { token, id } = await issueToken(services.db, services.masterKey, 'admin_setup', { userId: administratorId });
  const recipient = await findMailRecipient(services.db, administrator.email);
  const mail = adminSetupMail(
    recipient?.locale ?? 'ru',
    administrator.name,
    administrator.role,
    `${services.config.BASE_URL}/admin/setup?token=${token}`,
  );
  await services.mailer.send({ key: `admin-setup/${id}`, to: administrator.email, ...mail });
}

/**
 * A role, or disabled/enabled. Disabling ends their sign-ins at once (the role is read on every request anyway).
 * The last enabled administrator with the admin role cannot be demoted or disabled: nobody could make another.
 */
export async function updateAdministrator(
  services: Services,
  id: string,
  changes: { role?: AdminRole; disabled?: boolean },
): Promise<{ before: Administrator; after: Administrator }> {
  return inTransaction(services.db, async (client) => {
    // One change of administrators at a time, so two demotions cannot each see the other as the remaining admin.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['administrators']);
    const before = await findAdministrator(client, id);
    if (!before) throw problem('not_found', 'No such administrator.');
    const losesAdmin =
      before.role === 'admin' &&
      before.status !== 'disabled' &&
      ((changes.role && changes.role !== 'admin') || changes.disabled === true);
    if (losesAdmin) {
      const others = await client.query(
        `SELECT 1 FROM administrators WHERE role = 'admin' AND disabled_at IS NULL AND totp_confirmed_at IS NOT NULL AND user_id <> $1`,
        [id],
      );
      if (others.rowCount === 0)
        throw problem('last_admin', 'This is the last administrator with the admin role: make another one first.');
    }
    await client.query(
      `UPDATE administrators SET role = coalesce($2, role),
         disabled_at = CASE WHEN $3::boolean IS NULL THEN disabled_at WHEN $3 THEN coalesce(disabled_at, now()) ELSE NULL END
       WHERE user_id = $1`,
      [id, changes.role ?? null, changes.disabled ?? null],
    );
    if (changes.disabled)
      await client.query(
        'UPDATE admin_tokens SET revoked_at = now() WHERE administrator_id = $1 AND revoked_at IS NULL',
        [id],
      );
    return { before, after: (await findAdministrator(client, id))! };
  });
}

export interface SetupState {
  email: string;
  /** Whether the account has no password yet, so the setup must set one (otherwise it asks for the current one). */
  needsPassword: boolean;
  secret: string;
  uri: string;
}

/**
 * What the setup page shows for this link: the TOTP secret (made once and kept sealed, so reloading the page shows
 * the same one) and whether a password must be chosen. Undefined when the link is not usable, and once the
 * administrator is set up: a setup link never shows the secret of a second factor in use.
 */
export async function setupState(services: Services, token: string): Promise<SetupState | undefined> {
  const { db, masterKey } = services;
  if (!(await tokenUsable(db, masterKey, 'admin_setup', token))) return undefined;
  const userId = await setupUser(services, token);
  if (!userId) return undefined;
  await db.query(
    `UPDATE administrators SET totp_secret_sealed = $2 WHERE user_id = $1 AND totp_secret_sealed IS NULL AND totp_confirmed_at IS NULL`,
    [userId, encryptSecret(masterKey, newTotpSecret())],
  );
  const result = await db.query<{ email: string; sealed: string; password_hash: string | null }>(
    `SELECT u.email, a.totp_secret_sealed AS sealed, u.password_hash FROM administrators a JOIN users u ON u.id = a.user_id
      WHERE a.user_id = $1 AND a.disabled_at IS NULL AND a.totp_confirmed_at IS NULL`,
    [userId],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const secret = decryptSecret(masterKey, row.sealed);
  return {
    email: row.email,
    needsPassword: row.password_hash === null,
    secret,
    uri: otpauthUri(secret, row.email, TOTP_ISSUER),
  };
}

/** The user a usable setup link is for (read without spending it). */
async function setupUser(services: Services, token: string): Promise<string | undefined> {
  const id = /^ads_([^.]*)\./.exec(token)?.[1];
  if (!id || !isUuid(id)) return undefined;
  const result = await services.db.query<{ user_id: string }>('SELECT user_id FROM account_tokens WHERE id = $1', [id]);
  return result.rows[0]?.user_id;
}

export type SetupRefusal = 'invalid_link' | 'wrong_password' | 'wrong_code' | 'password_required';

/**
 * Finishes the setup: the first code from the app proves it holds the secret; a new account chooses its password, one
 * that has a password types it. Every attempt counts against the sign-in limits of the address (a wrong password here
 * is as much a guess as at the sign-in). Success spends this link and every other link of the account that could set
 * it up or set its password (setup links, invitations, resets), is audited, and signs in. A refusal leaves the link
 * usable for another try.
 */
export async function completeSetup(
  services: Services,
  input: { token: string; password: string; code: string; ip: string },
): Promise<
  | { session: { token: string; expires_at: string; role: AdminRole } }
  | { refusal: SetupRefusal }
  | { retryAfter: number }
> {
  const state = await setupState(services, input.token);
  if (!state) return { refusal: 'invalid_link' };
  const userId = (await setupUser(services, input.token))!;
  const subjects = loginSubjects(`admin:${state.email}`, input.ip);
  const { retryAfter } = await countLoginAttempt(services.db, subjects, loginLimits(services.config));
  if (retryAfter) return { retryAfter };
  if (state.needsPassword) {
    if (input.password.length < 8) return { refusal: 'password_required' };
  } else {
    const login = await findLogin(services.db, state.email);
    if (!(await verifyPassword(login?.password_hash ?? null, input.password))) return { refusal: 'wrong_password' };
  }
  const step = matchingStep(state.secret, input.code.replace(/\s/g, ''));
  if (step === undefined) return { refusal: 'wrong_code' };
  const passwordHash = state.needsPassword ? await hashPassword(input.password) : undefined;
  const done = await inTransaction(services.db, async (client) => {
    if (!(await consumeToken(client, services.masterKey, 'admin_setup', input.token))) return false;
    // Only the first setup of an administrator confirms: two links used at once cannot both set a second factor.
    const confirmed = await client.query(
      'UPDATE administrators SET totp_confirmed_at = now(), totp_last_step = $2 WHERE user_id = $1 AND totp_confirmed_at IS NULL AND disabled_at IS NULL',
      [userId, step],
    );
    if (confirmed.rowCount === 0) throw new SetupRaced();
    if (passwordHash)
      await client.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [
        userId,
        passwordHash,
      ]);
    await client.query(
      `UPDATE account_tokens SET used_at = now() WHERE user_id = $1 AND purpose IN ('admin_setup', 'invitation', 'password_reset') AND used_at IS NULL`,
      [userId],
    );
    await recordAudit(client, {
      actor: state.email,
      action: 'completeAdministratorSetup',
      object_type: 'administrator',
      object_id: userId,
      after: { email: state.email },
    });
    return true;
  }).catch((error: unknown) => {
    if (error instanceof SetupRaced) return false;
    throw error;
  });
  if (!done) return { refusal: 'invalid_link' };
  await loginSucceeded(services.db, subjects);
  return { session: await startAdminSession(services, userId) };
}

class SetupRaced extends Error {}

/** `POST /admin/login` and the console's sign-in: e-mail, password and a fresh code, behind the sign-in limits. */
export async function adminSignIn(
  services: Services,
  input: { email: string; password: string; totp: string; ip: string },
): Promise<{ token: string; expires_at: string; role: AdminRole }> {
  const { db } = services;
  const subjects = loginSubjects(`admin:${input.email}`, input.ip);
  const { retryAfter } = await countLoginAttempt(db, subjects, loginLimits(services.config));
  if (retryAfter) {
    throw problem('too_many_attempts', `Too many failed sign-ins; try again in ${Math.ceil(retryAfter / 60)} min.`, {
      headers: { 'Retry-After': String(retryAfter) },
    });
  }
  const refused = unauthorized('The e-mail, the password or the code is wrong.', 'Bearer realm="admin"');
  const login = await findLogin(db, input.email.trim());
  const passwordOk = await verifyPassword(login?.password_hash ?? null, input.password);
  if (!login || !passwordOk) throw refused;
  const result = await db.query<{ sealed: string; last_step: string }>(
    `SELECT totp_secret_sealed AS sealed, totp_last_step AS last_step FROM administrators
      WHERE user_id = $1 AND disabled_at IS NULL AND totp_confirmed_at IS NOT NULL`,
    [login.id],
  );
  const row = result.rows[0];
  const step = row
    ? matchingStep(decryptSecret(services.masterKey, row.sealed), input.totp.replace(/\s/g, ''))
    : undefined;
  if (!row || step === undefined) throw refused;
  // The code is spent in the same statement that checks it is newer than the last one spent.
  const spent = await db.query(
    'UPDATE administrators SET totp_last_step = $2 WHERE user_id = $1 AND totp_last_step < $2',
    [login.id, step],
  );
  if (spent.rowCount === 0) throw refused;
  await loginSucceeded(db, subjects);
  return startAdminSession(services, login.id);
}

async function startAdminSession(
  services: Services,
  administratorId: string,
): Promise<{ token: string; expires_at: string; role: AdminRole }> {
  const token = newSecret(ADMIN_TOKEN_PREFIX);
  const result = await services.db.query<{ expires_at: Date; role: AdminRole }>(
    `WITH session AS (
       INSERT INTO admin_tokens (name, token_hash, administrator_id, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires_at, administrator_id)
     SELECT s.expires_at, a.role FROM session s JOIN administrators a ON a.user_id = s.administrator_id`,
    [`sign-in ${randomUUID()}`, hashSecret(token), administratorId, ADMIN_SESSION_SECONDS],
  );
  const row = result.rows[0];
  return { token, expires_at: row.expires_at.toISOString(), role: row.role };
}

/** Signing out of the console or the API: the token stops at once. */
export async function endAdminSession(services: Services, token: string): Promise<void> {
  await services.db.query(
    'UPDATE admin_tokens SET revoked_at = now() WHERE token_hash = $1 AND administrator_id IS NOT NULL',
    [hashSecret(token)],
  );
}
