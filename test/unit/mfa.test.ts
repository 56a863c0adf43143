// The second factors' pure parts, without a server: recovery codes as shown and as typed, what counts as a recent
// sign-in and as a second factor given, and the ID token's amr and acr (src/mfa, src/sso/claims.ts).
import { describe, expect, it } from 'vitest';
import { newRecoveryCode, normaliseRecoveryCode } from '../../src/mfa/recovery-codes.ts';
import { AMR, RECENT_SECONDS, hadSecondFactor, isRecent } from '../../src/mfa/factors.ts';
import { ACR_MFA, ACR_PASSWORD, authenticationClaims } from '../../src/sso/claims.ts';

describe('recovery codes', () => {
  it('are two groups of five from an alphabet without look-alikes, each one different', () => {
    const codes = Array.from({ length: 200 }, newRecoveryCode);
    for (const code of codes) expect(code).toMatch(/^[a-hjkmnp-z2-9]{5}-[a-hjkmnp-z2-9]{5}$/);
    expect(codes.join('')).not.toMatch(/[01ilo]/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('are the same code however they are typed: case, spaces and dashes do not matter', () => {
    expect(normaliseRecoveryCode(' K7M2Q - X9PTA ')).toBe('k7m2qx9pta');
    expect(normaliseRecoveryCode('k7m2q x9pta')).toBe(normaliseRecoveryCode('k7m2q-x9pta'));
    expect(normaliseRecoveryCode('k7m2q-x9ptb')).not.toBe(normaliseRecoveryCode('k7m2q-x9pta'));
  });
});

describe('a recent sign-in', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  const ago = (seconds: number) => new Date(now - seconds * 1000);

  it('is one that began, or gave a second factor, less than RECENT_SECONDS ago', () => {
    expect(isRecent({ signedInAt: ago(RECENT_SECONDS - 1), secondFactorAt: null }, now)).toBe(true);
    expect(isRecent({ signedInAt: ago(RECENT_SECONDS), secondFactorAt: null }, now)).toBe(false);
    expect(isRecent({ signedInAt: ago(3600), secondFactorAt: ago(60) }, now)).toBe(true);
    expect(isRecent({ signedInAt: ago(3600), secondFactorAt: ago(RECENT_SECONDS + 1) }, now)).toBe(false);
  });

  it('had a second factor when its amr says mfa or one was given since (a step-up)', () => {
    expect(hadSecondFactor({ amr: AMR.password, secondFactorAt: null })).toBe(false);
    expect(hadSecondFactor({ amr: AMR.passwordAndTotp, secondFactorAt: null })).toBe(true);
    expect(hadSecondFactor({ amr: AMR.passkey, secondFactorAt: null })).toBe(true);
    expect(hadSecondFactor({ amr: AMR.password, secondFactorAt: ago(7200) })).toBe(true);
  });
});

describe('the ID token’s amr and acr', () => {
  it('say a password alone, or two factors, in RFC 8176 values', () => {
    expect(authenticationClaims(['pwd'])).toEqual({ amr: ['pwd'], acr: ACR_PASSWORD });
    expect(authenticationClaims(AMR.passwordAndTotp)).toEqual({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    expect(authenticationClaims(AMR.passkey)).toEqual({ amr: ['hwk', 'user', 'mfa'], acr: ACR_MFA });
  });

  it('are left out for a code that recorded no sign-in, rather than made up', () => {
    expect(authenticationClaims(null)).toEqual({});
    expect(authenticationClaims(undefined)).toEqual({});
    expect(authenticationClaims([])).toEqual({});
  });

  it('every way to sign in with two factors says mfa, and only those', () => {
    for (const [way, amr] of Object.entries(AMR))
      expect((amr as readonly string[]).includes('mfa'), way).toBe(way !== 'password');
  });
});
