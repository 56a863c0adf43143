// The account's own JSON operations: sign-up with a confirmation mail, forgotten and changed passwords, the profile
// and the sessions. Thin shells over self-service.ts, operations.ts and sessions.ts, which the pages (pages.ts) call too.
import { bearerOrPageSession } from '../web/session.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { canonicalTimeZone, preferredLang } from '../web/i18n.ts';
import { problem } from '../http/problem.ts';
import { EmailSchema, NAME_MAX, updateProfile, type User } from './users.ts';
import { PasswordSchema, profile } from './operations.ts';
import { changePassword, confirmSignUp, forgotPassword, resetPassword, signUp, type Client } from './self-service.ts';
import { endAccess, requireCabinetUser, revokeSessionOfUser, sessionsOfUser } from './sessions.ts';
import { mfaRoutes } from '../mfa/routes.ts';

const Session = z.object({ token: z.string().describe('The cabinet token (ct_…)'), expires_at: z.iso.datetime() });
const Locale = z.enum(['ru', 'en']).describe('The language of mail and pages');
const Name = z.string().trim().max(NAME_MAX).describe('How we address the person; also the name SSO sites receive');
const Token = z.string().min(1).max(200).describe('The token from the link in the mail');
const Accepted = z.object({ ok: z.literal(true) });
const Revoked = z.object({ revoked_sessions: z.number().int().describe('How many sessions ended') });
const Profile = z.object({
  svc_id: z.uuid(),
  email: z.string(),
  name: z.string(),
  locale: Locale,
  time_zone: z
    .string()
    .nullable()
    .describe("The IANA time zone the person's pages and mails show times in; null: Moscow time"),
  org: z.object({ id: z.uuid(), name: z.string() }).describe('The personal organization'),
});
const SessionItem = z.object({
  id: z.uuid(),
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime().describe('Updated at most every few minutes'),
  user_agent: z.string().describe("The browser or client that started it, as it named itself; '' when unknown"),
  current: z.boolean().describe('The session of this request'),
});

const clientOf = (ctx: Context): Client => ({ ip: ctx.ip, userAgent: ctx.get('User-Agent') });
const userOf = (ctx: Context) => ctx.state.user as User;
const sessionOf = (ctx: Context) => ctx.state.sessionId as string | undefined;

