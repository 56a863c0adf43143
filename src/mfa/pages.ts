// The second factors' web pages: the second sign-in page (after a right password, for the cabinet's sign-in and the
// SSO login form alike), the step-up (before money moves, or before a removal when the sign-in is old), the app's
// setup, recovery codes shown once, and the confirmations of removals. Forms post urlencoded with a CSRF token and
// answer 303; passkeys need the script (passkeys.js) and the JSON routes (routes.ts).
import { readFileSync } from 'node:fs';
import QRCode from 'qrcode';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { Problem, notFound } from '../http/problem.ts';
import type { SafeHtml } from '../http/html.ts';
import {
  csrfFailed,
  page,
  readForm,
  redirect,
  safeNext,
  send,
  signedInForm,
  signedInOrRedirect,
  type Page,
} from '../web/page.ts';
import { pageUser, preSessionCsrf, validPreSessionCsrf } from '../web/session.ts';
import { limitedByAccount } from '../accounts/operations.ts';
import {
  checkTypedCode,
  confirmTotp,
  factorsOf,
  hasSecondFactor,
  isRecent,
  markSecondFactor,
  passkeysOf,
  pendingTotp,
  removePasskey,
  removeTotp,
  startTotp,
} from './factors.ts';
import { newRecoveryCodes } from './recovery-codes.ts';
import { mfaTranslator, type MfaMessage } from './i18n.ts';
import {
  PASSKEYS_SCRIPT_PATH,
  SECURITY_PATH,
  VERIFY_PATH,
  confirmBody,
  noFactorBody,
  recoveryCodesBody,
  secondFactorBody,
  securitySection,
  totpSetupBody,
  type MfaView,
} from './page-views.ts';
import { SECOND_FACTOR_PATH, finishPendingSignIn, pendingSignIn } from './pending.ts';
import { secondFactorConsolePage } from './console-page.ts';
import { personConsolePages } from './console-person.ts';
import { PAYOUTS_PATH } from '../cabinet/page-views.ts';

const SCRIPT = readFileSync(new URL('./passkeys.js', import.meta.url), 'utf8');
/** One-shot notices of the security page (`?done=…`) that are the second factors'. */
export const FACTOR_DONE = [
  'totp_on',
  'totp_removed',
  'passkey_added',
  'passkey_removed',
  'verified',
] as const satisfies readonly FactorDone[];
type FactorDone = MfaMessage extends infer K ? (K extends `done_${infer D}` ? D : never) : never;

const view = (p: Page): MfaView => ({ lang: p.lang, t: p.t, timeZone: p.timeZone, m: mfaTranslator(p.lang) });

/** The security page's words for a `?done=` of the second factors, or undefined. */
export function factorNotice(p: Page): string | undefined {
  const done = FACTOR_DONE.find((value) => value === p.ctx.query.done);
  return done && view(p).m(`done_${done}`);
}

/** The security page's section: what the account has, and (after a recent sign-in) its passkeys by name. */
export async function securityFactors(p: Page, services: Services): Promise<SafeHtml | undefined> {
  const signed = await pageUser(p.ctx, services);
  if (!signed) return undefined;
  const factors = await factorsOf(services.db, signed.user.id);
  const passkeys = isRecent(signed) ? await passkeysOf(services.db, signed.user.id) : undefined;
  return securitySection(view(p), { factors, passkeys, csrf: signed.csrf });
}

