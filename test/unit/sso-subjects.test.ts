// Pairwise subject identifiers (src/sso/subjects.ts): the sector a client's redirect URIs make, and a sub that is the
// svc ID for public clients and a keyed hash per sector and user for pairwise ones.
import { describe, expect, it } from 'vitest';
import { sectorOf, subjectFor } from '../../src/sso/subjects.ts';
import { BackchannelLogoutUri, PostLogoutRedirectUris } from '../../src/sso/schemas.ts';

const key = Buffer.alloc(32, 7);
const otherKey = Buffer.alloc(32, 8);
const user = '0b7c6f1e-3d1c-4a51-9f36-2a5e3c1d9e10';
const otherUser = '5f0e2f55-84e4-4b8f-a4a5-0bb1f0f00b2c';
const client = (client_id: string, redirect_uris: string[], subject_type: 'public' | 'pairwise' = 'pairwise') => ({
  client_id,
  redirect_uris,
  subject_type,
});

describe('sectorOf', () => {
  it.each([
    [['https://shop.example.com/cb'], 'host:shop.example.com'],
    [['https://shop.example.com/cb', 'https://shop.example.com/other'], 'host:shop.example.com'],
    [['https://*.shop.example.com/cb'], 'host:shop.example.com'],
    [['https://shop.example.com/cb', 'https://*.shop.example.com/cb'], 'host:shop.example.com'],
    [['http://127.0.0.1:8080/cb'], 'host:127.0.0.1'],
    [['https://a.example.com/cb', 'https://b.example.com/cb'], 'client:the-client'],
  ])('of %j is %s', (uris, sector) => {
    expect(sectorOf(client('the-client', uris))).toBe(sector);
  });
});

describe('subjectFor', () => {
  it('is the svc ID for a public client', () => {
    expect(subjectFor(key, client('c', ['https://a.example.com/cb'], 'public'), user)).toBe(user);
  });

  it('is stable for a pairwise client, and differs by sector, user and key', () => {
    const a = client('a', ['https://a.example.com/cb']);
    const sub = subjectFor(key, a, user);
    expect(sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sub).not.toContain(user);
    expect(subjectFor(key, a, user)).toBe(sub);
    expect(subjectFor(key, client('a2', ['https://a.example.com/other']), user)).toBe(sub); // one site, one sub
    expect(subjectFor(key, client('b', ['https://b.example.com/cb']), user)).not.toBe(sub);
    expect(subjectFor(key, a, otherUser)).not.toBe(sub);
    expect(subjectFor(otherKey, a, user)).not.toBe(sub);
  });
});

describe('PostLogoutRedirectUris', () => {
  it.each([
    ['', true],
    ['https://shop.example.com/bye', true],
    ['https://shop.example.com/bye http://127.0.0.1:3000/bye', true],
    ['https://*.shop.example.com/bye', false],
    ['http://shop.example.com/bye', false],
    ['https://shop.example.com/bye#top', false],
    ['https://shop.example.com/a/../bye', false],
    [Array.from({ length: 21 }, (_, i) => `https://shop.example.com/${i}`).join(' '), false],
  ])('%j is accepted: %s', (value, accepted) => {
    expect(PostLogoutRedirectUris.safeParse(value).success).toBe(accepted);
  });
});

describe('BackchannelLogoutUri', () => {
  it.each([
    ['https://shop.example.com/bc', true],
    ['http://127.0.0.1:4000/bc', true],
    ['https://203.0.113.9/bc', false], // documentation range: special-use
    ['https://8.8.8.8/bc', true],
    ['https://10.0.0.5/bc', false],
    ['https://169.254.169.254/latest', false],
    ['https://[fd00::1]/bc', false],
    ['http://shop.example.com/bc', false],
    ['https://*.shop.example.com/bc', false],
  ])('%j is accepted: %s', (value, accepted) => {
    expect(BackchannelLogoutUri.safeParse(value).success).toBe(accepted);
  });
});