export function accountRoutes(api: Api, services: Services): void {
  const { db } = services;
  const open = { tags: ['Account'] };
  const signedIn = { tags: ['Account'], security: ['cabinetToken'], use: [requireCabinetUser(db)] };

  api.route({
    ...open,
    method: 'post',
    path: '/cabinet/signup',
    operationId: 'signUp',
    summary: 'Create an account: a confirmation link goes by mail',
    description:
      'Always 202, whether the address has an account or not: a new address gets a confirmation link (24 hours); an ' +
      'address that can already sign in gets a mail saying so, with sign-in and reset links. At most 3 mails an hour ' +
      'per address (more are accepted and not sent). `locale` is the language of the mail and of the account; without ' +
      'it, Accept-Language decides, then Russian.',
    body: z.object({ email: EmailSchema, password: PasswordSchema, name: Name.optional(), locale: Locale.optional() }),
    responses: { 202: { description: 'Accepted; look in the mailbox', schema: Accepted } },
    handler: async (ctx, { body }) => {
      const acceptLanguage = ctx.get('Accept-Language');
      const locale = body.locale ?? (acceptLanguage ? preferredLang(acceptLanguage) : 'ru');
      await signUp(
        services,
        { email: body.email, password: body.password, name: body.name ?? '', locale },
        clientOf(ctx),
      );
      ctx.status = 202;
      ctx.body = { ok: true };
    },
  });

  api.route({
    ...open,
    method: 'post',
    path: '/cabinet/signup/confirm',
    operationId: 'confirmSignUp',
    summary: 'Confirm a sign-up from its mail and sign in',
    description:
      'Makes the account as a deal would (svc ID, personal organization) with the password, name and language of the ' +
      'sign-up; an invited account without a password gets them. 400 invalid_token for a used, expired or forged link.',
    body: z.object({ token: Token }),
    responses: { 200: { description: 'The cabinet token', schema: Session } },
    handler: async (ctx, { body }) => {
      ctx.body = (await confirmSignUp(services, body.token, clientOf(ctx).userAgent)).session;
    },
  });

  api.route({
    ...open,
    method: 'post',
    path: '/cabinet/password/forgot',
    operationId: 'forgotPassword',
    summary: 'Mail a link to set a new password',
    description:
      'Always 202. An address with an account gets a single-use link that lasts an hour, at most 3 an hour per address; ' +
      'other requests are accepted and send nothing.',
    body: z.object({ email: EmailSchema }),
    responses: { 202: { description: 'Accepted; look in the mailbox', schema: Accepted } },
    handler: async (ctx, { body }) => {
      await forgotPassword(
        services,
        body.email,
        clientOf(ctx),
        ctx.acceptsLanguages('ru', 'en') === 'en' ? 'en' : 'ru',
      );
      ctx.status = 202;
      ctx.body = { ok: true };
    },
  });

  api.route({
    ...open,
    method: 'post',
    path: '/cabinet/password/reset',
    operationId: 'resetPassword',
    summary: 'Set a new password from a reset link and sign in',
    description:
      'Ends every session of the account, then signs in afresh. 400 invalid_token for a used, expired or forged link.',
    body: z.object({ token: Token, password: PasswordSchema }),
    responses: { 200: { description: 'A new cabinet token', schema: Session } },
    handler: async (ctx, { body }) => {
      ctx.body = await resetPassword(services, body.token, body.password, clientOf(ctx).userAgent);
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/password',
    operationId: 'changePassword',
    summary: 'Change my password',
    description:
      'Ends every other session of mine; this one stays. A wrong current password is 400 wrong_password and counts ' +
      'against the sign-in limits (429 too_many_attempts with Retry-After).',
    body: z.object({ current_password: z.string().min(1).max(200), new_password: PasswordSchema }),
    responses: { 200: { description: 'Changed', schema: Revoked } },
    handler: async (ctx, { body }) => {
      const passwords = { current: body.current_password, next: body.new_password };
      ctx.body = await changePassword(services, userOf(ctx), sessionOf(ctx), passwords, clientOf(ctx));
    },
  });

  api.route({
    ...signedIn,
    // Also the browser session (a read, so no CSRF token is needed).
    use: [bearerOrPageSession(services)],
    method: 'get',
    path: '/cabinet/profile',
    operationId: 'getProfile',
    summary: 'My profile',
    responses: { 200: { description: 'The profile', schema: Profile } },
    handler: async (ctx) => {
      ctx.body = await profile(services, userOf(ctx));
    },
  });

  api.route({
    ...signedIn,
    method: 'patch',
    path: '/cabinet/profile',
    operationId: 'updateProfile',
    summary: 'Change my name or language',
    description:
      'A personal organization still named after the old name follows the new one. `locale` is the person’s own ' +
      'choice: a marketplace’s buyer_locale or seller_locale no longer changes it. `time_zone`: an IANA name such as ' +
      '`Europe/Berlin` for the times shown in pages and mails (null: Moscow time again).',
    body: z.object({
      name: Name.optional(),
      locale: Locale.optional(),
      time_zone: z.string().max(64).nullable().optional().describe('An IANA time zone name, or null for Moscow time'),
    }),
    responses: { 200: { description: 'The profile', schema: Profile } },
    handler: async (ctx, { body }) => {
      const { time_zone: given, ...rest } = body;
      const timeZone = given === undefined || given === null ? given : canonicalTimeZone(given);
      if (timeZone === undefined && typeof given === 'string') {
        const message = 'must be an IANA time zone name, such as Europe/Moscow';
        throw problem('validation_failed', `The request body is invalid: time_zone: ${message}`, {
          errors: [{ path: 'time_zone', message }],
        });
      }
      const changes = given === undefined ? rest : { ...rest, time_zone: timeZone ?? null };
      ctx.body = await profile(services, await updateProfile(db, userOf(ctx), changes));
    },
  });

  api.route({
    ...signedIn,
    // Also the browser session (a read, so no CSRF token is needed).
    use: [bearerOrPageSession(services)],
    method: 'get',
    path: '/cabinet/sessions',
    operationId: 'listSessions',
    summary: 'My signed-in sessions, the most recently used first',
    responses: { 200: { description: 'The sessions', schema: z.object({ items: z.array(SessionItem) }) } },
    handler: async (ctx) => {
      ctx.body = { items: await sessionsOfUser(db, userOf(ctx).id, sessionOf(ctx)) };
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/sessions/{id}/revoke',
    operationId: 'revokeSession',
    summary: 'Sign out one of my sessions',
    description: 'Its token stops working at once. 404 for a session that is not mine.',
    params: z.object({ id: z.string().max(100) }),
    responses: { 200: { description: 'Signed out', schema: Revoked } },
    handler: async (ctx, { params }) => {
      await revokeSessionOfUser(db, userOf(ctx).id, params.id);
      ctx.body = { revoked_sessions: 1 };
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/logout-everywhere',
    operationId: 'logoutEverywhere',
    summary: 'Sign out every session of mine, this one included',
    responses: { 200: { description: 'Signed out everywhere', schema: Revoked } },
    handler: async (ctx) => {
      ctx.body = { revoked_sessions: await endAccess(db, userOf(ctx).id) };
    },
  });

  mfaRoutes(api, services);
}
