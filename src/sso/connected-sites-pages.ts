// The page of the sites a user signed in to with SSO (/cabinet/view/connected-sites), the web twin of
// connected-sites.ts: each site with when it was connected and last used, and Disconnect, which first shows a
// confirmation page saying what it does. Forms post with the session's CSRF token and answer 303.
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { formatDate } from '../web/i18n.ts';
import { csrfField, message } from '../web/layout.ts';
import {
  csrfFailed,
  page,
  readForm,
  redirect,
  send,
  signedInOrRedirect,
  type Page,
  type SignedIn,
  type View,
} from '../web/page.ts';
import { sameToken } from '../web/session.ts';
import { emptyList, pagePlace, pager } from '../admin/console-kit.ts';
import { clientName, isClientCursor } from './clients.ts';
import { connectedSites, revokeSite, type ConnectedSite } from './grants.ts';
import { ssoTranslator, type SsoTranslate } from './i18n.ts';

const SITES_PATH = '/cabinet/view/connected-sites';
/** Sites on a page of the list. */
const SITES_PAGE = 10;
const revokePath = (clientId: string) => `${SITES_PATH}/${encodeURIComponent(clientId)}/revoke`;

export function connectedSitePages(api: Api, services: Services): void {
  const router = api.router;

  router.get(
    SITES_PATH,
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const disconnected =
        typeof p.ctx.query.disconnected === 'string'
          ? await clientName(services.db, p.ctx.query.disconnected)
          : undefined;
      const notice =
        disconnected === undefined ? undefined : ssoTranslator(p.lang)('disconnected', { site: disconnected });
      await listPage(p, services, signed, 200, { notice });
    }),
  );

  router.get(
    `${SITES_PATH}/:client_id/revoke`,
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      await confirmPage(p, services, signed, p.ctx.params.client_id);
    }),
  );

  router.post(
    `${SITES_PATH}/:client_id/revoke`,
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      const signed = await signedInOrRedirect(p, services, SITES_PATH);
      if (!signed) return;
      if (!sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const clientId = p.ctx.params.client_id!;
      // Only the confirmation page's form disconnects; a form from anywhere else gets that page first.
      if (form.get('confirmed') !== 'yes') return confirmPage(p, services, signed, clientId);
      const revoked = await revokeSite(services.db, signed.user.id, clientId);
      if (!revoked) return listPage(p, services, signed, 404, { error: ssoTranslator(p.lang)('notConnected') });
      redirect(p.ctx, `${SITES_PATH}?disconnected=${encodeURIComponent(clientId)}`);
    }),
  );
}

async function listPage(
  p: Page,
  services: Services,
  signed: SignedIn,
  status: number,
  words: { notice?: string; error?: string },
) {
  // The answer to a form (a site disconnected elsewhere meanwhile) shows the first page.
  const place = p.ctx.method === 'GET' ? pagePlace(p.ctx.query, isClientCursor) : { trail: [] };
  const found = await connectedSites(services.db, signed.user.id, {
    limit: SITES_PAGE + 1,
    startingAfter: place.after,
  });
  const sites = found.slice(0, SITES_PAGE);
  const pages = pager(p.lang, {
    path: SITES_PATH,
    place,
    last: found.length > SITES_PAGE ? sites.at(-1)!.client_id : undefined,
  });
  send(
    p,
    status,
    p.t('navSites'),
    sitesBody({ ...p, st: ssoTranslator(p.lang) }, sites, pages, words),
    SITES_PATH,
    signed,
  );
}

/** Disconnecting a site the user has; one they do not have is the list with words saying so. */
async function confirmPage(p: Page, services: Services, signed: SignedIn, clientId: string) {
  const st = ssoTranslator(p.lang);
  const site = (await connectedSites(services.db, signed.user.id)).find(
    (candidate) => candidate.client_id === clientId,
  );
  if (!site) return listPage(p, services, signed, 404, { error: st('notConnected') });
  send(
    p,
    200,
    st('disconnectTitle', { site: site.name }),
    confirmBody({ ...p, st }, site, signed.csrf),
    revokePath(clientId),
    signed,
  );
}

type SitesView = View & { st: SsoTranslate };

function sitesBody(
  { t, st, lang, timeZone }: SitesView,
  sites: ConnectedSite[],
  /** The list's previous and next links (console-kit's pager). */
  pages: SafeHtml,
  words: { notice?: string; error?: string },
): SafeHtml {
  const service = t('appName');
  return html`<h1>${t('navSites')}</h1>
${message('notice', words.notice)}${message('error', words.error)}
<p>${st('sitesIntro', { service })}</p>
${
  sites.length === 0
    ? emptyList(lang, { filtered: false, none: st('noSites', { service }), path: SITES_PATH })
    : html`<ul class="plain" id="site-list">${sites.map(
        (site) => html`<li class="card"><h3>${site.name}</h3>
<p class="muted">${st('connectedOn', { date: formatDate(lang, site.first_at.toISOString(), timeZone) })}, ${st('lastSignIn', { date: formatDate(lang, site.last_at.toISOString(), timeZone) })}</p>
<a class="button danger" href="${revokePath(site.client_id)}">${st('disconnect')}</a></li>`,
      )}</ul>`
}
${pages}`;
}

function confirmBody({ t, st }: SitesView, site: ConnectedSite, csrf: string): SafeHtml {
  return html`<p><a href="${SITES_PATH}">${t('navSites')}</a></p>
<h1>${st('disconnectTitle', { site: site.name })}</h1>
<p class="consequence">${st('disconnectText', { site: site.name })}</p>
<form method="post" action="${revokePath(site.client_id)}">${csrfField(csrf)}<input type="hidden" name="confirmed" value="yes">
<div class="actions"><button type="submit" class="danger">${st('disconnectButton')}</button>
<a class="button secondary" href="${SITES_PATH}">${st('disconnectBack')}</a></div>
</form>`;
}
