// The account's web pages: sign-up and its confirmation, forgotten password and reset, the profile, the password and
// the sessions. Server-rendered over the same operations as the JSON routes (self-service.ts, sessions.ts), working
// with JavaScript off: forms post urlencoded with a CSRF token and answer 303, and every outcome is told in words.
// Links from mails open a page with a button; only the button's POST spends the token, so mail scanners that fetch
// links cannot.
import type { Context } from 'koa';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { Problem } from '../http/problem.ts';
import { canonicalTimeZone, isLang, type Translate } from '../web/i18n.ts';
import { pagePlace, pager } from '../admin/console-kit.ts';
import { isUuid } from '../uuid.ts';
import {
  csrfFailed,
  page,
  readForm,
  redirect,
  safeNext,
  send,
  signedInOrRedirect,
  type Page,
  type SignedIn,
} from '../web/page.ts';
import {
  LANG_COOKIE,
  SESSION_COOKIE,
  endPageSession,
  pageUser,
  preSessionCsrf,
  readCookie,
  sameToken,
  setCookie,
  startPageSession,
  validPreSessionCsrf,
} from '../web/session.ts';
import { accountTranslator, type AccountMessage } from './i18n.ts';
import {
  confirmSignUpBody,
  everywhereConfirmBody,
  forgotBody,
  linkInvalidBody,
  profileBody,
  resetBody,
  securityBody,
  signUpBody,
  type AccountView,
} from './page-views.ts';
import { MIN_PASSWORD_LENGTH } from './passwords.ts';
import { PasswordSchema, profile } from './operations.ts';
import {
  changePassword,
  confirmSignUp,
  forgotPassword,
  resetPasswordAndReturn,
  signUp,
  type Client,
} from './self-service.ts';
import { endAccess, revokeSessionOfUser, sessionForToken, sessionsOfUser } from './sessions.ts';
import { tokenUsable } from './tokens.ts';
import { EmailSchema, NAME_MAX, updateProfile } from './users.ts';
import { factorNotice, mfaPages, securityFactors } from '../mfa/pages.ts';
import { secondFactorHref, startPendingSignIn } from '../mfa/pending.ts';

const LANG_COOKIE_SECONDS = 365 * 24 * 3600;
/** Sessions on a page of 'Password and sessions'. */
const SESSIONS_PAGE = 20;
/** One-shot notices after a redirect, `?done=…`, each with its words. */
const PROFILE_DONE = { saved: 'profileSaved', signed_up: 'signedUp' } as const satisfies Record<string, AccountMessage>;
const SECURITY_DONE = {
  password_changed: 'passwordChanged',
  password_reset: 'passwordReset',
  session_revoked: 'sessionRevoked',
} as const satisfies Record<string, AccountMessage>;

const view = (p: Page): AccountView => ({ lang: p.lang, t: p.t, timeZone: p.timeZone, a: accountTranslator(p.lang) });
const clientOf = (ctx: Context): Client => ({ ip: ctx.ip, userAgent: ctx.get('User-Agent') });
const queryText = (ctx: Context, name: string) => (typeof ctx.query[name] === 'string' ? ctx.query[name] : '');
/** `?next=…` for a page that carries where the person was going, '' for the cabinet's home (the default). */
const nextQuery = (next: string) => (next === '/cabinet' ? '' : `?next=${encodeURIComponent(next)}`);

function doneWords<K extends string>(p: Page, table: Record<K, AccountMessage>): string | undefined {
  const done = queryText(p.ctx, 'done');
  return Object.hasOwn(table, done) ? view(p).a(table[done as K]) : undefined;
}

/** What is wrong with a new password typed twice, in words; undefined when it is fine. */
export function passwordProblem(t: Translate, password: string, confirmation: string): string | undefined {
  if (password !== confirmation) return t('passwordsDiffer');
  const parsed = PasswordSchema.safeParse(password);
  if (parsed.success) return undefined;
  return parsed.error.issues[0]?.code === 'too_big'
    ? t('passwordTooLong', { max: 200 })
    : t('passwordTooShort', { min: MIN_PASSWORD_LENGTH });
}

