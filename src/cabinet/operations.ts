// The cabinet's operations, shared by the JSON routes (routes.ts) and the web pages (pages.ts) so both follow the
// same rules. A user sees only deals where they are the buyer or the approver (404 otherwise); only the buyer moves
// the escrow.
import { z } from 'zod';
import type { Services } from '../services.ts';
import { badRequest, notFound, Problem, unauthorized } from '../http/problem.ts';
import { countLoginAttempt, loginLimits, loginSubjects, loginSucceeded } from '../accounts/login-limits.ts';
import { EmailSchema, findLogin, personalOrganization, setPassword, type User } from '../accounts/users.ts';
import { MIN_PASSWORD_LENGTH, verifyPassword } from '../accounts/passwords.ts';
import { loadSnapshot } from '../deals/store.ts';
import { updateDeal } from '../deals/commands.ts';
import { PAYMENT_MOVES, type ApprovalRecord, type DealSnapshot, type PaymentRecord, type PaymentStatus } from '../deals/model.ts';
import { decideUpdate, movePaymentUpdate, type PaymentAction } from '../../workflows/deal-messages.ts';
import { consumeInvitation } from './invitations.ts';
import { createSession } from './sessions.ts';

export const PasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(200);

export const PAYMENT_ACTIONS = ['release', 'refund', 'dispute'] as const satisfies readonly PaymentAction[];
export type Session = { token: string; expires_at: string };

const isUuid = (value: string) => z.uuid().safeParse(value).success;

/** A new cabinet session for the e-mail and password, or 401. */
export async function signIn(services: Services, email: string, password: string): Promise<Session> {
  // Forms send what was typed; a stray space around the address is not a wrong address.
  const parsed = EmailSchema.safeParse(email.trim());
  const login = parsed.success ? await findLogin(services.db, parsed.data) : undefined;
  const valid = await verifyPassword(login?.password_hash ?? null, password);
  if (!login || !valid) throw unauthorized('The e-mail or the password is wrong.', 'Bearer realm="cabinet"');
  return createSession(services.db, login.id, services.config.CABINET_TOKEN_TTL_SECONDS);
}

/**
 * signIn behind the wrong-password limits (per account and address, per address, and the per-account ceiling; the
 * same windows as the SSO login form): 429 too_many_attempts with Retry-After once one is spent; the password is not
 * even checked then.
 */
export async function signInLimited(services: Services, email: string, password: string, ip: string): Promise<Session> {
  const { db } = services;
  const subjects = loginSubjects(email, ip);
  const { retryAfter } = await countLoginAttempt(db, subjects, loginLimits(services.config));
  if (retryAfter) {
    throw new Problem(429, 'too_many_attempts', `Too many wrong passwords; try again in ${Math.ceil(retryAfter / 60)} min.`, {
      headers: { 'Retry-After': String(retryAfter) },
    });
  }
  const session = await signIn(services, email, password);
  await loginSucceeded(db, subjects);
  return session;
}

/** Sets the password of the invited user (the caller validated it) and signs them in; 400 invalid_invitation. */
export async function acceptInvitation(services: Services, token: string, password: string): Promise<Session> {
  const userId = await consumeInvitation(services.db, services.masterKey, token);
  if (!userId) throw badRequest('invalid_invitation', 'The invitation link is not valid, was already used or has expired. Ask for a new one.');
  await setPassword(services.db, userId, password);
  return createSession(services.db, userId, services.config.CABINET_TOKEN_TTL_SECONDS);
}

export async function profile(services: Services, user: User) {
  const org = (await personalOrganization(services.db, user.id))!;
  return { svc_id: user.id, email: user.email, name: user.name, org: { id: org.id, name: org.name } };
}

/** Deals the user may see: as the buyer, or as the approver of one of its approvals. */
export async function visibleDealIds(services: Services, user: User): Promise<string[]> {
  const result = await services.db.query<{ id: string }>(
    `SELECT id FROM deals WHERE lower(buyer_email) = lower($1)
     UNION SELECT deal_id FROM deal_approvals WHERE lower(approver) = lower($1)`,
    [user.email],
  );
  return result.rows.map((row) => row.id);
}

