// The second factors' JSON operations (CONTRACT.md, "Identity (additions)"): TOTP setup, passkeys, recovery codes, a
// step-up, and signing in with a passkey. With `Authorization: Bearer ct_…`, or from the cabinet's pages with the
// session cookie and its CSRF token in `X-CSRF-Token` (passkeys.js), since WebAuthn runs in the browser.
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import type { User } from '../accounts/users.ts';
import { notFound, problem } from '../http/problem.ts';
import { requireCabinetUser } from '../accounts/sessions.ts';
import { limitedByAccount } from '../accounts/operations.ts';
import { pageUser, sameToken, validPreSessionCsrf } from '../web/session.ts';
import { safeNext } from '../web/page.ts';
import {
  AMR,
  checkTypedCode,
  confirmTotp,
  factorsOf,
  hasSecondFactor,
  markSecondFactor,
  passkeysOf,
  removePasskey,
  removeTotp,
  requireRecent,
  startTotp,
  type SignInFacts,
} from './factors.ts';
import { newRecoveryCodes } from './recovery-codes.ts';
import {
  PASSKEY_NAME_MAX,
  registerPasskey,
  registrationOptions,
  signInOptions,
  verifyPasskeySignIn,
} from './passkeys.ts';
import { finishPendingSignIn, pendingSignIn, startSession } from './pending.ts';
import { SECURITY_PATH } from './page-views.ts';
import { moneyFactorRoutes } from './escrow-policy.ts';

const RecoveryCodes = z.array(z.string()).describe('Shown only now; each signs in once in place of the factor');
const Summary = z.object({
  totp: z.boolean().describe('An authenticator app is set up and confirmed'),
  passkeys: z.number().int().describe('How many passkeys the account has'),
  recovery_codes_left: z.number().int().describe('Unused recovery codes'),
});
const PasskeyItem = z.object({
  id: z.uuid(),
  name: z.string(),
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime().nullable(),
});
const Code = z.string().min(1).max(40).describe('The app’s 6 digits, or a recovery code');
// WebAuthn's own JSON (base64url fields), checked by @simplewebauthn/server; only its shape is checked here.
const WebAuthnResponse = z
  .looseObject({ id: z.string().max(1400), rawId: z.string().max(1400), type: z.literal('public-key') })
  .describe('The browser’s PublicKeyCredential as JSON, binary fields in base64url');
const Location = z.object({ location: z.string().describe('Where the browser goes next (a path on this site)') });

const userOf = (ctx: Context) => ctx.state.user as User;
const factsOf = (ctx: Context) => ctx.state.signIn as SignInFacts | undefined;

/**
 * The bearer cabinet token as everywhere; without Authorization, the page session cookie with its CSRF token in
 * X-CSRF-Token (a form token in a header: another site can neither read it nor send the header).
 */
function bearerOrPageWithCsrf(services: Services): Middleware {
  const bearer = requireCabinetUser(services.db);
  return async (ctx, next) => {
    if (ctx.get('Authorization') !== '') return bearer(ctx, next);
    const signed = await pageUser(ctx, services);
    if (!signed) return bearer(ctx, next);
    if (!sameToken(signed.csrf, ctx.get('X-CSRF-Token') || undefined))
      throw problem('csrf_failed', 'Send the page’s form token in X-CSRF-Token.');
    ctx.state.user = signed.user;
    ctx.state.sessionId = signed.sessionId;
    ctx.state.signIn = { amr: signed.amr, signedInAt: signed.signedInAt, secondFactorAt: signed.secondFactorAt };
    await next();
  };
}

