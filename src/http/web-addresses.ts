// The pieces of web addresses our schemas accept, as regular expressions the OpenAPI document carries verbatim: what
// the pattern admits, the server admits, so a client (or a fuzzer) that follows the document is never refused.
// Hosts are written as browsers send them: lower case letter-digit-hyphen labels of at most 63 characters, a last
// label that starts with a letter (so that it is never read as an IPv4 address), or a dotted IPv4 address.
import { z } from 'zod';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const LAST_LABEL = '[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?';
export const HOSTNAME = `(?:${LABEL}\\.)*${LAST_LABEL}`;
/** At least two labels: what a wildcard may stand over (*.shop.example). */
export const DOMAIN = `(?:${LABEL}\\.)+${LAST_LABEL}`;
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
export const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const H16 = '[0-9a-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
/** RFC 3986's IPv6address, in lower case as the URL parser writes it; used inside [brackets]. */
export const IPV6 = `(?:${[
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join('|')})`;
export const PORT = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?';
/** Percent-encoded octets, except an encoded dot (%2e), which would make a dot segment behind the parser's back. */
const ENCODED = '%(?:[013-9a-fA-F][0-9a-fA-F]|2[0-9a-dA-DfF])';
/** Path segments of unreserved or encoded characters, none of them `.` or `..` alone (some dots, then more). */
export const PATH = `(?:/(?:\\.*(?:[A-Za-z0-9_~-]|${ENCODED})(?:[A-Za-z0-9._~-]|${ENCODED})*)?)*`;
export const QUERY = `(?:\\?(?:[A-Za-z0-9._~=&+-]|${ENCODED})*)?`;

const ORIGIN = new RegExp(`^https?://(?:${HOSTNAME}|${IPV4})${PORT}$`);

/** A web origin (scheme, host, port), stored as browsers send it in `Origin`: without the scheme's default port. */
export const OriginSchema = z
  .string()
  .max(300)
  .regex(ORIGIN, 'must be an origin such as https://shop.example (scheme, host and port only, lower case)')
  .meta({ format: 'uri' })
  .transform((value) => new URL(value).origin);

/**
 * Exact SSO redirect URIs: https, or plain http on a loopback host (RFC 8252 §7.3). IPv6 only as the loopback [::1]:
 * redirect URIs are compared as the URL parser writes them, and its compressed IPv6 form is no regular expression.
 */
export const EXACT_REDIRECT_URI = `(?:https://(?:${HOSTNAME}|${IPV4})|http://(?:localhost|127\\.${OCTET}\\.${OCTET}\\.${OCTET}|\\[::1\\]))${PORT}${PATH}${QUERY}`;
/** https://*.<domain>/<path>: any subdomain, the default port, no query. */
export const WILDCARD_REDIRECT_URI = `https://\\*\\.${DOMAIN}${PATH}`;
/** A webhook receiver: where it may point beyond this shape is the SSRF guard's to say (webhook_url_not_allowed). */
export const WEBHOOK_URL = new RegExp(`^https?://(?:${HOSTNAME}|${IPV4}|\\[${IPV6}\\])${PORT}${PATH}${QUERY}$`);