/** One deal the user may see, or 404. */
export async function userDeal(services: Services, user: User, dealId: string): Promise<DealSnapshot> {
  const ids = isUuid(dealId) ? await visibleDealIds(services, user) : [];
  if (!ids.includes(dealId)) throw notFound('No such deal.');
  return (await loadSnapshot(services.db, dealId))!;
}

/** The user's deals, newest first. */
export async function userDeals(services: Services, user: User): Promise<DealSnapshot[]> {
  const ids = await visibleDealIds(services, user);
  const snapshots = (await Promise.all(ids.map((id) => loadSnapshot(services.db, id)))) as DealSnapshot[];
  return snapshots.sort((a, b) => b.deal.created_at.localeCompare(a.deal.created_at));
}

/** Approvals addressed to the user, newest first, each with its deal. */
export async function userApprovals(services: Services, user: User): Promise<{ approval: ApprovalRecord; snapshot: DealSnapshot }[]> {
  const result = await services.db.query<{ id: string; deal_id: string }>(
    `SELECT id, deal_id FROM deal_approvals WHERE lower(approver) = lower($1) ORDER BY created_at DESC, id DESC LIMIT 200`,
    [user.email],
  );
  const items = [];
  for (const row of result.rows) {
    const snapshot = (await loadSnapshot(services.db, row.deal_id))!;
    items.push({ approval: snapshot.approvals.find((approval) => approval.id === row.id)!, snapshot });
  }
  return items;
}

/** The deal of an approval addressed to the user, or 404. */
export async function approvalSnapshot(services: Services, user: User, approvalId: string): Promise<DealSnapshot> {
  const found = isUuid(approvalId)
    ? await services.db.query<{ deal_id: string }>('SELECT deal_id FROM deal_approvals WHERE id = $1 AND lower(approver) = lower($2)', [
        approvalId,
        user.email,
      ])
    : { rows: [] };
  if (!found.rows[0]) throw notFound('No such approval.');
  return (await loadSnapshot(services.db, found.rows[0].deal_id))!;
}

/** The approver's decision, through the deal's workflow; 404 for anyone else's approval. */
export async function decideApproval(
  services: Services,
  user: User,
  approvalId: string,
  decision: 'approve' | 'reject',
  comment: string,
): Promise<ApprovalRecord> {
  const snapshot = await approvalSnapshot(services, user, approvalId);
  return updateDeal(services, snapshot, decideUpdate, { approval_id: approvalId, decision, comment, actor: user.email });
}

/** A document of one of the user's deals, with its bytes; 404 otherwise. */
export async function userDocument(services: Services, user: User, documentId: string) {
  const found = isUuid(documentId)
    ? await services.db.query<{ deal_id: string; name: string; content_type: string; storage_key: string }>(
        'SELECT deal_id, name, content_type, storage_key FROM deal_documents WHERE id = $1',
        [documentId],
      )
    : { rows: [] };
  const document = found.rows[0];
  if (!document || !(await visibleDealIds(services, user)).includes(document.deal_id)) throw notFound('No such document.');
  return { name: document.name, content_type: document.content_type, body: await services.documents.get(document.storage_key) };
}

export function isBuyer(user: User, snapshot: DealSnapshot): boolean {
  return snapshot.deal.buyer_email.toLowerCase() === user.email.toLowerCase();
}

/** The buyer's escrow move, through the deal's workflow; 404 for anyone but the buyer. */
export async function moveEscrow(services: Services, user: User, dealId: string, action: PaymentAction): Promise<PaymentRecord> {
  const snapshot = await userDeal(services, user, dealId);
  if (!isBuyer(user, snapshot)) throw notFound('No such deal.');
  return updateDeal(services, snapshot, movePaymentUpdate, { action, actor: 'buyer' });
}

const ACTION_TARGET: Record<PaymentAction, PaymentStatus> = { release: 'released', refund: 'refunded', dispute: 'disputed' };

/** The moves the buyer may make now on the latest payment: the workflow's rules, so pages offer only what will work. */
export function buyerEscrowActions(user: User, snapshot: DealSnapshot): PaymentAction[] {
  const payment = snapshot.payments.at(-1);
  if (!payment || !isBuyer(user, snapshot) || payment.status === 'disputed') return [];
  return PAYMENT_ACTIONS.filter(
    (action) => PAYMENT_MOVES[payment.status].includes(ACTION_TARGET[action]) && !(action === 'release' && payment.status === 'pending'),
  );
}