export function mfaRoutes(api: Api, services: Services): void {
  const { db } = services;
  moneyFactorRoutes(api, services);
  const signedIn = {
    tags: ['Second factors'],
    security: ['cabinetToken'],
    use: [bearerOrPageWithCsrf(services)],
  };
  /** Adding a factor to an account that has one needs a recent sign-in: a stolen session cannot add its own. */
  const recentWhenProtected = async (ctx: Context) => {
    if (await hasSecondFactor(db, userOf(ctx).id)) requireRecent(factsOf(ctx));
  };

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/mfa',
    operationId: 'mfaSummary',
    summary: 'My second factors: whether the app is set up, how many passkeys, how many recovery codes are left',
    responses: { 200: { description: 'The summary', schema: Summary } },
    handler: async (ctx) => {
      ctx.body = await factorsOf(db, userOf(ctx).id);
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/mfa/totp',
    operationId: 'mfaTotpStart',
    summary: 'Start setting up an authenticator app: its secret, once',
    description:
      'The secret replaces one never confirmed; sign-in asks for codes only after POST /cabinet/mfa/totp/confirm. ' +
      '409 totp_already_enabled while a confirmed app exists; 403 recent_sign_in_required when the account has a ' +
      'second factor and this session signed in more than 15 minutes ago.',
    responses: {
      200: {
        description: 'The secret (base32) and the otpauth:// URI for a QR code',
        schema: z.object({ secret: z.string(), otpauth_uri: z.string() }),
      },
    },
    handler: async (ctx) => {
      await recentWhenProtected(ctx);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await startTotp(services, userOf(ctx));
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/mfa/totp/confirm',
    operationId: 'mfaTotpConfirm',
    summary: 'Turn the authenticator app on with its first code',
    description:
      'The first second factor of the account answers ten recovery codes, shown only now (later factors answer ' +
      'null). 400 wrong_second_factor for a code that is not the current one.',
    body: z.object({ code: z.string().min(1).max(20) }),
    responses: {
      200: { description: 'On', schema: z.object({ recovery_codes: RecoveryCodes.nullable() }) },
    },
    handler: async (ctx, { body }) => {
      const confirmed = await confirmTotp(services, userOf(ctx).id, body.code);
      // The code just typed is a second factor given in this session.
      await markSecondFactor(db, ctx.state.sessionId as string, AMR.passwordAndTotp);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = confirmed;
    },
  });

  api.route({
    ...signedIn,
    method: 'delete',
    path: '/cabinet/mfa/totp',
    operationId: 'mfaTotpRemove',
    summary: 'Remove the authenticator app',
    description: 'Needs a recent sign-in (403 recent_sign_in_required). 404 when none is set up.',
    responses: { 200: { description: 'Removed', schema: Summary } },
    handler: async (ctx) => {
      requireRecent(factsOf(ctx));
      if (!(await removeTotp(db, userOf(ctx).id))) throw notFound('No authenticator app is set up.');
      ctx.body = await factorsOf(db, userOf(ctx).id);
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/mfa/passkeys/options',
    operationId: 'mfaPasskeyOptions',
    summary: 'Options for navigator.credentials.create() to register a passkey',
    description:
      'WebAuthn creation options (JSON, binary fields in base64url): a discoverable credential with user verification, ' +
      'for this service’s host. The challenge is kept for 5 minutes and is good for one registration.',
    responses: { 200: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: z.looseObject({}) } },
    handler: async (ctx) => {
      await recentWhenProtected(ctx);
      ctx.body = await registrationOptions(services, userOf(ctx));
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/mfa/passkeys',
    operationId: 'mfaPasskeyRegister',
    summary: 'Register a passkey from the browser’s answer to the options',
    description:
      '400 invalid_passkey_response for an answer to no live challenge (unknown, expired or already used) or one that ' +
      'does not verify. The first second factor of the account answers ten recovery codes, shown only now.',
    body: z.object({ name: z.string().max(PASSKEY_NAME_MAX).default(''), response: WebAuthnResponse }),
    responses: {
      201: {
        description: 'Registered',
        schema: PasskeyItem.omit({ last_used_at: true }).extend({
          recovery_codes: RecoveryCodes.nullable(),
          location: z.string().describe('The security page, for the browser'),
        }),
      },
    },
    handler: async (ctx, { body }) => {
      const user = userOf(ctx);
      const first = !(await hasSecondFactor(db, user.id));
      const passkey = await registerPasskey(services, user, body.response as never, body.name);
      await markSecondFactor(db, ctx.state.sessionId as string, AMR.passkey);
      ctx.status = 201;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = {
        ...passkey,
        recovery_codes: first ? await newRecoveryCodes(services, user.id) : null,
        location: `${SECURITY_PATH}?done=passkey_added`,
      };
    },
  });

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/mfa/passkeys',
    operationId: 'mfaPasskeys',
    summary: 'My passkeys with their names',
    description: 'Needs a recent sign-in (403 recent_sign_in_required).',
    responses: { 200: { description: 'The passkeys', schema: z.object({ items: z.array(PasskeyItem) }) } },
    handler: async (ctx) => {
      requireRecent(factsOf(ctx));
      ctx.body = { items: await passkeysOf(db, userOf(ctx).id) };
    },
  });

  api.route({
    ...signedIn,
    // POST …/remove, as sessions are revoked: a DELETE on /cabinet/mfa/passkeys/{id} would also match
    // /cabinet/mfa/passkeys/options and …/sign-in, and their Allow would name a method they do not have.
    method: 'post',
    path: '/cabinet/mfa/passkeys/{id}/remove',
    operationId: 'mfaPasskeyRemove',
    summary: 'Remove one of my passkeys',
    description: 'Needs a recent sign-in (403 recent_sign_in_required). 404 for a passkey that is not mine.',
    params: z.object({ id: z.string().max(100) }),
    responses: { 200: { description: 'Removed', schema: Summary } },
    handler: async (ctx, { params }) => {
      requireRecent(factsOf(ctx));
      if (!(await removePasskey(db, userOf(ctx).id, params.id))) throw notFound('No such passkey.');
      ctx.body = await factorsOf(db, userOf(ctx).id);
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/mfa/recovery-codes',
    operationId: 'mfaRecoveryCodes',
    summary: 'Make new recovery codes; the old ones stop working',
    description:
      'Needs a recent sign-in (403 recent_sign_in_required) and a second factor (404 without one: the codes stand in ' +
      'for a factor).',
    responses: { 200: { description: 'The new codes', schema: z.object({ recovery_codes: RecoveryCodes }) } },
    handler: async (ctx) => {
      requireRecent(factsOf(ctx));
      if (!(await hasSecondFactor(db, userOf(ctx).id))) throw notFound('The account has no second factor.');
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { recovery_codes: await newRecoveryCodes(services, userOf(ctx).id) };
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/mfa/verify',
    operationId: 'mfaVerify',
    summary: 'Give the second factor in this session (a step-up before money moves or a removal)',
    description:
      '`code`: the app’s 6 digits or a recovery code. 400 wrong_second_factor; wrong codes count against the ' +
      'sign-in limits (429 too_many_attempts with Retry-After).',
    body: z.object({ code: Code }),
    responses: { 200: { description: 'Given', schema: z.object({ amr: z.array(z.string()) }) } },
    handler: async (ctx, { body }) => {
      const user = userOf(ctx);
      const checked = await limitedByAccount(services, user.email, ctx.ip, async () => {
        const found = await checkTypedCode(services, user.id, body.code);
        if (!found) throw problem('wrong_second_factor', 'The code is wrong or was used already.', { status: 400 });
        return found;
      });
      await markSecondFactor(db, ctx.state.sessionId as string, checked.amr);
      ctx.body = { amr: [...new Set([...(factsOf(ctx)?.amr ?? []), ...checked.amr])].sort() };
    },
  });

  // Signing in with a passkey: from the sign-in page (the passkey alone names the account), as the second step after a
  // password (the pending sign-in's account), or as a step-up in a signed-in session. The page's form token comes in
  // X-CSRF-Token: the pre-session one before sign-in, the session's after.
  async function passkeyParty(ctx: Context): Promise<{ kind: 'session' | 'pending' | 'alone'; userId: string | null }> {
    const csrf = ctx.get('X-CSRF-Token') || undefined;
    const signed = await pageUser(ctx, services);
    if (signed) {
      if (!sameToken(signed.csrf, csrf)) throw problem('csrf_failed', 'Send the page’s form token in X-CSRF-Token.');
      ctx.state.sessionId = signed.sessionId;
      return { kind: 'session', userId: signed.user.id };
    }
    if (!validPreSessionCsrf(ctx, services, csrf))
      throw problem('csrf_failed', 'Send the page’s form token in X-CSRF-Token.');
    const pending = await pendingSignIn(ctx, services);
    return pending ? { kind: 'pending', userId: pending.userId } : { kind: 'alone', userId: null };
  }

  api.route({
    tags: ['Second factors'],
    method: 'post',
    path: '/cabinet/mfa/passkeys/sign-in/options',
    operationId: 'mfaPasskeySignInOptions',
    summary: 'Options for navigator.credentials.get() to sign in with a passkey (the cabinet’s pages)',
    description:
      'For the browser: the cabinet page’s form token in X-CSRF-Token. Signed in: a step-up with one of my passkeys; ' +
      'after a password: the second step; otherwise any passkey of this service, which names its account.',
    responses: { 200: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: z.looseObject({}) } },
    handler: async (ctx) => {
      const party = await passkeyParty(ctx);
      ctx.body = await signInOptions(services, party.userId);
    },
  });

  api.route({
    tags: ['Second factors'],
    method: 'post',
    path: '/cabinet/mfa/passkeys/sign-in',
    operationId: 'mfaPasskeySignIn',
    summary: 'Sign in (or give the second factor) with the browser’s answer to the options',
    description:
      'Starts the cabinet session cookie (or marks the signed-in one) and answers where to go: `next` when it is a ' +
      'path on this site, else the cabinet. 400 invalid_passkey_response for an answer to no live challenge ' +
      '(replayed, expired) or one that does not verify.',
    body: z.object({ next: z.string().max(2000).optional(), response: WebAuthnResponse }),
    responses: { 200: { description: 'Signed in', schema: Location } },
    handler: async (ctx, { body }) => {
      const party = await passkeyParty(ctx);
      const next = safeNext(body.next, services.config.BASE_URL);
      const verified = await verifyPasskeySignIn(services, body.response as never, party.userId);
      if (party.kind === 'session') {
        // A step-up with a passkey of the account: it need not have verified the person, so no `user` here.
        await markSecondFactor(db, ctx.state.sessionId as string, AMR.passwordAndPasskey);
      } else if (party.kind === 'pending') {
        if (!(await finishPendingSignIn(ctx, services, verified.userId, AMR.passwordAndPasskey)))
          throw problem('invalid_passkey_response', 'The sign-in expired: enter the e-mail and password again.');
      } else {
        await startSession(ctx, services, verified.userId, AMR.passkey, ctx.get('User-Agent'));
      }
      ctx.body = { location: next };
    },
  });
}
