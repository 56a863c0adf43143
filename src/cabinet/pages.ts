// The cabinet's web pages for buyers: server-rendered HTML over the same operations as the JSON routes
// (operations.ts), working with JavaScript off. Forms post urlencoded bodies with a CSRF token and answer 303
// (post/redirect/get); errors become pages in the reader's language, never JSON.
import { readFileSync } from 'node:fs';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { Problem } from '../http/problem.ts';
import { MIN_PASSWORD_LENGTH } from '../accounts/passwords.ts';
import type { Translate } from './i18n.ts';
import { STYLESHEET_PATH } from './html.ts';
import { COMMENT_MAX, dealBody, homeBody, inviteBody, inviteInvalidBody, signInBody } from './page-views.ts';
import { invitationUsable } from './invitations.ts';
import {
  PAYMENT_ACTIONS,
  PasswordSchema,
  acceptInvitation,
  approvalSnapshot,
  buyerEscrowActions,
  decideApproval,
  moveEscrow,
  signInLimited,
  userApprovals,
  userDeal,
  userDeals,
  type Session,
} from './operations.ts';
import { endPageSession, pageUser, preSessionCsrf, sameToken, startPageSession, validPreSessionCsrf } from './web-session.ts';
import { csrfFailed, page, problemWords, readForm, redirect, safeNext, send, signedInOrRedirect, type Page, type SignedIn } from './page-kit.ts';

const STYLESHEET = readFileSync(new URL('./cabinet.css', import.meta.url), 'utf8');
const DONE = { approve: 'approved', reject: 'rejected', release: 'released', refund: 'refunded', dispute: 'disputed' } as const;