export function mfaPages(api: Api, services: Services): void {
  const router = api.router;
  const { db } = services;
  const base = () => services.config.BASE_URL;

  secondFactorConsolePage(api, services);
  personConsolePages(api, services);

  router.get(PASSKEYS_SCRIPT_PATH, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = SCRIPT;
  });

  // The second sign-in page

  async function secondPage(p: Page, next: string, status: number, error?: string) {
    const pending = await pendingSignIn(p.ctx, services);
    if (!pending) return expired(p, next);
    const factors = await factorsOf(db, pending.userId);
    const m = view(p).m;
    const body = secondFactorBody(view(p), {
      title: m('secondTitle'),
      intro: m('secondIntro'),
      action: SECOND_FACTOR_PATH,
      passkeyMode: 'second',
      csrf: preSessionCsrf(p.ctx, services),
      next,
      totp: factors.totp,
      passkeys: factors.passkeys > 0,
      error,
    });
    send(p, status, m('secondTitle'), body, `${SECOND_FACTOR_PATH}?next=${encodeURIComponent(next)}`);
  }

  /** No pending sign-in (expired, spent, or never): back to the password, keeping where the person was going. */
  function expired(p: Page, next: string) {
    const signIn = `/cabinet/sign-in?next=${encodeURIComponent(next)}&expired=1`;
    redirect(p.ctx, signIn);
  }

  router.get(
    SECOND_FACTOR_PATH,
    page(services, async (p) => {
      await secondPage(p, safeNext(p.ctx.query.next, base()), 200);
    }),
  );

  router.post(
    SECOND_FACTOR_PATH,
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const next = safeNext(form.get('next'), base());
      const pending = await pendingSignIn(p.ctx, services);
      if (!pending) return expired(p, next);
      const code = (form.get('code') ?? '').slice(0, 40);
      const checked = await typedFactor(p, services, pending, code);
      if (typeof checked === 'string') return secondPage(p, next, p.ctx.status, checked);
      if (!(await finishPendingSignIn(p.ctx, services, pending.userId, checked.amr))) return expired(p, next);
      redirect(p.ctx, next);
    }),
  );

  // The step-up: a signed-in person gives the second factor again, then goes back to `next`.

  async function verifyPage(p: Page, next: string, status: number, error?: string) {
    const signed = await signedInOrRedirect(p, services, `${VERIFY_PATH}?next=${encodeURIComponent(next)}`);
    if (!signed) return;
    const factors = await factorsOf(db, signed.user.id);
    const m = view(p).m;
    if (!factors.totp && factors.passkeys === 0)
      return send(p, status, m('verifyTitle'), noFactorBody(view(p)), VERIFY_PATH, signed);
    const body = secondFactorBody(view(p), {
      title: m('verifyTitle'),
      intro: next.startsWith('/cabinet/view/deals/') || next === PAYOUTS_PATH ? m('verifyMoney') : m('verifyIntro'),
      action: VERIFY_PATH,
      passkeyMode: 'verify',
      csrf: signed.csrf,
      next,
      totp: factors.totp,
      passkeys: factors.passkeys > 0,
      error,
    });
    send(p, status, m('verifyTitle'), body, `${VERIFY_PATH}?next=${encodeURIComponent(next)}`, signed);
  }

  router.get(
    VERIFY_PATH,
    page(services, async (p) => {
      await verifyPage(p, safeNext(p.ctx.query.next, base()), 200);
    }),
  );

  router.post(
    VERIFY_PATH,
    page(services, async (p) => {
      const posted = await signedInForm(p, services, VERIFY_PATH);
      if (!posted) return;
      const next = safeNext(posted.form.get('next'), base());
      const signed = (await pageUser(p.ctx, services))!;
      const code = (posted.form.get('code') ?? '').slice(0, 40);
      const checked = await typedFactor(p, services, { userId: signed.user.id, email: signed.user.email }, code);
      if (typeof checked === 'string') return verifyPage(p, next, p.ctx.status, checked);
      await markSecondFactor(db, signed.sessionId, checked.amr);
      redirect(p.ctx, next === SECURITY_PATH ? `${SECURITY_PATH}?done=verified` : next);
    }),
  );

  // Setting up the app

  router.post(
    `${SECURITY_PATH}/totp`,
    page(services, async (p) => {
      const posted = await signedInForm(p, services, SECURITY_PATH);
      if (!posted) return;
      // As the JSON operation: adding a factor to an account that has one needs a recent sign-in.
      if ((await hasSecondFactor(db, posted.signed.user.id)) && !(await recentOrVerify(p, SECURITY_PATH))) return;
      let started;
      try {
        started = await startTotp(services, posted.signed.user);
      } catch (error) {
        if (error instanceof Problem && error.code === 'totp_already_enabled')
          return redirect(p.ctx, `${SECURITY_PATH}#second-factor`);
        throw error;
      }
      await setupPage(p, posted.signed.csrf, started, 200);
    }),
  );

  async function setupPage(
    p: Page,
    csrf: string,
    started: { secret: string; otpauth_uri: string },
    status: number,
    error?: string,
  ) {
    // The QR code is an inline SVG made here, as the console's: the key never leaves the page.
    const qr = await QRCode.toString(started.otpauth_uri, { type: 'svg', margin: 1, width: 200 });
    const body = totpSetupBody(view(p), { secret: started.secret, uri: started.otpauth_uri, qr, csrf, error });
    const signed = await pageUser(p.ctx, services);
    send(p, status, view(p).m('totpSetupTitle'), body, SECURITY_PATH, signed);
  }

  router.post(
    `${SECURITY_PATH}/totp/confirm`,
    page(services, async (p) => {
      const posted = await signedInForm(p, services, SECURITY_PATH);
      if (!posted) return;
      const { signed, form } = posted;
      let confirmed;
      try {
        confirmed = await confirmTotp(services, signed.user.id, (form.get('code') ?? '').slice(0, 20));
      } catch (error) {
        if (!(error instanceof Problem) || error.code !== 'wrong_second_factor') throw error;
        // The same key again (the app has it already: a mistyped code needs no new scan); a new one if it is gone.
        const again = (await pendingTotp(services, signed.user)) ?? (await startTotp(services, signed.user));
        return setupPage(p, signed.csrf, again, 400, view(p).m('totpWrong'));
      }
      const session = await pageUser(p.ctx, services);
      if (session) await markSecondFactor(db, session.sessionId, ['otp', 'mfa']);
      if (!confirmed.recovery_codes) return redirect(p.ctx, `${SECURITY_PATH}?done=totp_on`);
      const m = view(p).m;
      send(
        p,
        200,
        m('recoveryTitle'),
        recoveryCodesBody(view(p), { codes: confirmed.recovery_codes, notice: m('done_totp_on') }),
        SECURITY_PATH,
        signed,
      );
    }),
  );

  // Removals and new codes: a confirmation first, and a recent sign-in (or the step-up, which comes back here).

  function confirmation(
    path: string,
    words: (p: Page) => Promise<{ title: string; text: string; button: string; danger: boolean } | undefined>,
    act: (p: Page, userId: string) => Promise<void>,
  ) {
    const show = async (p: Page, csrf: string) => {
      const said = await words(p);
      if (!said) throw notFound('No such second factor.');
      const signed = await pageUser(p.ctx, services);
      const action = p.ctx.path;
      send(p, 200, said.title, confirmBody(view(p), { ...said, action, csrf }), action, signed);
    };
    router.get(
      path,
      page(services, async (p) => {
        const signed = await signedInOrRedirect(p, services);
        if (!signed || !(await recentOrVerify(p, p.ctx.path))) return;
        await show(p, signed.csrf);
      }),
    );
    router.post(
      path,
      page(services, async (p) => {
        const posted = await signedInForm(p, services, SECURITY_PATH);
        if (!posted || !(await recentOrVerify(p, p.ctx.path))) return;
        // Only the confirmation page's form acts; a form from anywhere else gets that page first.
        if (posted.form.get('confirmed') !== 'yes') return show(p, posted.signed.csrf);
        await act(p, posted.signed.user.id);
      }),
    );
  }

  /** The words of a removal; with the warning that the codes go too when it is the last factor. */
  async function removalWords(p: Page, title: string, text: string) {
    const signed = (await pageUser(p.ctx, services))!;
    const factors = await factorsOf(db, signed.user.id);
    const m = view(p).m;
    const last = Number(factors.totp) + factors.passkeys === 1;
    return { title, text: last ? `${text} ${m('removeLastFactor')}` : text, button: m('removeButton'), danger: true };
  }

  confirmation(
    `${SECURITY_PATH}/totp/remove`,
    async (p) => {
      const signed = (await pageUser(p.ctx, services))!;
      if (!(await factorsOf(db, signed.user.id)).totp) return undefined;
      return removalWords(p, view(p).m('removeTotpTitle'), view(p).m('removeTotpText'));
    },
    async (p, userId) => {
      if (!(await removeTotp(db, userId))) throw notFound('No authenticator app is set up.');
      redirect(p.ctx, `${SECURITY_PATH}?done=totp_removed`);
    },
  );

  confirmation(
    `${SECURITY_PATH}/passkeys/:id/remove`,
    async (p) => {
      const signed = (await pageUser(p.ctx, services))!;
      const passkey = (await passkeysOf(db, signed.user.id)).find((item) => item.id === p.ctx.params.id);
      if (!passkey) return undefined;
      return removalWords(p, view(p).m('removePasskeyTitle', { name: passkey.name }), view(p).m('removePasskeyText'));
    },
    async (p, userId) => {
      if (!(await removePasskey(db, userId, String(p.ctx.params.id)))) throw notFound('No such passkey.');
      redirect(p.ctx, `${SECURITY_PATH}?done=passkey_removed`);
    },
  );

  confirmation(
    `${SECURITY_PATH}/recovery-codes`,
    async (p) => {
      const signed = (await pageUser(p.ctx, services))!;
      const factors = await factorsOf(db, signed.user.id);
      if (!factors.totp && factors.passkeys === 0) return undefined;
      const m = view(p).m;
      return { title: m('newCodesTitle'), text: m('newCodesText'), button: m('newCodesButton'), danger: false };
    },
    async (p, userId) => {
      const factors = await factorsOf(db, userId);
      if (!factors.totp && factors.passkeys === 0) throw notFound('The account has no second factor.');
      const codes = await newRecoveryCodes(services, userId);
      const signed = await pageUser(p.ctx, services);
      send(p, 200, view(p).m('recoveryTitle'), recoveryCodesBody(view(p), { codes }), SECURITY_PATH, signed);
    },
  );

  /** A recent sign-in goes on; an older one is sent to the step-up, which comes back to `back`. */
  async function recentOrVerify(p: Page, back: string): Promise<boolean> {
    const signed = await pageUser(p.ctx, services);
    if (signed && isRecent(signed)) return true;
    redirect(p.ctx, `${VERIFY_PATH}?next=${encodeURIComponent(back)}`);
    return false;
  }
}

/**
 * A typed code (the app's or a recovery code) behind the sign-in limits: the amr it gives, or the words of its
 * refusal (and the page's status set: 400 wrong, 429 limited with Retry-After).
 */
async function typedFactor(
  p: Page,
  services: Services,
  account: { userId: string; email: string },
  code: string,
): Promise<{ amr: readonly string[] } | string> {
  try {
    return await limitedByAccount(services, account.email, p.ctx.ip, async () => {
      const checked = code ? await checkTypedCode(services, account.userId, code) : undefined;
      if (!checked) throw new WrongCode();
      return checked;
    });
  } catch (error) {
    if (error instanceof WrongCode) {
      p.ctx.status = 400;
      return view(p).m('secondWrong');
    }
    if (!(error instanceof Problem) || error.code !== 'too_many_attempts') throw error;
    const retryAfter = error.headers['Retry-After'];
    p.ctx.set('Retry-After', retryAfter);
    p.ctx.status = 429;
    return p.t('tooManyAttempts', { minutes: Math.ceil(Number(retryAfter) / 60) });
  }
}

class WrongCode extends Error {}
