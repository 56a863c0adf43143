// Sign-up, forgotten and changed passwords: what a person does for their own account, shared by the JSON routes and
// the pages. Answers never tell whether an address has an account: a sign-up or a reset request for any address gets
// the same answer, and what differs goes by mail to the address's owner.
import { randomUUID } from 'node:crypto';
import type { Services } from '../services.ts';
import { Problem, problem } from '../http/problem.ts';
import type { Lang } from '../web/i18n.ts';
import {
  accountExistsMail,
  noAccountMail,
  passwordChangedMail,
  passwordResetMail,
  signupConfirmationMail,
  type AccountLinks,
} from '../mail/templates.ts';
import { countLoginAttempt, loginLimits, loginSubjects, loginSucceeded } from './login-limits.ts';
import { mailAllowed } from './mail-limits.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { createSession, endAccess, endAccessIn } from './sessions.ts';
import { consumeToken, issueToken, spendPasswordLinks } from './tokens.ts';
import { ensureUser, findLogin, findMailRecipient, findUserById, setPassword, type User } from './users.ts';
import type { Session } from './operations.ts';
import { inTransaction } from '../db.ts';
import { hasSecondFactor } from '../mfa/factors.ts';

/** Who asks: the client address counts against limits, the browser names the session in the owner's list. */
export interface Client {
  ip: string;
  userAgent: string;
}

/** Where a sign-in and a reset start, for the account mails (src/mfa/console-person.ts's too). */
export const links = (services: Services): AccountLinks => ({
  signIn: `${services.config.BASE_URL}/cabinet/sign-in`,
  forgotPassword: `${services.config.BASE_URL}/cabinet/forgot-password`,
});

function invalidToken(): Problem {
  return problem('invalid_token', 'The link is not valid, was already used or has expired. Ask for a new one.');
}

/**
 * Mails a confirmation link (24 hours) for a new account, or, when the address can already sign in, a mail saying so
 * with the sign-in and reset links. The password is hashed either way, so the answer takes as long in both cases.
 */
export async function signUp(
  services: Services,
  input: { email: string; password: string; name: string; locale: Lang; next?: string },
  client: Client,
): Promise<void> {
  const { db } = services;
  const passwordHash = await hashPassword(input.password);
  if (!(await mailAllowed(db, 'signup', input.email, client.ip))) return;
  const owner = await findMailRecipient(db, input.email);
  if (owner?.has_password) {
    const mail = accountExistsMail(owner.locale, owner.name, links(services));
    await services.mailer.send({ key: `account-exists/${randomUUID()}`, to: input.email, ...mail });
    return;
  }
  const data = { name: input.name, password_hash: passwordHash, locale: input.locale, next: input.next ?? null };
  const { id, token } = await issueToken(db, services.masterKey, 'signup', { email: input.email, data });
  const mail = signupConfirmationMail(
    input.locale,
    input.name,
    `${services.config.BASE_URL}/cabinet/sign-up/confirm?token=${token}`,
  );
  await services.mailer.send({ key: `signup/${id}`, to: input.email, ...mail });
}

/**
 * Makes the account from a confirmed sign-up as a deal would (svc ID, personal organization), with the password,
 * name and language chosen; an invited user without a password completes theirs. 400 invalid_token for a used,
 * expired or forged link, and for an account that got a password meanwhile (it keeps that one).
 */
export async function confirmSignUp(
  services: Services,
  token: string,
  userAgent: string,
): Promise<{ session: Session; next?: string }> {
  const { db } = services;
  const row = await consumeToken(db, services.masterKey, 'signup', token);
  if (!row?.email) throw invalidToken();
  const data = row.data as { name?: string; password_hash?: string; locale?: Lang; next?: string | null };
  const name = data.name ?? '';
  const { user } = await ensureUser(db, { email: row.email, name });
  const completed = await inTransaction(db, async (client) => {
    const updated = await client.query(
      `UPDATE users SET password_hash = $2, name = CASE WHEN $3 = '' THEN name ELSE $3 END, locale = coalesce($4, locale),
              locale_chosen = locale_chosen OR $4::text IS NOT NULL, updated_at = now()
        WHERE id = $1 AND password_hash IS NULL`,
      [user.id, data.password_hash, name, data.locale ?? null],
    );
    if (updated.rowCount === 1) await spendPasswordLinks(client, user.id);
    return updated.rowCount === 1;
  });
  if (!completed) throw invalidToken();
  const session = await createSession(db, user.id, services.config.CABINET_TOKEN_TTL_SECONDS, userAgent);
  return { session, ...(data.next ? { next: data.next } : {}) };
}

/**
 * Mails a single-use reset link (one hour) to an address with an account, and a mail saying there is none (with the
 * sign-up link) to one without, when the mail limits allow; silent over them. Either way one lookup and one mail, sent
 * before the answer (through SMTP when it is configured), so neither the answer nor its time tells whether the address
 * has an account.
 */