export function cabinetPages(api: Api, services: Services): void {
  const router = api.router;
  const base = () => services.config.BASE_URL; // read per request: tests and proxies set it after start

  router.get(STYLESHEET_PATH, (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = STYLESHEET;
  });

  router.get(
    '/cabinet/sign-in',
    page(services, async (p) => {
      const next = safeNext(p.ctx.query.next, base());
      if (await pageUser(p.ctx, services)) return redirect(p.ctx, next);
      const notice = p.ctx.query.signed_out ? p.t('signedOut') : undefined;
      const csrf = preSessionCsrf(p.ctx, services);
      send(p, 200, p.t('signInTitle'), signInBody(p, { email: '', next, csrf, notice }));
    }),
  );

  router.post(
    '/cabinet/sign-in',
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const next = safeNext(form.get('next'), base());
      const email = (form.get('email') ?? '').slice(0, 320);
      const password = form.get('password') ?? '';
      let session: Session;
      try {
        if (password.length > 200) throw new Problem(401, 'unauthorized', 'Wrong credentials.');
        session = await signInLimited(services, email, password, p.ctx.ip);
      } catch (error) {
        if (!(error instanceof Problem) || (error.status !== 401 && error.status !== 429)) throw error;
        const limited = error.status === 429;
        if (limited) p.ctx.set('Retry-After', error.headers['Retry-After']!);
        const minutes = Math.ceil(Number(error.headers['Retry-After']) / 60);
        const message = limited ? p.t('tooManyAttempts', { minutes }) : p.t('wrongCredentials');
        const body = signInBody(p, { email, next, csrf: preSessionCsrf(p.ctx, services), error: message });
        return send(p, error.status, p.t('signInTitle'), body, '/cabinet/sign-in');
      }
      await startPageSession(p.ctx, services, session);
      redirect(p.ctx, next);
    }),
  );

  router.get(
    '/cabinet/invite',
    page(services, async (p) => {
      const token = typeof p.ctx.query.token === 'string' ? p.ctx.query.token : '';
      if (!(await invitationUsable(services.db, services.masterKey, token))) return invalidInvitation(p);
      send(p, 200, p.t('inviteTitle'), inviteBody(p, { token, csrf: preSessionCsrf(p.ctx, services) }));
    }),
  );

  router.post(
    '/cabinet/invite',
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const token = form.get('token') ?? '';
      if (!(await invitationUsable(services.db, services.masterKey, token))) return invalidInvitation(p);
      const password = form.get('password') ?? '';
      const problem = passwordProblem(p.t, password, form.get('password_confirm') ?? '');
      if (problem) {
        const body = inviteBody(p, { token, csrf: preSessionCsrf(p.ctx, services), error: problem });
        return send(p, 400, p.t('inviteTitle'), body, `/cabinet/invite?token=${encodeURIComponent(token)}`);
      }
      let session: Session;
      try {
        session = await acceptInvitation(services, token, password);
      } catch (error) {
        if (error instanceof Problem && error.code === 'invalid_invitation') return invalidInvitation(p); // used meanwhile
        throw error;
      }
      await startPageSession(p.ctx, services, session);
      redirect(p.ctx, '/cabinet');
    }),
  );

  router.post(
    '/cabinet/sign-out',
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      const signed = await pageUser(p.ctx, services);
      if (signed && !sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
      await endPageSession(p.ctx, services);
      redirect(p.ctx, '/cabinet/sign-in?signed_out=1');
    }),
  );

  router.get(
    '/cabinet',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const [approvals, deals] = await Promise.all([userApprovals(services, signed.user), userDeals(services, signed.user)]);
      // Pending first; otherwise newest first as the operation returns them (sort is stable).
      approvals.sort((a, b) => Number(b.approval.status === 'pending') - Number(a.approval.status === 'pending'));
      send(p, 200, p.t('homeTitle'), homeBody(p, { approvals, deals, csrf: signed.csrf }), undefined, signed);
    }),
  );

  router.get(
    '/cabinet/view/deals/:id',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const done = Object.values(DONE).find((value) => value === p.ctx.query.done);
      await dealPage(p, services, signed, p.ctx.params.id!, 200, { notice: done && p.t(`done_${done}`) });
    }),
  );

  for (const decision of ['approve', 'reject'] as const) {
    router.post(
      `/cabinet/view/approvals/:id/${decision}`,
      page(services, async (p) => {
        const form = await readForm(p.ctx);
        const signed = await signedInOrRedirect(p, services, '/cabinet');
        if (!signed) return;
        if (!sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
        const dealId = (await approvalSnapshot(services, signed.user, p.ctx.params.id!)).deal.id;
        const comment = decision === 'reject' ? (form.get('comment') ?? '').trim() : '';
        if (comment.length > COMMENT_MAX) {
          return dealPage(p, services, signed, dealId, 400, { error: p.t('commentTooLong', { max: COMMENT_MAX }) });
        }
        await orDealPage(p, services, signed, dealId, () => decideApproval(services, signed.user, p.ctx.params.id!, decision, comment), DONE[decision]);
      }),
    );
  }

  for (const action of PAYMENT_ACTIONS) {
    router.post(
      `/cabinet/view/deals/:id/escrow/${action}`,
      page(services, async (p) => {
        const form = await readForm(p.ctx);
        const dealId = p.ctx.params.id!;
        const signed = await signedInOrRedirect(p, services, `/cabinet/view/deals/${encodeURIComponent(dealId)}`);
        if (!signed) return;
        if (!sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
        await orDealPage(p, services, signed, dealId, () => moveEscrow(services, signed.user, dealId, action), DONE[action]);
      }),
    );
  }
}

/** Runs a deal change; on success 303 to the deal page with a notice, on a refusal the deal page with its words. */
async function orDealPage(p: Page, services: Services, signed: SignedIn, dealId: string, change: () => Promise<unknown>, done: string) {
  try {
    await change();
  } catch (error) {
    if (!(error instanceof Problem) || error.status === 404) throw error;
    for (const [name, value] of Object.entries(error.headers)) p.ctx.set(name, value);
    return dealPage(p, services, signed, dealId, error.status, { error: problemWords(p.t, error) });
  }
  redirect(p.ctx, `/cabinet/view/deals/${dealId}?done=${done}`);
}

async function dealPage(p: Page, services: Services, signed: SignedIn, dealId: string, status: number, words: { error?: string; notice?: string }) {
  const snapshot = await userDeal(services, signed.user, dealId);
  const actions = buyerEscrowActions(signed.user, snapshot);
  const body = dealBody(p, { snapshot, actions, csrf: signed.csrf, userEmail: signed.user.email, ...words });
  send(p, status, snapshot.deal.title.trim() || p.t('untitled'), body, `/cabinet/view/deals/${snapshot.deal.id}`, signed);
}

function invalidInvitation(p: Page): void {
  send(p, 400, p.t('inviteInvalidTitle'), inviteInvalidBody(p), p.ctx.method === 'GET' ? undefined : '/cabinet/sign-in');
}

function passwordProblem(t: Translate, password: string, confirmation: string): string | undefined {
  if (password !== confirmation) return t('passwordsDiffer');
  const parsed = PasswordSchema.safeParse(password);
  if (parsed.success) return undefined;
  return parsed.error.issues[0]?.code === 'too_big' ? t('passwordTooLong', { max: 200 }) : t('passwordTooShort', { min: MIN_PASSWORD_LENGTH });
}
