/* global window, document, navigator, fetch, atob, btoa */
// The cabinet's passkey buttons (src/mfa/page-views.ts): registering a passkey on the security page, and signing in
// with one (alone, as the second step after a password, or as a step-up). WebAuthn's binary fields travel as
// base64url in JSON, as @simplewebauthn/server expects. Failures are said in the element's alert region, in the
// page's language (data-failed), and a refusal's own detail is not shown: it is written for integrators.
(() => {
  const bytes = (text) => {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0)).buffer;
  };
  const text = (buffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  const credentialList = (list) => (list || []).map((item) => ({ ...item, id: bytes(item.id) }));

  /** A credential as @simplewebauthn/server reads it: the common fields, and the ceremony's own in `response`. */
  const asJson = (credential, ceremony) => ({
    id: credential.id,
    rawId: text(credential.rawId),
    type: credential.type,
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: credential.authenticatorAttachment || undefined,
    response: { clientDataJSON: text(credential.response.clientDataJSON), ...ceremony },
  });

  async function postJson(path, body, csrf) {
    const response = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.code || String(response.status));
    return answer;
  }

  // A closed browser dialog, a refusal or a network failure alike: the page says the passkey did not work, in words.
  function fail(root) {
    const region = root.querySelector('#passkey-error');
    region.textContent = root.dataset.failed;
    region.hidden = false;
  }

  async function register(form) {
    const csrf = form.dataset.csrf;
    const options = await postJson('/cabinet/mfa/passkeys/options', {}, csrf);
    const credential = await navigator.credentials.create({
      publicKey: {
        ...options,
        challenge: bytes(options.challenge),
        user: { ...options.user, id: bytes(options.user.id) },
        excludeCredentials: credentialList(options.excludeCredentials),
      },
    });
    const response = credential.response;
    const added = await postJson(
      '/cabinet/mfa/passkeys',
      {
        name: form.querySelector('input[name=name]').value,
        response: asJson(credential, {
          attestationObject: text(response.attestationObject),
          transports: response.getTransports ? response.getTransports() : [],
        }),
      },
      csrf,
    );
    if (added.recovery_codes) showCodes(form, added.recovery_codes);
    else window.location.assign(added.location);
  }

  /** The first factor's recovery codes, shown once in place of the form (its data attributes hold the words). */
  function showCodes(form, codes) {
    const box = document.createElement('div');
    box.className = 'notice';
    box.setAttribute('role', 'status');
    const intro = document.createElement('p');
    intro.textContent = form.dataset.codesIntro;
    const list = document.createElement('ol');
    list.className = 'codes';
    list.id = 'recovery-codes';
    for (const code of codes) {
      const item = document.createElement('li');
      const value = document.createElement('code');
      value.textContent = code;
      item.append(value);
      list.append(item);
    }
    const done = document.createElement('a');
    done.className = 'button';
    done.href = '/cabinet/view/security?done=passkey_added';
    done.textContent = form.dataset.codesDone;
    box.append(intro, list, done);
    form.replaceWith(box);
  }

  async function signIn(root) {
    const csrf = root.dataset.csrf;
    const options = await postJson('/cabinet/mfa/passkeys/sign-in/options', {}, csrf);
    const credential = await navigator.credentials.get({
      publicKey: {
        ...options,
        challenge: bytes(options.challenge),
        allowCredentials: credentialList(options.allowCredentials),
      },
    });
    const response = credential.response;
    const signedIn = await postJson(
      '/cabinet/mfa/passkeys/sign-in',
      {
        next: root.dataset.next,
        response: asJson(credential, {
          authenticatorData: text(response.authenticatorData),
          signature: text(response.signature),
          userHandle: response.userHandle ? text(response.userHandle) : undefined,
        }),
      },
      csrf,
    );
    window.location.assign(signedIn.location);
  }

  if (!window.PublicKeyCredential) return;
  for (const form of document.querySelectorAll('form[data-passkey=register]')) {
    form.hidden = false;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      register(form).catch(() => fail(form));
    });
  }
  for (const root of document.querySelectorAll('div[data-passkey]')) {
    root.hidden = false;
    root.querySelector('button').addEventListener('click', () => signIn(root).catch(() => fail(root)));
  }
})();
