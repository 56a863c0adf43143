// The redirect URI rules as tables: what may be registered, and what a presented redirect_uri matches. Includes the
// attacks of RFC 9700 §4.1 (open redirection through lax matching) and the patterns of recent Keycloak redirect CVEs
// (CVE-2023-6291 userinfo and prefix tricks, CVE-2023-6927 and CVE-2024-1132 path traversal with ..;/ and encoded
// dots), plus ports, trailing slashes, suffix tricks and what browsers strip.
import { describe, expect, it } from 'vitest';
import { matchRedirectUri, parseRedirectUris, redirectUriProblem } from '../../src/sso/redirect-uris.ts';

const EXACT = 'https://app.example.com/cb';
const WILDCARD = 'https://*.example.com/cb';
const LOOPBACK_IP = 'http://127.0.0.1/cb';
const LOCALHOST = 'http://localhost:8080/cb';
const WITH_QUERY = 'https://app.example.com/cb?tenant=1';

// [registered (space-separated), presented, matches]
const MATCHES: [string, string, boolean][] = [
  // Exact URIs match exactly, as parsed components.
  [EXACT, 'https://app.example.com/cb', true],
  [EXACT, 'HTTPS://APP.EXAMPLE.COM/cb', true],
  [EXACT, 'https://app.example.com:443/cb', true],
  [EXACT, 'https://app.example.com/cb/', false],
  [EXACT, 'https://app.example.com/CB', false],
  [EXACT, 'https://app.example.com/cb?x=1', false],
  [EXACT, 'https://app.example.com/cb?', false],
  [EXACT, 'https://app.example.com/cb#x', false],
  [EXACT, 'https://app.example.com/cb#', false],
  [EXACT, 'http://app.example.com/cb', false],
  [EXACT, 'https://app.example.com:8443/cb', false],
  [EXACT, 'https://app.example.com/cbx', false],
  [EXACT, 'https://app.example.com/cb/evil', false],
  // Suffix and prefix tricks on the host.
  [EXACT, 'https://app.example.com.evil.com/cb', false],
  [EXACT, 'https://evilapp.example.com/cb', false],
  [EXACT, 'https://app.example.com./cb', false],
  [EXACT, 'https://evil.com/https://app.example.com/cb', false],
  [EXACT, 'https://evil.com/?https://app.example.com/cb', false],
  [EXACT, 'https://app.example.com/cb?next=https://evil.com', false],
  // Userinfo and parser differentials (RFC 9700 §4.1, CVE-2023-6291).
  [EXACT, 'https://app.example.com@evil.com/cb', false],
  [EXACT, 'https://user@app.example.com/cb', false],
  [EXACT, 'https://app.example.com:x@evil.com/cb', false],
  [EXACT, 'https://evil.com\\@app.example.com/cb', false],
  [EXACT, 'https://evil.com#@app.example.com/cb', false],
  [EXACT, 'https://app.example.com%2eevil.com/cb', false],
  [EXACT, 'https://app.example.com%40evil.com/cb', false],
  // Path traversal (CVE-2023-6927, CVE-2024-1132): dot segments, Tomcat's ..;/ and encoded dots.
  [EXACT, 'https://app.example.com/cb/../cb', false],
  [EXACT, 'https://app.example.com/evil/../cb', false],
  [EXACT, 'https://app.example.com/./cb', false],
  [EXACT, 'https://app.example.com/cb/..;/evil', false],
  [EXACT, 'https://app.example.com/x/..;/cb', false],
  [EXACT, 'https://app.example.com/cb/%2e%2e/evil', false],
  [EXACT, 'https://app.example.com/x/%2E%2e/cb', false],
  [EXACT, 'https://app.example.com/x/.%2e/cb', false],
  [EXACT, 'https://app.example.com/cb%2f..%2fevil', false],
  // What browsers strip or map: whitespace, control characters, non-ASCII look-alikes.
  [EXACT, ' https://app.example.com/cb', false],
  [EXACT, 'https://app.example.com/c\tb', false],
  [EXACT, 'https://app.example.com/cb\n', false],
  [EXACT, 'https://аpp.example.com/cb', false],
  [EXACT, 'https://ａpp.example.com/cb', false],
  // Not absolute, or not http(s).
  [EXACT, '', false],
  [EXACT, '/cb', false],
  [EXACT, '//app.example.com/cb', false],
  [EXACT, 'javascript://app.example.com/cb%0aalert(1)', false],
  [EXACT, 'data:text/html,<script>alert(1)</script>', false],
  // Wildcards: any subdomain, https, default port, exactly that path, no query, never the host itself.
  [WILDCARD, 'https://shop.example.com/cb', true],
  [WILDCARD, 'https://a.b.example.com/cb', true],
  [WILDCARD, 'https://example.com/cb', false],
  [WILDCARD, 'https://shop.example.com/cb/', false],
  [WILDCARD, 'https://shop.example.com/cb?x=1', false],
  [WILDCARD, 'https://shop.example.com:8443/cb', false],
  [WILDCARD, 'https://shop.example.com:443/cb', true],
  [WILDCARD, 'http://shop.example.com/cb', false],
  [WILDCARD, 'https://evil.com/.example.com/cb', false],
  [WILDCARD, 'https://shop.example.com.evil.com/cb', false],
  [WILDCARD, 'https://shopexample.com/cb', false],
  [WILDCARD, 'https://x@shop.example.com/cb', false],
  [WILDCARD, 'https://evil.com%2f.example.com/cb', false],
  [WILDCARD, 'https://*.example.com/cb', false],
  [WILDCARD, 'https://-shop.example.com/cb', false],
  [WILDCARD, 'https://shop.example.com/x/../cb', false],
  // A host matches only within the registered base's registrable domain, private public suffixes included: below
  // *.amazonaws.com, s3.amazonaws.com and eu-west-1.compute.amazonaws.com are suffixes whose subdomains others own.
  ['https://*.amazonaws.com/cb', 'https://console.amazonaws.com/cb', true],
  ['https://*.amazonaws.com/cb', 'https://a.b.amazonaws.com/cb', true],
  ['https://*.amazonaws.com/cb', 'https://attacker-bucket.s3.amazonaws.com/cb', false],
  ['https://*.amazonaws.com/cb', 'https://bucket.s3.eu-west-1.amazonaws.com/cb', false],
  ['https://*.amazonaws.com/cb', 'https://x.eu-west-1.compute.amazonaws.com/cb', false],
  ['https://*.myapp.herokuapp.com/cb', 'https://eu.myapp.herokuapp.com/cb', true],
  ['https://*.user.github.io/cb', 'https://docs.user.github.io/cb', true],
  // Loopback: an IP literal registered without a port accepts any port (RFC 8252 §7.3); names match exactly.
  [LOOPBACK_IP, 'http://127.0.0.1:53012/cb', true],
  [LOOPBACK_IP, 'http://127.0.0.1/cb', true],
  [LOOPBACK_IP, 'http://127.0.0.1:53012/other', false],
  [LOOPBACK_IP, 'https://127.0.0.1/cb', false],
  [LOOPBACK_IP, 'http://127.1/cb', false],
  [LOOPBACK_IP, 'http://0x7f.0.0.1/cb', false],
  [LOCALHOST, 'http://localhost:8080/cb', true],
  [LOCALHOST, 'http://localhost:8081/cb', false],
  [LOCALHOST, 'http://localhost/cb', false],
  // A registered query must be repeated exactly.
  [WITH_QUERY, 'https://app.example.com/cb?tenant=1', true],
  [WITH_QUERY, 'https://app.example.com/cb?tenant=2', false],
  [WITH_QUERY, 'https://app.example.com/cb?tenant=1&x=2', false],
  [WITH_QUERY, 'https://app.example.com/cb', false],
  // Several registered URIs: any one of them.
  [`${EXACT} https://other.example.org/return`, 'https://other.example.org/return', true],
  [`${EXACT} https://other.example.org/return`, 'https://other.example.org/cb', false],
];

