// The cabinet's account operations (sign-in, invitations, profile; sign-up and passwords in self-service.ts), shared
// by the JSON routes and the web pages so both follow the same rules. What a user sees and does in a deal is the deal service's
// (src/deals/service.ts), with its one access policy.
import { z } from 'zod';
import type { Services } from '../services.ts';
import { problem, unauthorized } from '../http/problem.ts';
import { countLoginAttempt, loginLimits, loginSubjects, loginSucceeded } from './login-limits.ts';
import { EmailSchema, findLogin, personalOrganization, setPassword, type User } from './users.ts';
import { MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';
import { consumeToken, spendPasswordLinks } from './tokens.ts';
import { createSession } from './sessions.ts';
import { AMR, checkTypedCode, hasSecondFactor } from '../mfa/factors.ts';

export const PasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(200);

export type Session = { token: string; expires_at: string };

/** The account of this e-mail and password, or 401. */
async function passwordAccount(services: Services, email: string, password: string): Promise<string> {
  // Forms send what was typed; a stray space around the address is not a wrong address.
  const parsed = EmailSchema.safeParse(email.trim());
  const login = parsed.success ? await findLogin(services.db, parsed.data) : undefined;
  const valid = await verifyPassword(login?.password_hash ?? null, password);
  if (!login || !valid) throw unauthorized('The e-mail or the password is wrong.', 'Bearer realm="cabinet"');
  return login.id;
}

/**
 * A new cabinet session for the e-mail and password, or 401. An account with a second factor needs `code` too (the
 * app's six digits or a recovery code): 401 second_factor_required without it, wrong_second_factor when wrong.
 */
export async function signIn(
  services: Services,
  email: string,
  password: string,
  userAgent = '',
  code?: string,
): Promise<Session> {
  const userId = await passwordAccount(services, email, password);
  const ttl = services.config.CABINET_TOKEN_TTL_SECONDS;
  if (!(await hasSecondFactor(services.db, userId)))
    return createSession(services.db, userId, ttl, userAgent, AMR.password);
  if (code === undefined)
    throw problem('second_factor_required', 'This account has a second factor: send `code` with the password.', {
      headers: { 'WWW-Authenticate': 'Bearer realm="cabinet"' },
    });
  const checked = await checkTypedCode(services, userId, code);
  if (!checked)
    throw problem('wrong_second_factor', 'The code is wrong or was used already.', {
      headers: { 'WWW-Authenticate': 'Bearer realm="cabinet"' },
    });
  return createSession(services.db, userId, ttl, userAgent, checked.amr);
}

/**
 * The sign-in pages' first step: a session at once for an account without a second factor; otherwise only the account,
 * for the second page (src/mfa/pages.ts). 401 for a wrong e-mail or password.
 */
export async function passwordStep(
  services: Services,
  email: string,
  password: string,
  userAgent = '',
): Promise<{ session: Session } | { secondFactor: { userId: string } }> {
  const userId = await passwordAccount(services, email, password);
  if (await hasSecondFactor(services.db, userId)) return { secondFactor: { userId } };
  const ttl = services.config.CABINET_TOKEN_TTL_SECONDS;
  return { session: await createSession(services.db, userId, ttl, userAgent, AMR.password) };
}

/**
 * `attempt` behind the wrong-password limits (per account and address, per address, and the per-account ceiling; the
 * same windows as the SSO login form): 429 too_many_attempts with Retry-After once one is spent; the password (and
 * the second factor) is not even checked then. Wrong second factors count as wrong passwords do.
 */
export async function limitedByAccount<T>(
  services: Services,
  email: string,
  ip: string,
  attempt: () => Promise<T>,
): Promise<T> {
  const { db } = services;
  const subjects = loginSubjects(email, ip);
  const { retryAfter } = await countLoginAttempt(db, subjects, loginLimits(services.config));
  if (retryAfter) {
    throw problem('too_many_attempts', `Too many wrong attempts; try again in ${Math.ceil(retryAfter / 60)} min.`, {
      headers: { 'Retry-After': String(retryAfter) },
    });
  }
  const result = await attempt();
  await loginSucceeded(db, subjects);
  return result;
}

/** signIn behind the wrong-password limits (limitedByAccount). */
export function signInLimited(
  services: Services,
  email: string,
  password: string,
  ip: string,
  userAgent = '',
  code?: string,
): Promise<Session> {
  return limitedByAccount(services, email, ip, () => signIn(services, email, password, userAgent, code));
}

/** Sets the password of the invited user (the caller validated it) and signs them in; 400 invalid_invitation. */
export async function acceptInvitation(
  services: Services,
  token: string,
  password: string,
  userAgent = '',
): Promise<Session> {
  const userId = (await consumeToken(services.db, services.masterKey, 'invitation', token))?.user_id;
  if (!userId)
    throw problem(
      'invalid_invitation',
      'The invitation link is not valid, was already used or has expired. Ask for a new one.',
    );
  await setPassword(services.db, userId, password);
  await spendPasswordLinks(services.db, userId);
  return createSession(services.db, userId, services.config.CABINET_TOKEN_TTL_SECONDS, userAgent);
}

export async function profile(services: Services, user: User) {
  const org = (await personalOrganization(services.db, user.id))!;
  return {
    svc_id: user.id,
    email: user.email,
    name: user.name,
    locale: user.locale,
    time_zone: user.time_zone,
    org: { id: org.id, name: org.name },
  };
}
