// Redirect URIs of SSO clients: the rules at registration and the match at authorize. Everything is compared as
// parsed URL components (never string prefixes), after refusing the raw forms that parsers and browsers read
// differently: whitespace and control characters (stripped by browsers), backslashes (read as '/'), non-ASCII
// (mapped by IDNA), dot segments and percent-encoded dots (removed or decoded on the way), and hosts not written
// canonically. See RFC 9700 §4.1 and the Keycloak redirect CVEs the tests replay.
import { parse as parseDomain } from 'tldts';

export const MAX_REDIRECT_URIS = 20;
export const MAX_REDIRECT_URI_LENGTH = 2000;

/**
 * A registered redirect URI: exact, or `https://*.<host>/<path>` for any subdomain of host with exactly that path
 * whose registrable domain (public suffix list, private suffixes included) is the host's own, `domain`.
 */
export type RedirectRule =
  | { kind: 'exact'; registered: string; url: URL }
  | { kind: 'wildcard'; registered: string; host: string; pathname: string; domain: string };

type Checked = { ok: true; url: URL } | { ok: false; reason: string };

const UNSAFE = /[\s\u0000-\u001f\u007f\\]|[^\u0000-\u007f]/;
const SCHEME_AND_AUTHORITY = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/;
// '.' or '..' as a whole segment, also when encoded (%2e) or followed by ';…' (Tomcat's "..;/" path parameter).
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(;[^/]*)?(\/|$)/i;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Loopback hosts may use plain http (RFC 8252 §7.3); everything else needs https. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The checks shared by registration and authorize: absolute, canonical, no userinfo, no fragment, https or loopback http. */
function checkUri(raw: string): Checked {
  if (raw.length === 0 || raw.length > MAX_REDIRECT_URI_LENGTH)
    return { ok: false, reason: `must be 1 to ${MAX_REDIRECT_URI_LENGTH} characters` };
  if (UNSAFE.test(raw))
    return {
      ok: false,
      reason: 'must not contain whitespace, control characters, backslashes or non-ASCII characters',
    };
  if (raw.includes('#')) return { ok: false, reason: 'must not contain a fragment' };
  const parts = SCHEME_AND_AUTHORITY.exec(raw);
  if (!parts || !URL.canParse(raw)) return { ok: false, reason: 'must be an absolute https URL' };
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return { ok: false, reason: 'must use https (plain http only on a loopback address)' };
  }
  const authority = parts[2].toLowerCase();
  if (authority.includes('@') || url.username || url.password)
    return { ok: false, reason: 'must not contain userinfo (user@)' };
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  if (authority !== url.host && authority !== `${url.hostname}:${defaultPort}`) {
    return { ok: false, reason: 'must write the host canonically (no percent-encoding, no numeric shorthand)' };
  }
  if (DOT_SEGMENT.test(parts[3])) return { ok: false, reason: 'must not contain dot segments such as /../ or %2e' };
  return { ok: true, url };
}

