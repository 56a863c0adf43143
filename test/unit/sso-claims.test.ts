// Which claims a scope selects and what consent counts (src/sso/claims.ts), without a server.
import { describe, expect, it } from 'vitest';
import { consentScopes, coversProfile, scopedClaims } from '../../src/sso/claims.ts';

const user = {
  email: 'a@example.com',
  name: 'Anna',
  org: { id: '00000000-0000-4000-8000-000000000001', name: 'Anna' },
  locale: null,
  time_zone: 'Europe/Moscow',
};

describe('consentScopes', () => {
  it('keeps the known scopes in the consent order, once each, and ignores the rest', () => {
    expect([...consentScopes('openid offline_access email calendar email')]).toEqual(['email', 'offline_access']);
    expect([...consentScopes('openid')]).toEqual([]);
  });
  it('counts a request without openid (the simplified flow) as profile email org', () => {
    expect([...consentScopes('')]).toEqual(['profile', 'email', 'org']);
    expect([...consentScopes('offline_access')]).toEqual(['profile', 'email', 'org', 'offline_access']);
    expect(coversProfile('')).toBe(true);
    expect(coversProfile('openid profile email org')).toBe(true);
    expect(coversProfile('openid profile email')).toBe(false);
  });
});

describe('scopedClaims', () => {
  it('gives name (and zoneinfo, not an unchosen locale) for profile, email for email, org for org', () => {
    expect(scopedClaims(user, 'openid', false)).toEqual({});
    expect(scopedClaims(user, 'openid profile', false)).toEqual({ name: 'Anna', zoneinfo: 'Europe/Moscow' });
    expect(scopedClaims(user, 'openid email', false)).toEqual({ email: 'a@example.com', email_verified: false });
    expect(scopedClaims(user, 'openid org', false)).toEqual({ org: user.org });
  });
  it('never gives a pairwise client the organization', () => {
    expect(scopedClaims(user, 'openid org email', true)).toEqual({ email: 'a@example.com', email_verified: false });
  });
});
