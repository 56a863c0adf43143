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
  // A registered URI that no longer passes the rules is skipped, never read loosely: the others still match.
  [`* ${EXACT}`, 'https://app.example.com/cb', true],
  ['https://*.com/cb', 'https://evil.com/cb', false],
  // Case: scheme and host are case-insensitive (the parser lowers them), the path and the query are not.
  ['https://APP.example.com/cb', 'https://app.example.com/cb', true],
  [EXACT, 'HTTPS://app.example.com/cb', true],
  [WILDCARD, 'https://SHOP.example.com/cb', true],
  [WITH_QUERY, 'https://app.example.com/cb?TENANT=1', false],
  // Ports: the default one written or not, any other only when registered; never written oddly.
  ['https://app.example.com:443/cb', 'https://app.example.com/cb', true],
  ['https://app.example.com:8443/cb', 'https://app.example.com:8443/cb', true],
  ['https://app.example.com:8443/cb', 'https://app.example.com/cb', false],
  [EXACT, 'https://app.example.com:0443/cb', false],
  [EXACT, 'https://app.example.com:/cb', false],
  ['http://[::1]/cb', 'http://[::1]:5000/cb', true],
  ['http://[::1]/cb', 'http://[0:0:0:0:0:0:0:1]:5000/cb', false],
  ['http://localhost/cb', 'http://localhost:3000/cb', false],
  [LOOPBACK_IP, 'http://127.0.0.2/cb', false],
  [LOOPBACK_IP, 'http://localhost/cb', false],
  [LOOPBACK_IP, 'http://127.0.0.1:99999/cb', false],
  // Paths compare as written: no decoding of what the browser would send as is, no empty segments, no parameters.
  [EXACT, 'https://app.example.com/c%62', false],
  [EXACT, 'https://app.example.com/cb%2F', false],
  [EXACT, 'https://app.example.com//cb', false],
  [EXACT, 'https://app.example.com/cb;x', false],
  [EXACT, 'https://app.example.com/cb/.', false],
  [EXACT, 'https://app.example.com/cb%00', false],
  // A URI without a path is the same URI as with '/': the parser reads both as '/'.
  ['https://app.example.com', 'https://app.example.com/', true],
  ['https://app.example.com', 'https://app.example.com', true],
  ['https://*.example.com', 'https://shop.example.com', true],
  // Queries: exactly as registered, in order and encoding; a bare '?' registered must be presented too.
  ['https://app.example.com/cb?a=1&b=2', 'https://app.example.com/cb?b=2&a=1', false],
  [WITH_QUERY, 'https://app.example.com/cb?tenant=%31', false],
  ['https://app.example.com/cb?', 'https://app.example.com/cb?', true],
  ['https://app.example.com/cb?', 'https://app.example.com/cb', false],
  [WILDCARD, 'https://shop.example.com/cb#', false],
  // Unicode tricks: look-alikes in punycode, invisible and direction characters, fullwidth solidus, encoded RLO.
  [EXACT, 'https://xn--pp-8kc.example.com/cb', false],
  [EXACT, 'https://app.exa\u200bmple.com/cb', false],
  [EXACT, 'https://app.example.com/cb\u202e', false],
  [EXACT, 'https://app.example.com\uff0fcb', false],
  [EXACT, 'https://app.example.com/cb%E2%80%AE', false],
  [EXACT, 'https://app.example.com/cb\u0000', false],
  [WILDCARD, 'https://xn--80ak6aa92e.example.com/cb', true],
  // Hosts written otherwise than canonically, and malformed schemes.
  [EXACT, 'https://app%2Eexample.com/cb', false],
  [EXACT, 'https://2130706433/cb', false],
  [EXACT, 'ht\ttps://app.example.com/cb', false],
  [EXACT, 'https:app.example.com/cb', false],
  [EXACT, 'https:/app.example.com/cb', false],
  [EXACT, 'https:///app.example.com/cb', false],
  [WILDCARD, 'https://shop.example.com./cb', false],
  [WILDCARD, 'https://a_b.example.com/cb', false],
  [WILDCARD, 'https://a..example.com/cb', false],
  [WILDCARD, 'https://.example.com/cb', false],
  [WILDCARD, 'https://192.168.0.1/cb', false],
  // Longer than any URI may be.
  [EXACT, `https://app.example.com/cb?${'x'.repeat(2000)}`, false],
];

