// Shapes of the SSO API: the profile (what a client learns about the user) and the client card.
import { z } from 'zod';
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
