// Shapes of the SSO API: the profile (what a client learns about the user) and the client card.
import { isIP } from 'node:net';
import { z } from 'zod';
import { isLoopbackAddress, isPublicAddress } from '../webhooks/ssrf.ts';
import { parseRedirectUris, redirectUriProblem } from './redirect-uris.ts';
import { EXACT_REDIRECT_URI, WILDCARD_REDIRECT_URI } from '../http/web-addresses.ts';

export const Profile = z.object({
  svc_id: z.uuid().describe('The svc ID'),
  email: z.string(),
  name: z.string(),
  org: z.object({ id: z.uuid(), name: z.string() }).describe('The personal organization'),
});

export const ClientCard = z.object({
  client_id: z.string(),
  name: z.string(),
  redirect_uris: z.string().describe('Space-separated, as registered'),
  client_secret: z.string().describe('cs_…'),
  marketplace_id: z.uuid().nullable().describe('The marketplace this client was made for, if any'),
  automatic: z
    .boolean()
    .describe(
      'Made with a marketplace (its sso_redirect_uri): the marketplace owns it, so it cannot be renamed, re-pointed or deleted here',
    ),
  disabled: z
    .boolean()
    .describe(
      'A disabled client is unknown at authorize, invalid_client at the token endpoints, and its access tokens are refused',
    ),
  created_at: z.iso.datetime(),
  secret_rotated_at: z.iso.datetime().nullable(),
  token_endpoint_auth_method: z
    .enum(['client_secret_basic', 'client_secret_post', 'none'])
    .describe(
      'How the client authenticates at the token endpoints: with its secret (HTTP Basic or in the form, both work), or ' +
        '`none`: a public client (an app), which has no usable secret and must use PKCE (S256)',
    ),
  subject_type: z
    .enum(['public', 'pairwise'])
    .describe(
      "`public`: `sub` is the svc ID; `pairwise`: `sub` is a keyed hash of the client's sector (its redirect URIs' one " +
        'host, else its client_id) and the user, in the ID token, userinfo and introspection (POST /sso/token keeps svc_id)',
    ),
  post_logout_redirect_uris: z
    .string()
    .describe('Space-separated exact URIs RP-initiated logout may return to, as registered; empty for none'),
  backchannel_logout_uri: z
    .string()
    .nullable()
    .describe('Where a logout_token is POSTed when the user signs out; null for none'),
  registered_dynamically: z
    .boolean()
    .describe(
      'Registered itself at /sso/oidc/register (RFC 7591): a public client an application made, not an administrator',
    ),
});

/**
 * The redirect URI rules (docs/decisions/0019-redirect-uris-compared-as-components.md), so that a bad URI is a 400
 * naming the field.
 */
const ONE_REDIRECT_URI = `(?:${EXACT_REDIRECT_URI}|${WILDCARD_REDIRECT_URI})`;

export const RedirectUris = z
  .string()
  .max(20 * 2001)
  .regex(
    new RegExp(`^ *${ONE_REDIRECT_URI}(?: +${ONE_REDIRECT_URI}){0,19} *$`),
    'must be 1 to 20 redirect URIs separated by spaces',
  )
  .superRefine((value, ctx) => {
    const parsed = parseRedirectUris(value);
    if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
  })
  .describe(
    'Space-separated. Exact https URIs (http only on loopback), or https://*.<host>/<path> for any subdomain of host',
  );

/** One exact redirect URI: what a marketplace gives for the SSO client made with it. */
export const ExactRedirectUri = z
  .string()
  .max(2000)
  .regex(
    new RegExp(`^${EXACT_REDIRECT_URI}$`),
    'must be an https URI (http only on a loopback host) without a fragment',
  )
  .meta({ format: 'uri' })
  .superRefine((value, ctx) => {
    const problem = redirectUriProblem(value, { wildcard: false });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Exact post-logout redirect URIs (no wildcard): compared exactly at /sso/oidc/logout. */
export const PostLogoutRedirectUris = z
  .string()
  .max(20 * 2001)
  .regex(
    new RegExp(`^ *(?:${EXACT_REDIRECT_URI}(?: +${EXACT_REDIRECT_URI}){0,19})? *$`),
    'must be at most 20 exact https URIs (http only on a loopback host) separated by spaces',
  )
  .superRefine((value, ctx) => {
    const uris = value.split(' ').filter(Boolean);
    if (uris.length > 20) ctx.addIssue({ code: 'custom', message: 'must be at most 20 URIs separated by spaces' });
    for (const uri of uris) {
      const problem = redirectUriProblem(uri, { wildcard: false });
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `${uri.slice(0, 100)} ${problem}` });
        return;
      }
    }
  })
  .describe(
    'Space-separated exact https URIs (http only on loopback) that RP-initiated logout may send the browser back to',
  );

/** The back-channel logout URI; where it resolves is checked against the SSRF rules at each delivery. */
export const BackchannelLogoutUri = z
  .string()
  .max(2000)
  .regex(
    new RegExp(`^${EXACT_REDIRECT_URI}$`),
    'must be an https URI (http only on a loopback host) without a fragment',
  )
  .superRefine((value, ctx) => {
    const problem = redirectUriProblem(value, { wildcard: false });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else {
      // An address written out is checked now; a name, where it resolves at each delivery (src/sso/backchannel.ts).
      const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !isPublicAddress(host) && !isLoopbackAddress(host))
        ctx.addIssue({ code: 'custom', message: 'must not name a private or special-use address' });
    }
  })
  .meta({ format: 'uri' })
  .describe(
    'An https URI (http only on loopback) that receives a logout_token (form-encoded POST) when a user of this client ' +
      'signs out; deliveries go only to public addresses (the loopback too under WEBHOOK_ALLOW_LOOPBACK)',
  );

/** The uris of a checked space-separated list. */
export const uriList = (value: string): string[] => [...new Set(value.split(' ').filter(Boolean))];
