// The sites a user signed in to with SSO, for the signed-in user: the list, and revoking one (the site asks consent
// again next time, and the access tokens it holds for the user stop working). The page /cabinet/view/connected-sites
// (connected-sites-pages.ts) calls the same functions.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import type { User } from '../accounts/users.ts';
import { notFound } from '../http/problem.ts';
import { requireCabinetUser } from '../accounts/sessions.ts';
import { bearerOrPageSession } from '../web/session.ts';
import { connectedSites, revokeSite, type ConnectedSite } from './grants.ts';

const Site = z.object({
  client_id: z.string().describe('The SSO client'),
  name: z.string().describe('The name the client was registered with'),
  first_at: z.iso.datetime().describe('When the user first allowed it (again, after a revocation)'),
  last_at: z.iso.datetime().describe('The latest sign-in to it'),
});

const siteView = (site: ConnectedSite) => ({
  client_id: site.client_id,
  name: site.name,
  first_at: site.first_at.toISOString(),
  last_at: site.last_at.toISOString(),
});

export function connectedSiteRoutes(api: Api, services: Services): void {
  const signedIn = { tags: ['Cabinet'], security: ['cabinetToken'] };

  api.route({
    ...signedIn,
    // A GET, so the browser session's cookie may answer it too (no CSRF token needed).
    use: [bearerOrPageSession(services)],
    method: 'get',
    path: '/cabinet/connected-sites',
    operationId: 'cabinetConnectedSites',
    summary: 'The sites I signed in to with SSO, the most recently used first',
    description: 'Authorization: Bearer <cabinet token>, or the cabinet web session cookie.',
    responses: { 200: { description: 'The sites', schema: z.object({ items: z.array(Site) }) } },
    handler: async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { items: (await connectedSites(services.db, (ctx.state.user as User).id)).map(siteView) };
    },
  });

  api.route({
    ...signedIn,
    use: [requireCabinetUser(services.db)],
    method: 'post',
    path: '/cabinet/connected-sites/{client_id}/revoke',
    operationId: 'revokeConnectedSite',
    summary: 'Disconnect a site: it asks my consent again, and its access tokens for me stop working',
    description: '404 `not_found` for a client that is unknown or not connected to me.',
    params: z.object({ client_id: z.string().max(128) }),
    responses: {
      200: { description: 'The site as it was, now revoked', schema: Site.extend({ revoked_at: z.iso.datetime() }) },
    },
    handler: async (ctx, { params }) => {
      const revoked = await revokeSite(services.db, (ctx.state.user as User).id, params.client_id);
      if (!revoked) throw notFound('No connected site has this client_id.');
      ctx.body = { ...siteView(revoked), revoked_at: revoked.revoked_at.toISOString() };
    },
  });
}
