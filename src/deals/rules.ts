// What each party may do to a deal now: pure functions of the deal's records, beside dealStatus. The workflow's
// validators refuse with them, the API checks them before it asks the workflow, and the pages offer only what they
// allow, so the three can never disagree.
import { dealStatus, isFinal, PAYMENT_MOVES, type DealSnapshot, type PaymentRecord, type PaymentStatus } from './model.ts';

/** A party's place in a deal. An administrator deciding a dispute acts as the arbiter. */
export type DealRole = 'marketplace' | 'widget' | 'buyer' | 'seller' | 'approver' | 'administrator';

export const DEAL_VERBS = [
  'add_document',
  'start_approval',
  'decide_approval',
  'start_escrow',
  'release',
  'refund',
  'dispute',
  'resolve',
  'message',
  'cancel',
] as const;
export type DealVerb = (typeof DEAL_VERBS)[number];

/** The verbs each role has at all; `check` says whether the deal allows one now. */
const ROLE_VERBS: Record<DealRole, readonly DealVerb[]> = {
  marketplace: ['add_document', 'start_approval', 'start_escrow', 'message', 'cancel'],
  widget: ['add_document', 'start_approval', 'start_escrow'],
  buyer: ['decide_approval', 'release', 'refund', 'dispute', 'message'],
  seller: ['message'],
  approver: ['decide_approval'],
  administrator: ['release', 'refund', 'dispute', 'resolve', 'message', 'cancel'],
};

/** Why a verb is refused: `code` is the problem code the API answers with (400 unless the catalog says otherwise). */
export interface Refusal {
  code:
    | 'deal_closed'
    | 'approval_pending'
    | 'no_documents'
    | 'approval_not_allowed'
    | 'approval_not_pending'
    | 'deal_not_approved'
    | 'invalid_payment_state'
    | 'deal_not_cancellable'
    | 'no_open_dispute';
  message: string;
}

export type PaymentAction = 'release' | 'refund' | 'dispute';
export const ACTION_TARGET: Record<PaymentAction, PaymentStatus> = { release: 'released', refund: 'refunded', dispute: 'disputed' };

const pendingApproval = (snapshot: DealSnapshot) => snapshot.approvals.find((approval) => approval.status === 'pending');

/** Why the latest payment cannot make this move for this role, or undefined when it can. */
export function paymentMoveRefusal(payment: PaymentRecord | undefined, action: PaymentAction, role: DealRole): Refusal | undefined {
  if (!payment) return { code: 'invalid_payment_state', message: 'The deal has no payment.' };
  const target = ACTION_TARGET[action];
  // A dispute is for the arbiter to settle; a pending payment is only cancelled (refunded), never released.
  const allowed =
    PAYMENT_MOVES[payment.status].includes(target) &&
    (payment.status !== 'disputed' || role === 'administrator') &&
    !(action === 'release' && payment.status === 'pending');
  if (allowed) return undefined;
  const arbiterOnly = payment.status === 'disputed' ? ' except by the arbiter' : '';
  return { code: 'invalid_payment_state', message: `A ${payment.status} payment cannot be moved to ${target}${arbiterOnly}.` };
}

/** Why the deal refuses the verb now, or undefined when it allows it. Does not look at who asks (see allowedActions). */
export function refusal(snapshot: DealSnapshot, verb: DealVerb, role: DealRole): Refusal | undefined {
  const status = dealStatus(snapshot);
  if (isFinal(status)) return { code: 'deal_closed', message: `The deal is ${status}; it changes no more.` };
  switch (verb) {
    case 'add_document':
      if (pendingApproval(snapshot)) {
        return { code: 'approval_pending', message: 'An approval is pending: the documents cannot change until the buyer decides.' };
      }
      return undefined;
    case 'start_approval':
      if (pendingApproval(snapshot)) return undefined; // answered with the pending one
      if (snapshot.documents.length === 0) return { code: 'no_documents', message: 'Attach at least one document before starting the approval.' };
      if (!['docs', 'rejected'].includes(status)) return { code: 'approval_not_allowed', message: `An approval cannot start while the deal is ${status}.` };
      return undefined;
    case 'decide_approval':
      return pendingApproval(snapshot) ? undefined : { code: 'approval_not_pending', message: 'No approval is pending.' };
    case 'start_escrow':
      if (snapshot.payments.some((payment) => payment.status === 'pending')) return undefined; // answered with the pending one
      return status === 'approved' ? undefined : { code: 'deal_not_approved', message: `Escrow starts only for an approved deal; this one is ${status}.` };
    case 'release':
    case 'refund':
    case 'dispute':
      return paymentMoveRefusal(snapshot.payments.at(-1), verb, role);
    case 'resolve':
      return snapshot.payments.at(-1)?.status === 'disputed'
        ? undefined
        : { code: 'invalid_payment_state', message: 'Only a disputed payment can be resolved.' };
    case 'message':
      return snapshot.dispute?.status === 'open' ? undefined : { code: 'no_open_dispute', message: 'The deal has no open dispute.' };
    case 'cancel':
      return snapshot.payments.some((payment) => payment.status !== 'pending' && payment.status !== 'refunded')
        ? { code: 'deal_not_cancellable', message: `The money is ${status === 'escrow_hold' ? 'held' : 'moving'}; a deal is cancelled only before that. Refund it instead.` }
        : undefined;
  }
}

/** The verbs this role may use on the deal now: what pages offer and the API's deal state lists. */
export function allowedActions(snapshot: DealSnapshot, role: DealRole): DealVerb[] {
  return ROLE_VERBS[role].filter((verb) => !refusal(snapshot, verb, role));
}

/** Whether the role has the verb at all (an action outside its role is answered as if the deal were not there). */
export function roleMay(role: DealRole, verb: DealVerb): boolean {
  return ROLE_VERBS[role].includes(verb);
}