describe('matching a presented redirect_uri', () => {
  it('has a table of at least 40 cases', () => {
    expect(MATCHES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(MATCHES)('registered %j, presented %j → %s', (registered, presented, expected) => {
    const target = matchRedirectUri(presented, registered.split(' '));
    expect(target !== undefined).toBe(expected);
    // What is redirected to is the URL that was checked, on the registered origin.
    if (target)
      expect(registered.split(' ').some((uri) => uri.includes('*') || new URL(uri).hostname === target.hostname)).toBe(
        true,
      );
  });
});

// [URI, refused]
const REGISTRATIONS: [string, boolean][] = [
  ['https://app.example.com/cb', false],
  ['https://*.example.com/cb', false],
  ['https://*.example.co.uk/cb', false],
  ['https://*.example.com', false],
  ['http://127.0.0.1/cb', false],
  ['http://localhost:3000/cb', false],
  ['http://[::1]:4000/cb', false],
  ['https://app.example.com/cb?tenant=1', false],
  ['*', true],
  ['https://*', true],
  ['https://*/cb', true],
  ['https://*.com/cb', true],
  ['https://*.co.uk/cb', true],
  ['https://*.github.io/cb', true],
  // Private suffixes of the public suffix list count like .com: their subdomains belong to different customers.
  ['https://*.s3.amazonaws.com/cb', true],
  ['https://*.herokuapp.com/cb', true],
  ['https://*.blogspot.com/cb', true],
  ['https://*.eu-west-1.compute.amazonaws.com/cb', true],
  ['https://*.amazonaws.com/cb', false],
  ['https://*.myapp.herokuapp.com/cb', false],
  ['https://*.user.github.io/cb', false],
  ['https://*.ru/cb', true],
  ['https://a.*.example.com/cb', true],
  ['https://*example.com/cb', true],
  ['https://*.*.example.com/cb', true],
  ['https://app.example.com/*', true],
  ['https://app.example.com/cb?x=*', true],
  ['*.example.com/cb', true],
  ['http://*.example.com/cb', true],
  ['https://*.example.com:8443/cb', true],
  ['https://*.example.com:443/cb', true],
  ['https://*.example.com/cb?x=1', true],
  ['https://*.127.0.0.1/cb', true],
  ['http://app.example.com/cb', true],
  ['https://app.example.com/cb#frag', true],
  ['https://user:pass@app.example.com/cb', true],
  ['https://*.user@example.com/cb', true],
  ['javascript:alert(1)', true],
  ['app.example.com/cb', true],
  ['https://app.example.com/a/../cb', true],
  ['https://app.example.com/a/%2e%2e/cb', true],
  ['com.example.app:/callback', true],
  ['https://app.example.com/c b', true],
];

describe('registering redirect URIs', () => {
  it.each(REGISTRATIONS)('%j refused: %s', (uri, refused) => {
    expect(redirectUriProblem(uri) !== undefined).toBe(refused);
  });

  it('splits on spaces, names the bad URI, and refuses an empty list', () => {
    expect(parseRedirectUris('https://a.example.com/cb  https://b.example.com/cb')).toEqual({
      uris: ['https://a.example.com/cb', 'https://b.example.com/cb'],
    });
    expect(parseRedirectUris('https://a.example.com/cb https://*.com/cb')).toMatchObject({
      problem: expect.stringContaining('"https://*.com/cb"'),
    });
    expect(parseRedirectUris('   ')).toMatchObject({ problem: expect.stringContaining('at least one') });
  });

  it('refuses wildcards where one fixed URI is expected (a marketplace)', () => {
    expect(redirectUriProblem('https://*.example.com/cb', { wildcard: false })).toBeDefined();
    expect(redirectUriProblem('https://shop.example.com/cb', { wildcard: false })).toBeUndefined();
  });
});