export function accountPages(api: Api, services: Services): void {
  const router = api.router;
  const base = () => services.config.BASE_URL; // read per request: tests and proxies set it after start

  async function preSessionForm(p: Page): Promise<URLSearchParams> {
    const form = await readForm(p.ctx);
    if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined)) throw csrfFailed();
    return form;
  }

  async function signedInForm(p: Page, next: string): Promise<{ signed: SignedIn; form: URLSearchParams } | undefined> {
    const form = await readForm(p.ctx);
    const signed = await signedInOrRedirect(p, services, next);
    if (!signed) return undefined;
    if (!sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
    return { signed, form };
  }

  /** The public id of this browser's session, to mark it and keep it. */
  async function currentSessionId(ctx: Context): Promise<string | undefined> {
    const token = readCookie(ctx, SESSION_COOKIE);
    return token ? (await sessionForToken(services.db, token))?.sessionId : undefined;
  }

  const linkInvalid = (p: Page) =>
    send(
      p,
      400,
      view(p).a('linkInvalidTitle'),
      linkInvalidBody(view(p)),
      p.ctx.method === 'GET' ? undefined : '/cabinet/sign-in',
    );

  // Sign-up

  router.get(
    '/cabinet/sign-up',
    page(services, async (p) => {
      const next = safeNext(p.ctx.query.next, base());
      if (await pageUser(p.ctx, services)) return redirect(p.ctx, next);
      const notice = queryText(p.ctx, 'done') === 'sent' ? view(p).a('signUpSent') : undefined;
      const body = signUpBody(view(p), { email: '', name: '', next, csrf: preSessionCsrf(p.ctx, services), notice });
      send(p, 200, view(p).a('signUpTitle'), body);
    }),
  );

  router.post(
    '/cabinet/sign-up',
    page(services, async (p) => {
      const form = await preSessionForm(p);
      const { a, t } = view(p);
      const next = safeNext(form.get('next'), base());
      const email = (form.get('email') ?? '').trim().slice(0, 320);
      const name = (form.get('name') ?? '').trim();
      const password = form.get('password') ?? '';
      const parsedEmail = EmailSchema.safeParse(email);
      const error = !parsedEmail.success
        ? a('invalidEmail')
        : name.length > NAME_MAX
          ? a('nameTooLong', { max: NAME_MAX })
          : passwordProblem(t, password, form.get('password_confirm') ?? '');
      if (error || !parsedEmail.success) {
        const body = signUpBody(view(p), { email, name, next, csrf: preSessionCsrf(p.ctx, services), error });
        return send(p, 400, a('signUpTitle'), body, `/cabinet/sign-up?next=${encodeURIComponent(next)}`);
      }
      await signUp(services, { email: parsedEmail.data, password, name, locale: p.lang, next }, clientOf(p.ctx));
      redirect(p.ctx, `/cabinet/sign-up?done=sent&next=${encodeURIComponent(next)}`);
    }),
  );

  router.get(
    '/cabinet/sign-up/confirm',
    page(services, async (p) => {
      const token = queryText(p.ctx, 'token');
      if (!(await tokenUsable(services.db, services.masterKey, 'signup', token))) return linkInvalid(p);
      send(
        p,
        200,
        view(p).a('confirmTitle'),
        confirmSignUpBody(view(p), { token, csrf: preSessionCsrf(p.ctx, services) }),
      );
    }),
  );

  router.post(
    '/cabinet/sign-up/confirm',
    page(services, async (p) => {
      const form = await preSessionForm(p);
      let confirmed: Awaited<ReturnType<typeof confirmSignUp>>;
      try {
        confirmed = await confirmSignUp(services, form.get('token') ?? '', clientOf(p.ctx).userAgent);
      } catch (error) {
        if (error instanceof Problem && error.code === 'invalid_token') return linkInvalid(p);
        throw error;
      }
      await startPageSession(p.ctx, services, confirmed.session);
      // Back where the sign-up started (an SSO sign-in, say); otherwise the new profile, with a welcome.
      redirect(
        p.ctx,
        confirmed.next && confirmed.next !== '/cabinet'
          ? safeNext(confirmed.next, base())
          : '/cabinet/view/profile?done=signed_up',
      );
    }),
  );

  // Forgotten password

  router.get(
    '/cabinet/forgot-password',
    page(services, async (p) => {
      // `next`: where the person was going (an SSO sign-in's authorize address); the reset leads back there.
      const next = safeNext(p.ctx.query.next, base());
      const notice = queryText(p.ctx, 'done') === 'sent' ? view(p).a('forgotSent') : undefined;
      send(
        p,
        200,
        view(p).a('forgotTitle'),
        forgotBody(view(p), { email: '', next, csrf: preSessionCsrf(p.ctx, services), notice }),
      );
    }),
  );

  router.post(
    '/cabinet/forgot-password',
    page(services, async (p) => {
      const form = await preSessionForm(p);
      const next = safeNext(form.get('next'), base());
      const email = (form.get('email') ?? '').trim().slice(0, 320);
      const parsed = EmailSchema.safeParse(email);
      if (!parsed.success) {
        const body = forgotBody(view(p), {
          email,
          next,
          csrf: preSessionCsrf(p.ctx, services),
          error: view(p).a('invalidEmail'),
        });
        return send(p, 400, view(p).a('forgotTitle'), body, `/cabinet/forgot-password${nextQuery(next)}`);
      }
      await forgotPassword(services, parsed.data, clientOf(p.ctx), p.lang, next === '/cabinet' ? undefined : next);
      redirect(
        p.ctx,
        `/cabinet/forgot-password?done=sent${next === '/cabinet' ? '' : `&next=${encodeURIComponent(next)}`}`,
      );
    }),
  );

  router.get(
    '/cabinet/reset-password',
    page(services, async (p) => {
      const token = queryText(p.ctx, 'token');
      if (!(await tokenUsable(services.db, services.masterKey, 'password_reset', token))) return linkInvalid(p);
      send(p, 200, view(p).a('resetTitle'), resetBody(view(p), { token, csrf: preSessionCsrf(p.ctx, services) }));
    }),
  );

  router.post(
    '/cabinet/reset-password',
    page(services, async (p) => {
      const form = await preSessionForm(p);
      const token = form.get('token') ?? '';
      if (!(await tokenUsable(services.db, services.masterKey, 'password_reset', token))) return linkInvalid(p);
      const password = form.get('password') ?? '';
      const problem = passwordProblem(p.t, password, form.get('password_confirm') ?? '');
      if (problem) {
        const body = resetBody(view(p), { token, csrf: preSessionCsrf(p.ctx, services), error: problem });
        return send(
          p,
          400,
          view(p).a('resetTitle'),
          body,
          `/cabinet/reset-password?token=${encodeURIComponent(token)}`,
        );
      }
      let reset;
      try {
        reset = await resetPasswordAndReturn(services, token, password, clientOf(p.ctx).userAgent);
      } catch (error) {
        if (error instanceof Problem && error.code === 'invalid_token') return linkInvalid(p); // used meanwhile
        throw error;
      }
      // Back where the reset started (an SSO sign-in goes on to its site); otherwise the security page says it is done.
      const onward =
        reset.next && reset.next !== '/cabinet'
          ? safeNext(reset.next, base())
          : '/cabinet/view/security?done=password_reset';
      // The link came from the mailbox, one factor: an account with a second one gives it on the second page first.
      if (reset.secondFactor) {
        await startPendingSignIn(p.ctx, services, reset.secondFactor.userId, clientOf(p.ctx).userAgent);
        return redirect(p.ctx, secondFactorHref(onward));
      }
      await startPageSession(p.ctx, services, reset.session!);
      redirect(p.ctx, onward);
    }),
  );

  // Profile

  async function profilePage(
    p: Page,
    signed: SignedIn,
    status: number,
    words: { error?: string; notice?: string; name?: string },
  ) {
    const current = await profile(services, signed.user);
    const body = profileBody(view(p), {
      svcId: current.svc_id,
      email: current.email,
      name: words.name ?? current.name,
      locale: current.locale,
      timeZoneChoice: current.time_zone,
      org: current.org.name,
      csrf: signed.csrf,
      ...words,
    });
    send(p, status, view(p).a('profileTitle'), body, '/cabinet/view/profile', signed);
  }

  router.get(
    '/cabinet/view/profile',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (signed) await profilePage(p, signed, 200, { notice: doneWords(p, PROFILE_DONE) });
    }),
  );

  router.post(
    '/cabinet/view/profile',
    page(services, async (p) => {
      const posted = await signedInForm(p, '/cabinet/view/profile');
      if (!posted) return;
      const name = (posted.form.get('name') ?? '').trim();
      const locale = posted.form.get('locale');
      if (name.length > NAME_MAX)
        return profilePage(p, posted.signed, 400, { name, error: view(p).a('nameTooLong', { max: NAME_MAX }) });
      if (!isLang(locale)) return profilePage(p, posted.signed, 400, { name, error: p.t('badForm') });
      // '' is Moscow time (the default); a form without the field (an older page) leaves the zone as it is.
      const zoneGiven = posted.form.get('time_zone');
      const timeZone = zoneGiven ? canonicalTimeZone(zoneGiven) : null;
      if (zoneGiven && !timeZone) return profilePage(p, posted.signed, 400, { name, error: view(p).a('badTimeZone') });
      await updateProfile(services.db, posted.signed.user, {
        name,
        locale,
        ...(zoneGiven === null ? {} : { time_zone: timeZone }),
      });
      // The pages follow the chosen language from now on, as they would after the language switch.
      setCookie(p.ctx, services, LANG_COOKIE, locale, LANG_COOKIE_SECONDS);
      redirect(p.ctx, '/cabinet/view/profile?done=saved');
    }),
  );

  // Password and sessions

  async function securityPage(p: Page, signed: SignedIn, status: number, words: { error?: string; notice?: string }) {
    const sessions = await sessionsOfUser(services.db, signed.user.id, await currentSessionId(p.ctx));
    const factors = await securityFactors(p, services);
    // A person's live sessions are read whole (they expire); a page of them is cut after the cursor's session, and
    // the answer to a form (or a cursor of a session gone since) shows the first page.
    const place = p.ctx.method === 'GET' ? pagePlace(p.ctx.query, isUuid) : { trail: [] };
    const start = place.after ? sessions.findIndex((session) => session.id === place.after) + 1 : 0;
    const shown = sessions.slice(start, start + SESSIONS_PAGE);
    const pages = pager(p.lang, {
      path: '/cabinet/view/security',
      place,
      last: start + SESSIONS_PAGE < sessions.length ? shown.at(-1)!.id : undefined,
      hash: '#sessions',
    });
    send(
      p,
      status,
      view(p).a('securityTitle'),
      securityBody(view(p), { sessions: shown, pages, csrf: signed.csrf, factors, ...words }),
      '/cabinet/view/security',
      signed,
    );
  }

  router.get(
    '/cabinet/view/security',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (signed) await securityPage(p, signed, 200, { notice: doneWords(p, SECURITY_DONE) ?? factorNotice(p) });
    }),
  );

  router.post(
    '/cabinet/view/security/password',
    page(services, async (p) => {
      const posted = await signedInForm(p, '/cabinet/view/security');
      if (!posted) return;
      const { form, signed } = posted;
      const password = form.get('password') ?? '';
      const problem = passwordProblem(p.t, password, form.get('password_confirm') ?? '');
      if (problem) return securityPage(p, signed, 400, { error: problem });
      const current = (form.get('current_password') ?? '').slice(0, 200);
      try {
        await changePassword(
          services,
          signed.user,
          await currentSessionId(p.ctx),
          { current, next: password },
          clientOf(p.ctx),
        );
      } catch (error) {
        if (!(error instanceof Problem) || (error.code !== 'wrong_password' && error.code !== 'too_many_attempts'))
          throw error;
        const retryAfter = error.headers['Retry-After'];
        if (retryAfter) p.ctx.set('Retry-After', retryAfter);
        const words = retryAfter
          ? p.t('tooManyAttempts', { minutes: Math.ceil(Number(retryAfter) / 60) })
          : view(p).a('wrongCurrentPassword');
        return securityPage(p, signed, error.status, { error: words });
      }
      redirect(p.ctx, '/cabinet/view/security?done=password_changed');
    }),
  );

  router.post(
    '/cabinet/view/sessions/:id/revoke',
    page(services, async (p) => {
      const posted = await signedInForm(p, '/cabinet/view/security');
      if (!posted) return;
      const current = await currentSessionId(p.ctx);
      await revokeSessionOfUser(services.db, posted.signed.user.id, p.ctx.params.id);
      if (p.ctx.params.id === current) {
        await endPageSession(p.ctx, services);
        return redirect(p.ctx, '/cabinet/sign-in?signed_out=1');
      }
      redirect(p.ctx, '/cabinet/view/security?done=session_revoked');
    }),
  );

  router.get(
    '/cabinet/view/security/sign-out-everywhere',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (signed)
        send(p, 200, view(p).a('everywhereHeading'), everywhereConfirmBody(view(p), signed.csrf), undefined, signed);
    }),
  );

  router.post(
    '/cabinet/view/security/sign-out-everywhere',
    page(services, async (p) => {
      const posted = await signedInForm(p, '/cabinet/view/security');
      if (!posted) return;
      // Only the confirmation page's form signs out everywhere; a form from anywhere else gets that page first.
      if (posted.form.get('confirmed') !== 'yes') {
        return send(
          p,
          200,
          view(p).a('everywhereHeading'),
          everywhereConfirmBody(view(p), posted.signed.csrf),
          '/cabinet/view/security/sign-out-everywhere',
          posted.signed,
        );
      }
      await endAccess(services.db, posted.signed.user.id);
      await endPageSession(p.ctx, services);
      redirect(p.ctx, '/cabinet/sign-in?signed_out=everywhere');
    }),
  );

  mfaPages(api, services);
}
