// What the second-factor pages show, as HTML bodies: the security page's section, the app's setup, recovery codes
// shown once, the confirmations of removals, the second sign-in page and the step-up. No logic beyond layout.
import { html, SafeHtml } from '../http/html.ts';
import { csrfField, message } from '../web/layout.ts';
import { formatDate } from '../web/i18n.ts';
import type { View } from '../web/page.ts';
import type { MfaTranslate } from './i18n.ts';
import type { FactorsSummary, PasskeyItem } from './factors.ts';
import { PASSKEY_NAME_MAX } from './passkeys.ts';

export const PASSKEYS_SCRIPT_PATH = '/cabinet/assets/passkeys.js';
export const SECURITY_PATH = '/cabinet/view/security';
export const VERIFY_PATH = '/cabinet/view/verify';

export interface MfaView extends View {
  m: MfaTranslate;
}

const script = html`<script src="${PASSKEYS_SCRIPT_PATH}" defer></script>`;

/**
 * A passkey button the script (passkeys.js) shows and drives: hidden without JavaScript or WebAuthn. Its words for a
 * failure travel in data attributes, and the script says them in the alert region below it.
 */
function passkeyButton(
  m: MfaTranslate,
  data: { mode: 'sign-in' | 'second' | 'verify'; csrf: string; next: string; label: string; hint?: string },
): SafeHtml {
  return html`<div class="passkey" data-passkey="${data.mode}" data-csrf="${data.csrf}" data-next="${data.next}" data-failed="${m('passkeyFailed')}" hidden>
<button type="button" class="secondary" id="passkey-button">${data.label}</button>
${data.hint ? html`<p class="hint">${data.hint}</p>` : undefined}
<p class="error" role="alert" id="passkey-error" hidden></p>
</div>
${script}`;
}

/** The cabinet sign-in page's passkey button (a passkey alone signs in). */
export function passkeySignIn(m: MfaTranslate, csrf: string, next: string): SafeHtml {
  return passkeyButton(m, {
    mode: 'sign-in',
    csrf,
    next,
    label: m('passkeySignIn'),
    hint: m('passkeySignInHint'),
  });
}

export function securitySection(
  { m, lang, timeZone }: MfaView,
  data: { factors: FactorsSummary; passkeys: PasskeyItem[] | undefined; csrf: string },
): SafeHtml {
  const { factors } = data;
  // Passkeys come by name only after a recent sign-in, which adding a factor to a protected account needs too.
  const recent = data.passkeys !== undefined;
  const protectedAccount = factors.totp || factors.passkeys > 0;
  const passkeys = data.passkeys
    ? data.passkeys.length === 0
      ? html`<p>${m('passkeysNone')}</p>`
      : html`<ul class="plain">${data.passkeys.map(
          (passkey) => html`<li class="card"><p><strong>${passkey.name}</strong></p>
<p class="muted">${m('passkeyAdded', { date: formatDate(lang, passkey.created_at, timeZone) })}${passkey.last_used_at ? html`; ${m('passkeyUsed', { date: formatDate(lang, passkey.last_used_at, timeZone) })}` : undefined}</p>
<p><a href="${SECURITY_PATH}/passkeys/${passkey.id}/remove" aria-label="${m('passkeyRemove')} ${passkey.name}">${m('passkeyRemove')}</a></p></li>`,
        )}</ul>`
    : html`<p>${factors.passkeys === 0 ? m('passkeysNone') : m('passkeysCount', { count: factors.passkeys })}</p>
${protectedAccount ? html`<p>${m('passkeysHidden')} <a href="${VERIFY_PATH}?next=${encodeURIComponent(SECURITY_PATH)}">${m('confirmItsYou')}</a></p>` : undefined}`;
  return html`<section aria-labelledby="second-factor"><h2 id="second-factor">${m('factorsHeading')}</h2>
<p>${m('factorsIntro')}</p>
<h3 id="totp-heading">${m('totpHeading')}</h3>
${
  factors.totp
    ? html`<p>${m('totpOn')}</p><p><a href="${SECURITY_PATH}/totp/remove">${m('totpRemove')}</a></p>`
    : html`<p>${m('totpOff')}</p>
<form method="post" action="${SECURITY_PATH}/totp">${csrfField(data.csrf)}<button type="submit" class="secondary">${m('totpSetUp')}</button></form>`
}
<h3 id="passkeys-heading">${m('passkeysHeading')}</h3>
${passkeys}
${
  recent || !protectedAccount
    ? html`<form class="passkey-add" data-passkey="register" data-csrf="${data.csrf}" data-failed="${m('passkeyFailed')}" data-codes-intro="${`${m('done_passkey_added')} ${m('recoveryIntro')}`}" data-codes-done="${m('recoveryDone')}" hidden>
<label for="passkey-name">${m('passkeyName')}</label>
<input class="field" id="passkey-name" name="name" type="text" maxlength="${PASSKEY_NAME_MAX}" aria-describedby="passkey-name-hint">
<p class="hint" id="passkey-name-hint">${m('passkeyNameHint')}</p>
<button type="submit" id="passkey-add">${m('passkeyAdd')}</button>
<p class="error" role="alert" id="passkey-error" hidden></p>
</form>
<noscript><p>${m('passkeyNoScript')}</p></noscript>
${script}`
    : undefined
}
<h3 id="recovery-heading">${m('recoveryHeading')}</h3>
${
  factors.totp || factors.passkeys > 0
    ? html`<p>${m('recoveryLeft', { count: factors.recovery_codes_left })}</p>
<p><a href="${SECURITY_PATH}/recovery-codes">${m('recoveryNew')}</a></p>`
    : html`<p>${m('recoveryNone')}</p>`
}
</section>`;
}

