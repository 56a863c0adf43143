// The operators' console (`/admin`, HTML): the shared web kit as another site, signed in with an administrator's
// sign-in kept in its own cookie (Path=/admin, SameSite=Strict), a strict Content-Security-Policy, forms with a CSRF
// token, role checks for every change, and every change written to the audit log like the JSON operations'.
import type { Context } from 'koa';
import type { Services } from '../services.ts';
import { Problem, problem } from '../http/problem.ts';
import { keyedDigest } from '../secrets.ts';
import type { Lang } from '../web/i18n.ts';
import type { Site } from '../web/layout.ts';
import { csrfFailed, page, readForm, redirect, type Page } from '../web/page.ts';
import { readCookie, sameToken } from '../web/session.ts';
import { ADMIN_TOKEN_PREFIX, adminActor, forbiddenFor, type AdminActor, type AdminRole } from './auth.ts';
import { recordAudit, type AuditEntry } from './audit.ts';
import { consoleTranslator, type ConsoleTranslate } from './console-i18n.ts';
import { openDisputeCount } from './console-home.ts';

export const CONSOLE_COOKIE = 'svc_admin';

/** The console's sections, in its header; a page of each lives under /admin/view. */
export const CONSOLE_SECTIONS = [
  ['/admin/view/marketplaces', 'navMarketplaces'],
  ['/admin/view/deals', 'navDeals'],
  ['/admin/view/disputes', 'navDisputes'],
  ['/admin/view/ledger', 'navMoney'],
  ['/admin/view/sso-clients', 'navSsoClients'],
  ['/admin/view/data-accounts', 'navDataAccounts'],
  ['/admin/view/audit', 'navAudit'],
  ['/admin/view/administrators', 'navAdministrators'],
  ['/admin/view/mail', 'navMail'],
] as const;

export const CONSOLE_SITE: Site = {
  brand: (lang: Lang) => consoleTranslator(lang)('consoleName'),
  home: '/admin',
  signIn: '/admin/sign-in',
  signOut: '/admin/sign-out',
  sections: (lang: Lang) => CONSOLE_SECTIONS.map(([href, key]) => [href, consoleTranslator(lang)(key)] as const),
};

/** The console's site with the number of open disputes beside "Disputes" in its header (none: no number). */
function withDisputeCount(open: number): Site {
  if (open === 0) return CONSOLE_SITE;
  return {
    ...CONSOLE_SITE,
    sections: (lang: Lang) =>
      CONSOLE_SITE.sections(lang).map(([href, label]) =>
        href === '/admin/view/disputes' ? ([href, `${label} (${open})`] as const) : ([href, label] as const),
      ),
  };
}

/** The signed-in administrator of a console page, with the CSRF token of its forms. */
export interface ConsoleAdmin extends AdminActor {
  email: string;
  csrf: string;
  token: string;
}

export interface ConsolePage extends Page {
  admin: ConsoleAdmin;
  /** The console's own words (the shared ones stay in `t`). */
  c: ConsoleTranslate;
}

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function setConsoleCookie(ctx: Context, services: Services, token: string, maxAgeSeconds: number): void {
  const secure = services.config.BASE_URL.startsWith('https:') ? '; Secure' : '';
  ctx.append(
    'Set-Cookie',
    `${CONSOLE_COOKIE}=${token}; Path=/admin; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`,
  );
}

export function consoleToken(ctx: Context): string | undefined {
  const token = readCookie(ctx, CONSOLE_COOKIE);
  return token?.startsWith(ADMIN_TOKEN_PREFIX) ? token : undefined;
}

/** The administrator signed in to the console in this browser; people only (the bootstrap token is for the API). */
export async function consoleAdmin(ctx: Context, services: Services): Promise<ConsoleAdmin | undefined> {
  const token = consoleToken(ctx);
  const actor = token ? await adminActor(services.db, token, undefined) : undefined;
  if (!token || !actor?.administratorId) return undefined;
  return { ...actor, email: actor.actor, token, csrf: keyedDigest(services.masterKey, 'console-csrf', token) };
}

/** The wrapper of a page before sign-in (sign-in, setup): the console's site, headers and CSP. */
export function publicConsolePage(services: Services, handler: (p: Page & { c: ConsoleTranslate }) => Promise<void>) {
  const wrapped = page(
    services,
    async (p) => handler({ ...p, c: consoleTranslator(p.lang) }),
    consoleOptions(services),
  );
  return async (ctx: Context) => {
    ctx.set('Content-Security-Policy', CSP);
    await wrapped(ctx);
  };
}

/**
 * The wrapper of every signed-in console page: no administrator, a redirect to the sign-in; a change (any method but
 * GET) by a role outside `may` (by default `admin` alone) is a 403 page. It does not check CSRF: a handler that changes
 * something reads its form with `consoleForm`, which checks the form's token before it answers the fields.
 */
export function consolePage(
  services: Services,
  handler: (p: ConsolePage) => Promise<void>,
  options: { may?: readonly AdminRole[] } = {},
) {
  const may = options.may ?? ['admin'];
  return publicConsolePage(services, async (p) => {
    const admin = await consoleAdmin(p.ctx, services);
    if (!admin)
      return redirect(
        p.ctx,
        `/admin/sign-in?next=${encodeURIComponent(p.ctx.method === 'GET' ? `${p.ctx.path}${p.ctx.search}` : '/admin')}`,
      );
    if (CHANGES.has(p.ctx.method) && !may.includes(admin.role)) throw forbiddenFor(admin.role);
    // The header counts the disputes waiting for an arbiter beside their section.
    const site = p.ctx.method === 'GET' ? withDisputeCount(await openDisputeCount(services.db)) : p.site;
    await handler({ ...p, site, admin });
  });
}

/** A console form, after its CSRF token is checked against the signed-in administrator's. */
export async function consoleForm(p: ConsolePage): Promise<URLSearchParams> {
  const form = await readForm(p.ctx);
  if (!sameToken(p.admin.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
  return form;
}

/** Writes a console change to the audit log as the signed-in administrator; `action` is the JSON operation's id. */
export async function auditConsole(
  p: ConsolePage,
  services: Services,
  entry: Omit<AuditEntry, 'actor'>,
): Promise<void> {
  await recordAudit(services.db, { ...entry, actor: p.admin.actor });
}

function consoleOptions(services: Services) {
  return {
    site: CONSOLE_SITE,
    signedIn: async (ctx: Context) => {
      const admin = await consoleAdmin(ctx, services);
      return admin && { email: admin.email, csrf: admin.csrf };
    },
  };
}

/** A 404 for a console page whose object does not exist. */
export function notInConsole(what: string): Problem {
  return problem('not_found', `No such ${what}.`);
}
