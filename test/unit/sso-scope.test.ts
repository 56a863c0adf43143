// The scope of an access token from a refresh (RFC 6749 §6): the granted one by default, a part of it on request,
// never more. Pure functions of src/sso/refresh-tokens.ts; the expected values are written out.
import { describe, expect, it } from 'vitest';
import { narrowScope, scopeValues } from '../../src/sso/refresh-tokens.ts';

describe('scopeValues', () => {
  it.each([
    ['openid email offline_access', ['openid', 'email', 'offline_access']],
    ['  openid   email ', ['openid', 'email']],
    ['openid openid email', ['openid', 'email']],
    ['', []],
  ])('%j → %j', (scope, values) => {
    expect(scopeValues(scope)).toEqual(values);
  });
});

describe('narrowScope', () => {
  const granted = 'openid email offline_access';
  it.each([
    [undefined, 'openid email offline_access'],
    ['openid', 'openid'],
    ['email openid', 'email openid'],
    ['openid  openid', 'openid'],
    ['openid email offline_access', 'openid email offline_access'],
    ['openid profile', undefined],
    ['offline_access org', undefined],
    ['OPENID', undefined],
  ])('asked %j → %j', (requested, expected) => {
    expect(narrowScope(granted, requested)).toBe(expected);
  });
});