/** Why a URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(raw: string, options: { wildcard?: boolean } = {}): string | undefined {
  const result = parseRule(raw, options.wildcard ?? true);
  return 'reason' in result ? result.reason : undefined;
}

export function parseRule(raw: string, allowWildcard = true): RedirectRule | { reason: string } {
  if (!raw.includes('*')) {
    const checked = checkUri(raw);
    if (!checked.ok) return { reason: checked.reason };
    if (!isValidHost(checked.url.hostname)) return { reason: 'must name a valid host' };
    return { kind: 'exact', registered: raw, url: checked.url };
  }
  const wildcardRule = 'a wildcard is allowed only as https://*.<host>/<path>';
  if (!allowWildcard) return { reason: 'must be one exact URI, without a wildcard' };
  if (!raw.startsWith('https://*.') || raw.indexOf('*', 9) !== -1) return { reason: wildcardRule };
  const checked = checkUri(`https://${raw.slice('https://*.'.length)}`);
  if (!checked.ok) return { reason: checked.reason };
  const { url } = checked;
  if (url.port !== '' || raw.slice(8).split(/[/?]/)[0].includes(':'))
    return { reason: 'a wildcard URI must use the default port' };
  if (raw.includes('?')) return { reason: 'a wildcard URI must not have a query' };
  const domain = parseDomain(url.hostname, { allowPrivateDomains: true });
  if (domain.isIp || !isValidHost(url.hostname)) return { reason: 'a wildcard needs a domain name after *.' };
  if (!domain.domain || domain.publicSuffix === url.hostname) {
    return { reason: `a wildcard over a public suffix (*.${url.hostname}) would match sites of other owners` };
  }
  return { kind: 'wildcard', registered: raw, host: url.hostname, pathname: url.pathname, domain: domain.domain };
}

/** Splits the space-separated registration string and checks each URI; the first problem names its URI. */
export function parseRedirectUris(
  value: string,
  options: { wildcard?: boolean } = {},
): { uris: string[] } | { problem: string } {
  const uris = value.split(' ').filter((uri) => uri !== '');
  if (uris.length === 0) return { problem: 'at least one redirect URI is required' };
  if (uris.length > MAX_REDIRECT_URIS) return { problem: `at most ${MAX_REDIRECT_URIS} redirect URIs` };
  for (const uri of uris) {
    const problem = redirectUriProblem(uri, options);
    if (problem) return { problem: `${JSON.stringify(uri.slice(0, 200))} ${problem}` };
  }
  return { uris: [...new Set(uris)] };
}

/**
 * The URL to send the browser to when `presented` matches one of the registered URIs, else undefined. The result is
 * the parsed URL that passed the checks, so nothing unchecked is ever redirected to.
 */
export function matchRedirectUri(presented: string, registered: readonly string[]): URL | undefined {
  const checked = checkUri(presented);
  if (!checked.ok) return undefined;
  const { url } = checked;
  for (const raw of registered) {
    const rule = parseRule(raw);
    if ('reason' in rule) continue;
    if (rule.kind === 'exact' ? matchesExact(url, presented, rule.url) : matchesWildcard(url, presented, rule))
      return new URL(url.href);
  }
  return undefined;
}

function matchesExact(url: URL, raw: string, registered: URL): boolean {
  // RFC 8252 §7.3: a loopback IP literal registered without a port accepts any port (native apps pick one at run time).
  const anyPort = registered.protocol === 'http:' && registered.port === '' && registered.hostname !== 'localhost';
  return (
    url.protocol === registered.protocol &&
    url.hostname === registered.hostname &&
    (url.port === registered.port || anyPort) &&
    url.pathname === registered.pathname &&
    url.search === registered.search &&
    // '?' with nothing after it is still a different string: exact means exact.
    raw.includes('?') === registered.href.includes('?')
  );
}

function matchesWildcard(url: URL, raw: string, rule: { host: string; pathname: string; domain: string }): boolean {
  if (url.protocol !== 'https:' || url.port !== '' || raw.includes('?') || url.pathname !== rule.pathname) return false;
  if (!url.hostname.endsWith(`.${rule.host}`)) return false;
  const subdomain = url.hostname.slice(0, -(rule.host.length + 1));
  if (!subdomain.split('.').every((label) => LABEL.test(label))) return false;
  // A public suffix between the base and the host (s3.amazonaws.com under *.amazonaws.com) hands the host to another
  // owner: attacker-bucket.s3.amazonaws.com is a customer's site, not Amazon's. Same registrable domain, same owner.
  return parseDomain(url.hostname, { allowPrivateDomains: true }).domain === rule.domain;
}

/** A DNS name of letter-digit-hyphen labels, or an IP literal as the URL parser wrote it. */
function isValidHost(hostname: string): boolean {
  if (hostname.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)) return true;
  return hostname.split('.').every((label) => LABEL.test(label));
}