export async function forgotPassword(
  services: Services,
  email: string,
  client: Client,
  lang: Lang = 'ru',
  next?: string,
): Promise<void> {
  const { db } = services;
  if (!(await mailAllowed(db, 'password_reset', email, client.ip))) return;
  const owner = await findMailRecipient(db, email);
  if (!owner) {
    const mail = noAccountMail(lang, `${services.config.BASE_URL}/cabinet/sign-up`);
    await services.mailer.send({ key: `password-reset/none/${randomUUID()}`, to: email, ...mail });
    return;
  }
  // Where the reset started (an SSO sign-in, say) is kept with the link, so the new password leads back there.
  const { id, token } = await issueToken(db, services.masterKey, 'password_reset', {
    userId: owner.id,
    ...(next ? { data: { next } } : {}),
  });
  const mail = passwordResetMail(
    owner.locale,
    owner.name,
    `${services.config.BASE_URL}/cabinet/reset-password?token=${token}`,
  );
  await services.mailer.send({ key: `password-reset/${id}`, to: email, ...mail });
}

/**
 * Sets the password from a reset link, ends everything that let the user in (cabinet sessions, administrator
 * sign-ins, SSO tokens: whoever had the old password is out), and signs in afresh; 400 invalid_token for a used, expired or forged link.
 */
export async function resetPassword(
  services: Services,
  token: string,
  password: string,
  userAgent: string,
): Promise<Session> {
  const reset = await resetPasswordAndReturn(services, token, password, userAgent);
  if (!reset.session)
    throw problem(
      'second_factor_required',
      'The new password is set. The account has a second factor: sign in with the password and `code` (POST /cabinet/login).',
      { headers: { 'WWW-Authenticate': 'Bearer realm="cabinet"' } },
    );
  return reset.session;
}

/**
 * resetPassword, and where the reset started (the `next` its request gave), for the page to lead back there. An
 * account with a second factor gets no session: a link from the mailbox is one factor, so the second is still asked
 * (`secondFactor`: the page's second step).
 */
export async function resetPasswordAndReturn(
  services: Services,
  token: string,
  password: string,
  userAgent: string,
): Promise<{ session?: Session; secondFactor?: { userId: string }; next?: string }> {
  const { db } = services;
  const row = await consumeToken(db, services.masterKey, 'password_reset', token);
  const userId = row?.user_id;
  if (!userId) throw invalidToken();
  const passwordHash = await hashPassword(password);
  await inTransaction(db, async (client) => {
    await client.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [userId, passwordHash]);
    await spendPasswordLinks(client, userId);
    await endAccessIn(client, userId);
  });
  await notifyPasswordChanged(services, userId);
  const next = row.data.next;
  const carried = typeof next === 'string' ? { next } : {};
  if (await hasSecondFactor(db, userId)) return { secondFactor: { userId }, ...carried };
  const session = await createSession(db, userId, services.config.CABINET_TOKEN_TTL_SECONDS, userAgent);
  return { session, ...carried };
}

/**
 * Changes the password of the signed-in user, who proves the current one (counted against the same wrong-password
 * limits as signing in: 429 too_many_attempts, 400 wrong_password); every other session of theirs ends, with their
 * administrator sign-ins and SSO tokens.
 */
export async function changePassword(
  services: Services,
  user: User,
  currentSessionId: string | undefined,
  passwords: { current: string; next: string },
  client: Client,
): Promise<{ revoked_sessions: number }> {
  const { db } = services;
  const subjects = loginSubjects(user.email, client.ip);
  const { retryAfter } = await countLoginAttempt(db, subjects, loginLimits(services.config));
  if (retryAfter) {
    throw problem('too_many_attempts', `Too many wrong passwords; try again in ${Math.ceil(retryAfter / 60)} min.`, {
      headers: { 'Retry-After': String(retryAfter) },
    });
  }
  const login = await findLogin(db, user.email);
  if (!login || !(await verifyPassword(login.password_hash, passwords.current))) {
    throw problem('wrong_password', 'The current password is wrong.');
  }
  await loginSucceeded(db, subjects);
  await setPassword(db, user.id, passwords.next);
  await spendPasswordLinks(db, user.id);
  const revoked = await endAccess(db, user.id, currentSessionId);
  await notifyPasswordChanged(services, user.id);
  return { revoked_sessions: revoked };
}

async function notifyPasswordChanged(services: Services, userId: string): Promise<void> {
  const owner = await findUserById(services.db, userId);
  if (!owner) return;
  const mail = passwordChangedMail(owner.locale, owner.name, links(services));
  await services.mailer.send({ key: `password-changed/${randomUUID()}`, to: owner.email, ...mail });
}
