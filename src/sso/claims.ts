// Which claims a sign-in's scope gives (issue 25): `openid` alone gives `sub` (and the protocol claims); `profile` adds
// `name`, and `locale` and `zoneinfo` when the user chose them; `email` adds `email` and `email_verified`; `org` the
// personal organization. A pairwise client never gets `svc_id` or the organization. A request without `openid` is the
// specification's simplified flow, whose exchange (POST /sso/token) answers the whole profile: it counts as
// `profile email org`, for consent and for claims alike; that exchange refuses the code of an `openid` sign-in that
// asked for less. The consent page lists exactly these scopes.
import { OFFLINE_ACCESS, scopeValues } from './refresh-tokens.ts';

/** The scopes a user consents to, in the order the consent page lists them; any other value is ignored. */
export const CONSENT_SCOPES = ['profile', 'email', 'org', OFFLINE_ACCESS] as const;
export type ConsentScope = (typeof CONSENT_SCOPES)[number];

export const SUPPORTED_SCOPES = ['openid', ...CONSENT_SCOPES];
export const SUPPORTED_CLAIMS = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'name',
  'locale',
  'zoneinfo',
  'email',
  'email_verified',
  'svc_id',
  'org',
  'amr',
  'acr',
];

const SIMPLIFIED_FLOW: readonly ConsentScope[] = ['profile', 'email', 'org'];

const isConsentScope = (value: string): value is ConsentScope => (CONSENT_SCOPES as readonly string[]).includes(value);

/** The known scopes a scope string asks for, as consent and claims count them. */
export function consentScopes(scope: string): Set<ConsentScope> {
  const values = scopeValues(scope);
  const asked = new Set(values.filter(isConsentScope));
  if (!values.includes('openid')) for (const value of SIMPLIFIED_FLOW) asked.add(value);
  return new Set(CONSENT_SCOPES.filter((value) => asked.has(value)));
}

/** Whether the user allowed the whole profile POST /sso/token answers (always, for the simplified flow). */
export function coversProfile(scope: string): boolean {
  const scopes = consentScopes(scope);
  return SIMPLIFIED_FLOW.every((value) => scopes.has(value));
}

export interface ClaimsUser {
  email: string;
  name: string;
  org: { id: string; name: string };
  /** The language the user chose in the cabinet; null when never chosen. */
  locale: string | null;
  time_zone: string | null;
}

/** The user's claims the scope selects (besides `sub`, `svc_id` and the protocol claims). */
export function scopedClaims(user: ClaimsUser, scope: string, pairwise: boolean) {
  const scopes = consentScopes(scope);
  return {
    ...(scopes.has('profile')
      ? {
          name: user.name,
          ...(user.locale ? { locale: user.locale } : {}),
          ...(user.time_zone ? { zoneinfo: user.time_zone } : {}),
        }
      : {}),
    // Sign-up does not confirm the address (a password reset mail is the first to reach it), so it is not claimed.
    ...(scopes.has('email') ? { email: user.email, email_verified: false } : {}),
    ...(scopes.has('org') && !pairwise ? { org: user.org } : {}),
  };
}

/** The ID token's acr: a sign-in with a second factor (amr has `mfa`), or with a password alone. */
export const ACR_MFA = 'urn:svc:acr:mfa';
export const ACR_PASSWORD = 'urn:svc:acr:pwd';
/** Every acr an ID token may carry, as discovery lists them (acr_values_supported). */
export const ACR_VALUES = [ACR_MFA, ACR_PASSWORD];

/**
 * How the user signed in, as the ID token says it: `amr` (RFC 8176 values the session recorded: `pwd`, `otp`, `hwk`,
 * `user`, `mfa`) and `acr`. Codes issued before sessions recorded it carry none, and then neither claim is made up.
 */
export function authenticationClaims(amr: readonly string[] | null | undefined) {
  if (!amr || amr.length === 0) return {};
  return { amr: [...amr], acr: amr.includes('mfa') ? ACR_MFA : ACR_PASSWORD };
}