describe('matching a presented redirect_uri', () => {
  it('has a table of at least 40 cases', () => {
    expect(MATCHES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(MATCHES)('registered %j, presented %j → %s', (registered, presented, expected) => {
    const target = matchRedirectUri(presented, registered.split(' '));
    expect(target !== undefined).toBe(expected);
    // The browser goes to the presented URI as parsed, never to a registered one or anything rewritten.
    if (target) expect(target.href).toBe(new URL(presented).href);
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
  // Lengths: up to 2000 characters.
  [`https://app.example.com/${'a'.repeat(2000 - 24)}`, false],
  [`https://app.example.com/${'a'.repeat(2001 - 24)}`, true],
  ['', true],
  // Hosts: ASCII as written (punycode is ASCII), canonical, valid labels; IP literals over https.
  ['https://APP.example.com/cb', false],
  ['https://xn--80ak6aa92e.com/cb', false],
  ['https://приложение.рф/cb', true],
  ['https://a_b.example.com/cb', true],
  ['https://-app.example.com/cb', true],
  ['https://app.example.com:0443/cb', true],
  ['https://app.example.com:/cb', true],
  ['https://app.example.com:65536/cb', true],
  ['https://10.0.0.1/cb', false],
  ['https://[2001:db8::1]/cb', false],
  // Loopback for plain http: 127.0.0.0/8, [::1] and localhost, nothing that only looks like them.
  ['http://127.1.2.3/cb', false],
  ['http://localhost.example.com/cb', true],
  ['http://[::ffff:127.0.0.1]/cb', true],
  // Paths: dot segments refused, dots inside a segment are a name like any other; a query may hold what it likes.
  ['https://app.example.com/%2e%2e', true],
  ['https://app.example.com/.well-known/cb', false],
  ['https://app.example.com/..cb', false],
  ['https://app.example.com/cb/...', false],
  ['https://app.example.com/cb?x=%2e%2e', false],
  ['https://app.example.com/cb\u202e', true],
  ['https://app.example.com/cb\u0007', true],
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

  it('takes at most 20, counts a repeated URI once, and separates by spaces only', () => {
    const uris = (count: number) => Array.from({ length: count }, (_, index) => `https://a${index}.example.com/cb`);
    expect(parseRedirectUris(uris(20).join(' '))).toEqual({ uris: uris(20) });
    expect(parseRedirectUris(uris(21).join(' '))).toEqual({ problem: 'at most 20 redirect URIs' });
    expect(parseRedirectUris('https://a.example.com/cb https://a.example.com/cb')).toEqual({
      uris: ['https://a.example.com/cb'],
    });
    // A tab or a line break is not a separator: the two URIs are one, refused for its whitespace.
    for (const separator of ['\t', '\n'])
      expect(parseRedirectUris(`https://a.example.com/cb${separator}https://b.example.com/cb`)).toMatchObject({
        problem: expect.stringContaining('whitespace'),
      });
    // A refusal quotes at most 200 characters of the URI it names.
    const long = parseRedirectUris('x'.repeat(5000));
    expect('problem' in long && long.problem.length).toBeLessThan(300);
  });

  it('refuses wildcards where one fixed URI is expected (a marketplace)', () => {
    expect(redirectUriProblem('https://*.example.com/cb', { wildcard: false })).toBeDefined();
    expect(redirectUriProblem('https://shop.example.com/cb', { wildcard: false })).toBeUndefined();
  });
});
