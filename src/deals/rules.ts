// What each party may do to a deal now: pure functions of the deal's records, beside dealStatus. Who checks, in
// order (docs/architecture.md#verbs-and-rules): the deal service (src/deals/service.ts) answers 404 for a deal that is
// not the caller's or a verb outside the caller's role (roleMay), and decides nothing else; the deal's workflow, its
// only writer, then applies `refusal` (and `moveRefusal` for a payment move) to the deal as it is at the moment of the
// change, in the update's validator and again in its handler under the deal's lock. The pages and the API's
// allowed_actions ask the same functions of the deal they read, only to choose what to offer: what a caller read
// never decides a change.
import {
  dealStatus,
  isFinal,
  PAYMENT_MOVES,
  type DealSnapshot,
  type PaymentRecord,
  type PaymentStatus,
} from './model.ts';

/**
 * A party's place in a deal. An administrator deciding a dispute (POST /admin/deals/{id}/escrow/resolve) acts as the
 * arbiter: the only role that moves a disputed payment, and only with a reason. Any other move an administrator makes
 * (plain release, refund, dispute, cancel) is the administrator's, whatever the payment was when they looked.
 */
export type DealRole = 'marketplace' | 'widget' | 'buyer' | 'seller' | 'approver' | 'administrator' | 'arbiter';

export const DEAL_VERBS = [
  'add_document',
  'start_approval',
  'decide_approval',
  'start_escrow',
  'pay',
  'release',
  'refund',
  'dispute',
  'resolve',
  'message',
  'cancel',
  'ship',
  'deliver',
  'partial_refund',
  'payout_destination',
] as const;
export type DealVerb = (typeof DEAL_VERBS)[number];

/** The verbs each role has at all; `refusal` says whether the deal allows one now. */
const ROLE_VERBS: Record<DealRole, readonly DealVerb[]> = {
  // The marketplace acts for the seller: it marks shipment and delivery, agrees a partial refund, and may say where to
  // pay the seller for one deal.
  marketplace: [
    'add_document',
    'start_approval',
    'start_escrow',
    'message',
    'cancel',
    'ship',
    'deliver',
    'partial_refund',
    'payout_destination',
  ],
  widget: ['add_document', 'start_approval', 'start_escrow'],
  // The buyer's `pay` is escrow for the full amount from the cabinet: start_escrow as the marketplace's API does it.
  buyer: ['decide_approval', 'pay', 'release', 'refund', 'dispute', 'message'],
  seller: ['message', 'ship'],
  approver: ['decide_approval'],
  administrator: ['release', 'refund', 'dispute', 'resolve', 'message', 'cancel'],
  // The arbiter's release or refund is the decision of the dispute (verb `resolve` is how the API and pages name it).
  arbiter: ['release', 'refund', 'resolve', 'message'],
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
    | 'no_open_dispute'
    | 'dispute_open'
    | 'reason_required'
    | 'invalid_delivery_state'
    | 'shipped_dispute_instead';
  message: string;
}

export type PaymentAction = 'release' | 'refund' | 'dispute';
export const ACTION_TARGET: Record<PaymentAction, PaymentStatus> = {
  release: 'released',
  refund: 'refunded',
  dispute: 'disputed',
};

const pendingApproval = (snapshot: DealSnapshot) =>
  snapshot.approvals.find((approval) => approval.status === 'pending');

const DISPUTE_OPEN: Refusal = {
  code: 'dispute_open',
  message:
    'The payment is disputed: only the arbiter moves it now, by deciding the dispute with a reason (POST /admin/deals/{id}/escrow/resolve).',
};

/** Why the latest payment cannot make this move for this role, or undefined when it can. */
export function paymentMoveRefusal(
  payment: PaymentRecord | undefined,
  action: PaymentAction,
  role: DealRole,
): Refusal | undefined {
  if (!payment) return { code: 'invalid_payment_state', message: 'The deal has no payment.' };
  const target = ACTION_TARGET[action];
  // A disputed payment is the arbiter's to release or refund; every other move of it, by anyone, waits for that.
  if (payment.status === 'disputed') return role === 'arbiter' && action !== 'dispute' ? undefined : DISPUTE_OPEN;
  if (role === 'arbiter')
    return {
      code: 'invalid_payment_state',
      message: `Only a disputed payment is decided by the arbiter; this one is ${payment.status}.`,
    };
  // A pending payment is only cancelled (refunded), never released.
  const allowed =
    PAYMENT_MOVES[payment.status].includes(target) && !(action === 'release' && payment.status === 'pending');
  if (allowed) return undefined;
  return { code: 'invalid_payment_state', message: `A ${payment.status} payment cannot be moved to ${target}.` };
}

/** A move of the deal's latest payment as asked: by whom, and why. */
export interface PaymentMoveRequest {
  action: PaymentAction;
  role: DealRole;
  reason?: string;
}

/**
 * Why the deal refuses this move of its latest payment now, or undefined when it takes it: the rules of `refusal`,
 * plus the reasons they ask for (a dispute is opened, and decided by the arbiter, in words both sides read). The
 * workflow applies it to the deal as it is when the move happens; the pages ask `refusal` of the deal they read.
 */