export function totpSetupBody(
  { m }: MfaView,
  data: { secret: string; uri: string; qr: string; csrf: string; error?: string },
): SafeHtml {
  const grouped = data.secret.replace(/(.{4})/g, '$1 ').trim();
  return html`<h1>${m('totpSetupTitle')}</h1>
${message('error', data.error)}
<p>${m('totpSetupIntro')}</p>
<figure class="qr" role="img" aria-label="${m('totpQrAlt')}">${new SafeHtml(data.qr)}</figure>
<p>${m('totpKey')}: <code id="totp-secret" class="secret-value">${grouped}</code></p>
<form method="post" action="${SECURITY_PATH}/totp/confirm">
${csrfField(data.csrf)}
<label for="code">${m('totpCode')}</label>
<input class="field" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9 ]{6,7}" maxlength="7" aria-describedby="code-hint">
<p class="hint" id="code-hint">${m('totpCodeHint')}</p>
<div class="actions"><button type="submit">${m('totpConfirm')}</button> <a href="${SECURITY_PATH}">${m('cancel')}</a></div>
</form>`;
}

export function recoveryCodesBody({ m }: MfaView, data: { codes: string[]; notice?: string }): SafeHtml {
  return html`<h1>${m('recoveryTitle')}</h1>
${message('notice', data.notice)}
<p>${m('recoveryIntro')}</p>
<ol class="codes" id="recovery-codes">${data.codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
<p><a class="button" href="${SECURITY_PATH}">${m('recoveryDone')}</a></p>`;
}

/** "Are you sure?" for a removal or new codes: only this form's post (confirmed=yes) does it. */
export function confirmBody(
  { m }: MfaView,
  data: { title: string; text: string; button: string; action: string; csrf: string; danger: boolean },
): SafeHtml {
  return html`<h1>${data.title}</h1>
<p class="consequence">${data.text}</p>
<form method="post" action="${data.action}">
${csrfField(data.csrf)}<input type="hidden" name="confirmed" value="yes">
<div class="actions"><button type="submit" class="${data.danger ? 'danger' : 'secondary'}">${data.button}</button> <a href="${SECURITY_PATH}">${m('cancel')}</a></div>
</form>`;
}

/**
 * The second factor's forms: the app's code, a passkey, a recovery code; for the second sign-in page (`action` its
 * POST) and the step-up alike.
 */
export function secondFactorBody(
  { m }: MfaView,
  data: {
    title: string;
    intro: string;
    action: string;
    passkeyMode: 'second' | 'verify';
    csrf: string;
    next: string;
    totp: boolean;
    passkeys: boolean;
    error?: string;
  },
): SafeHtml {
  const codeForm = (kind: 'totp' | 'recovery') =>
    html`<form method="post" action="${data.action}">
${csrfField(data.csrf)}<input type="hidden" name="next" value="${data.next}">
<label for="${kind}-code">${kind === 'totp' ? m('secondCode') : m('secondRecoveryField')}</label>
${
  kind === 'totp'
    ? html`<input class="field" id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9 ]{6,7}" maxlength="7" aria-describedby="totp-code-hint">`
    : html`<input class="field" id="recovery-code" name="code" autocomplete="off" autocapitalize="none" required maxlength="40" aria-describedby="recovery-code-hint">`
}
<p class="hint" id="${kind}-code-hint">${kind === 'totp' ? m('secondCodeHint') : m('secondRecoveryHint')}</p>
<div><button type="submit">${m('secondCodeButton')}</button></div>
</form>`;
  return html`<h1>${data.title}</h1>
${message('error', data.error)}
<p>${data.intro}</p>
${data.totp ? codeForm('totp') : undefined}
${data.passkeys ? passkeyButton(m, { mode: data.passkeyMode, csrf: data.csrf, next: data.next, label: m('secondPasskey') }) : undefined}
<details${data.totp || data.passkeys ? undefined : html` open`}><summary>${m('secondRecovery')}</summary>
${codeForm('recovery')}
</details>`;
}

export function noFactorBody({ m }: MfaView): SafeHtml {
  return html`<h1>${m('verifyTitle')}</h1>
<p>${m('verifyNoFactor')}</p>
<p><a class="button" href="${SECURITY_PATH}#second-factor">${m('goToSecurity')}</a></p>`;
}