export function moveRefusal(snapshot: DealSnapshot, { action, role, reason }: PaymentMoveRequest): Refusal | undefined {
  const refused = refusal(snapshot, action, role);
  if (refused) return refused;
  if ((action === 'dispute' || role === 'arbiter') && !reason?.trim()) {
    return {
      code: 'reason_required',
      message:
        action === 'dispute'
          ? 'Say why you open the dispute.'
          : 'Write the reason for the decision; both sides will read it.',
    };
  }
  return undefined;
}

/** Why the deal refuses the verb now for this role, or undefined when it allows it. Whether the role has the verb at all is roleMay. */
export function refusal(snapshot: DealSnapshot, verb: DealVerb, role: DealRole): Refusal | undefined {
  const status = dealStatus(snapshot);
  if (isFinal(status)) return { code: 'deal_closed', message: `The deal is ${status}; it changes no more.` };
  switch (verb) {
    case 'add_document':
      if (pendingApproval(snapshot)) {
        return {
          code: 'approval_pending',
          message: 'An approval is pending: the documents cannot change until the buyer decides.',
        };
      }
      return undefined;
    case 'start_approval':
      if (pendingApproval(snapshot)) return undefined; // answered with the pending one
      if (snapshot.documents.length === 0)
        return { code: 'no_documents', message: 'Attach at least one document before starting the approval.' };
      if (!['docs', 'rejected'].includes(status))
        return { code: 'approval_not_allowed', message: `An approval cannot start while the deal is ${status}.` };
      return undefined;
    case 'decide_approval':
      return pendingApproval(snapshot)
        ? undefined
        : { code: 'approval_not_pending', message: 'No approval is pending.' };
    case 'start_escrow':
      if (snapshot.payments.some((payment) => payment.status === 'pending')) return undefined; // answered with the pending one
      return status === 'approved'
        ? undefined
        : { code: 'deal_not_approved', message: `Escrow starts only for an approved deal; this one is ${status}.` };
    case 'pay':
      // A live payment still pending is answered again (its payment page), never made twice.
      if (snapshot.payments.some((payment) => payment.status === 'pending')) return undefined;
      if (status === 'approved') return undefined;
      if (status === 'escrow_hold' || status === 'disputed') {
        return { code: 'invalid_payment_state', message: 'The money is already held: there is nothing to pay.' };
      }
      return {
        code: 'deal_not_approved',
        message: `The buyer pays once the terms are approved; this deal is ${status}.`,
      };
    case 'release':
    case 'refund':
    case 'dispute': {
      const refused = paymentMoveRefusal(snapshot.payments.at(-1), verb, role);
      if (refused) return refused;
      // Once the goods are on their way the buyer cannot take the money back alone: a dispute stops the release.
      if (verb === 'refund' && role === 'buyer' && snapshot.delivery) {
        return {
          code: 'shipped_dispute_instead',
          message:
            'The order is shipped: the buyer can no longer refund alone. Open a dispute instead, and the arbiter decides.',
        };
      }
      return undefined;
    }
    case 'ship':
    case 'deliver': {
      const payment = snapshot.payments.at(-1);
      if (payment?.status !== 'hold' && payment?.status !== 'disputed') {
        return { code: 'invalid_delivery_state', message: 'Shipment and delivery are marked while the money is held.' };
      }
      if (verb === 'ship' && snapshot.delivery)
        return { code: 'invalid_delivery_state', message: `The order is already ${snapshot.delivery.status}.` };
      if (verb === 'deliver' && snapshot.delivery?.status === 'delivered')
        return { code: 'invalid_delivery_state', message: 'The order is already delivered.' };
      return undefined;
    }
    case 'partial_refund': {
      const payment = snapshot.payments.at(-1);
      if (payment?.status === 'disputed') return DISPUTE_OPEN;
      if (payment?.status !== 'hold')
        return { code: 'invalid_payment_state', message: 'Part of the money is refunded while it is held.' };
      if (payment.provider === 'yookassa') {
        return {
          code: 'invalid_payment_state',
          message: 'A two-stage payment is refunded whole or not at all; deals on YooKassa Safe Deal refund in parts.',
        };
      }
      return undefined;
    }
    case 'payout_destination':
      return undefined;
    case 'resolve':
      return snapshot.payments.at(-1)?.status === 'disputed'
        ? undefined
        : { code: 'invalid_payment_state', message: 'Only a disputed payment can be resolved.' };
    case 'message':
      return snapshot.dispute?.status === 'open'
        ? undefined
        : { code: 'no_open_dispute', message: 'The deal has no open dispute.' };
    case 'cancel':
      // Cancelling would return the disputed money without the arbiter.
      if (snapshot.payments.at(-1)?.status === 'disputed') return DISPUTE_OPEN;
      return snapshot.payments.some((payment) => payment.status !== 'pending' && payment.status !== 'refunded')
        ? {
            code: 'deal_not_cancellable',
            message: `The money is ${status === 'escrow_hold' ? 'held' : 'moving'}; a deal is cancelled only before that. Refund it instead.`,
          }
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
