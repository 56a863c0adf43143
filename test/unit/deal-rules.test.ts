// The pure rules of src/deals/rules.ts, without a server: what each role may do to a deal in each status, and what it
// is answered when it may not. The workflow applies exactly these to the deal as it is when a change happens; the API
// (its allowed_actions, its refusals) and the pages use them too, so this table is what every caller sees.
import { describe, expect, it } from 'vitest';
import {
  DEAL_STATUSES,
  PAYMENT_STATUSES,
  dealStatus,
  type DealSnapshot,
  type DealStatus,
  type PaymentStatus,
} from '../../src/deals/model.ts';
import {
  DEAL_VERBS,
  allowedActions,
  moveRefusal,
  paymentMoveRefusal,
  refusal,
  roleMay,
  type DealRole,
  type DealVerb,
  type PaymentAction,
  type Refusal,
} from '../../src/deals/rules.ts';
import { DEAL_IN, approvedWith, delivery, dispute, payment } from './snapshots.ts';

// rules.ts exports no list of roles: this object must name every DealRole (tsc refuses it otherwise), so a new role
// fails `npm test` here, then fails the tables below until each of them has its column.
const ROLES = Object.keys({
  marketplace: true,
  widget: true,
  buyer: true,
  seller: true,
  approver: true,
  administrator: true,
  arbiter: true,
} satisfies Record<DealRole, true>) as DealRole[];

/**
 * What a cell of the tables says, short so that a row of seven roles fits the page: allowed (`ok`), or the problem
 * code the refusal answers with. `.` is a verb the role does not have at all: the API answers 404 not_found, as if
 * the deal were not there (roleMay), whatever the deal's status.
 */
const CELLS = {
  ok: 'allowed',
  '.': 'not_found',
  closed: 'deal_closed',
  appr_pending: 'approval_pending',
  no_documents: 'no_documents',
  appr_not_now: 'approval_not_allowed',
  no_approval: 'approval_not_pending',
  not_approved: 'deal_not_approved',
  payment: 'invalid_payment_state',
  not_cancel: 'deal_not_cancellable',
  no_dispute: 'no_open_dispute',
  dispute_open: 'dispute_open',
  delivery: 'invalid_delivery_state',
  shipped: 'shipped_dispute_instead',
} as const satisfies Record<string, Outcome>;
type Outcome = Refusal['code'] | 'allowed' | 'not_found';

interface Section {
  name: string;
  /** verb → role → outcome */
  rows: Map<string, Record<string, Outcome>>;
}

/**
 * Reads a table: a header line of roles, then sections, each a line with its name and one indented line per verb
 * with a cell per role. Anything malformed throws, so a typo in a table fails its test rather than testing less.
 */
function table(text: string): { roles: string[]; sections: Section[] } {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const roles = lines[0].trim().split(/\s+/);
  const sections: Section[] = [];
  for (const line of lines.slice(1)) {
    if (!line.startsWith(' ')) {
      sections.push({ name: line.trim(), rows: new Map() });
      continue;
    }
    const [verb, ...cells] = line.trim().split(/\s+/);
    const section = sections.at(-1);
    if (!section || !verb || cells.length !== roles.length || section.rows.has(verb))
      throw new Error(`Malformed table line: ${JSON.stringify(line)}`);
    const row: Record<string, Outcome> = {};
    cells.forEach((cell, index) => {
      if (!Object.hasOwn(CELLS, cell))
        throw new Error(`Unknown cell ${JSON.stringify(cell)} in ${JSON.stringify(line)}`);
      row[roles[index]] = CELLS[cell as keyof typeof CELLS];
    });
    section.rows.set(verb, row);
  }
  return { roles, sections };
}

/** What the deal answers the role's verb now: the outcome the API and the pages give. */
function outcome(snapshot: DealSnapshot, verb: DealVerb, role: DealRole): Outcome {
  if (!roleMay(role, verb)) return 'not_found';
  return refusal(snapshot, verb, role)?.code ?? 'allowed';
}

// One deal in each status (DEAL_IN, test/unit/snapshots.ts), each role, each verb.
const BY_STATUS = table(`
                      marketplace  widget       buyer        seller       approver     administrator arbiter
created
  add_document        ok           ok           .            .            .            .             .
  start_approval      no_documents no_documents .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            not_approved .            .            .             .
  release             .            .            payment      .            .            payment       payment
  refund              .            .            payment      .            .            payment       payment
  dispute             .            .            payment      .            .            payment       .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              ok           .            .            .            .            ok            .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
docs
  add_document        ok           ok           .            .            .            .             .
  start_approval      ok           ok           .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            not_approved .            .            .             .
  release             .            .            payment      .            .            payment       payment
  refund              .            .            payment      .            .            payment       payment
  dispute             .            .            payment      .            .            payment       .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              ok           .            .            .            .            ok            .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
approval
  add_document        appr_pending appr_pending .            .            .            .             .
  start_approval      ok           ok           .            .            .            .             .
  decide_approval     .            .            ok           .            ok           .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            not_approved .            .            .             .
  release             .            .            payment      .            .            payment       payment
  refund              .            .            payment      .            .            payment       payment
  dispute             .            .            payment      .            .            payment       .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              ok           .            .            .            .            ok            .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
approved
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        ok           ok           .            .            .            .             .
  pay                 .            .            ok           .            .            .             .
  release             .            .            payment      .            .            payment       payment
  refund              .            .            payment      .            .            payment       payment
  dispute             .            .            payment      .            .            payment       .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              ok           .            .            .            .            ok            .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
rejected
  add_document        ok           ok           .            .            .            .             .
  start_approval      ok           ok           .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            not_approved .            .            .             .
  release             .            .            payment      .            .            payment       payment
  refund              .            .            payment      .            .            payment       payment
  dispute             .            .            payment      .            .            payment       .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              ok           .            .            .            .            ok            .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
escrow_hold
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            payment      .            .            .             .
  release             .            .            ok           .            .            ok            payment
  refund              .            .            ok           .            .            ok            payment
  dispute             .            .            ok           .            .            ok            .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              not_cancel   .            .            .            .            not_cancel    .
  ship                ok           .            .            ok           .            .             .
  deliver             ok           .            .            .            .            .             .
  partial_refund      ok           .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
paid
  add_document        closed       closed       .            .            .            .             .
  start_approval      closed       closed       .            .            .            .             .
  decide_approval     .            .            closed       .            closed       .             .
  start_escrow        closed       closed       .            .            .            .             .
  pay                 .            .            closed       .            .            .             .
  release             .            .            closed       .            .            closed        closed
  refund              .            .            closed       .            .            closed        closed
  dispute             .            .            closed       .            .            closed        .
  resolve             .            .            .            .            .            closed        closed
  message             closed       .            closed       closed       .            closed        closed
  cancel              closed       .            .            .            .            closed        .
  ship                closed       .            .            closed       .            .             .
  deliver             closed       .            .            .            .            .             .
  partial_refund      closed       .            .            .            .            .             .
  payout_destination  closed       .            .            .            .            .             .
refunded
  add_document        closed       closed       .            .            .            .             .
  start_approval      closed       closed       .            .            .            .             .
  decide_approval     .            .            closed       .            closed       .             .
  start_escrow        closed       closed       .            .            .            .             .
  pay                 .            .            closed       .            .            .             .
  release             .            .            closed       .            .            closed        closed
  refund              .            .            closed       .            .            closed        closed
  dispute             .            .            closed       .            .            closed        .
  resolve             .            .            .            .            .            closed        closed
  message             closed       .            closed       closed       .            closed        closed
  cancel              closed       .            .            .            .            closed        .
  ship                closed       .            .            closed       .            .             .
  deliver             closed       .            .            .            .            .             .
  partial_refund      closed       .            .            .            .            .             .
  payout_destination  closed       .            .            .            .            .             .
disputed
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            payment      .            .            .             .
  release             .            .            dispute_open .            .            dispute_open  ok
  refund              .            .            dispute_open .            .            dispute_open  ok
  dispute             .            .            dispute_open .            .            dispute_open  .
  resolve             .            .            .            .            .            ok            ok
  message             ok           .            ok           ok           .            ok            ok
  cancel              dispute_open .            .            .            .            dispute_open  .
  ship                ok           .            .            ok           .            .             .
  deliver             ok           .            .            .            .            .             .
  partial_refund      dispute_open .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
cancelled
  add_document        closed       closed       .            .            .            .             .
  start_approval      closed       closed       .            .            .            .             .
  decide_approval     .            .            closed       .            closed       .             .
  start_escrow        closed       closed       .            .            .            .             .
  pay                 .            .            closed       .            .            .             .
  release             .            .            closed       .            .            closed        closed
  refund              .            .            closed       .            .            closed        closed
  dispute             .            .            closed       .            .            closed        .
  resolve             .            .            .            .            .            closed        closed
  message             closed       .            closed       closed       .            closed        closed
  cancel              closed       .            .            .            .            closed        .
  ship                closed       .            .            closed       .            .             .
  deliver             closed       .            .            .            .            .             .
  partial_refund      closed       .            .            .            .            .             .
  payout_destination  closed       .            .            .            .            .             .
`);

/** The same statuses reached otherwise, where the records beside the status change an answer. */
const OTHER_WAYS: Record<string, { status: DealStatus; deal: DealSnapshot }> = {
  // The buyer opened the payment page and has not paid: their pay shows that page again; a pending payment is only
  // cancelled (refund), never released or disputed.
  approved_payment_pending: { status: 'approved', deal: approvedWith([payment('pending')]) },
  // Once the goods are on their way the buyer disputes instead of refunding alone.
  escrow_hold_shipped: {
    status: 'escrow_hold',
    deal: approvedWith([payment('hold')], { delivery: delivery('shipped') }),
  },
  escrow_hold_delivered: {
    status: 'escrow_hold',
    deal: approvedWith([payment('hold')], { delivery: delivery('delivered') }),
  },
  // A two-stage payment (YooKassa without a safe deal) is refunded whole or not at all.
  escrow_hold_two_stage: { status: 'escrow_hold', deal: approvedWith([payment('hold', { provider: 'yookassa' })]) },
  // Released, its payout not yet through: the money is still the service's, and nobody moves it any more.
  escrow_hold_payout_pending: {
    status: 'escrow_hold',
    deal: approvedWith([payment('released', { payout_status: 'pending' })]),
  },
  disputed_shipped: {
    status: 'disputed',
    deal: approvedWith([payment('disputed')], { dispute: dispute(), delivery: delivery('shipped') }),
  },
};

const OTHER_WAYS_TABLE = table(`
                      marketplace  widget       buyer        seller       approver     administrator arbiter
approved_payment_pending
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        ok           ok           .            .            .            .             .
  pay                 .            .            ok           .            .            .             .
  release             .            .            payment      .            .            payment       payment
  refund              .            .            ok           .            .            ok            payment
  dispute             .            .            payment      .            .            payment       .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              ok           .            .            .            .            ok            .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
escrow_hold_shipped
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            payment      .            .            .             .
  release             .            .            ok           .            .            ok            payment
  refund              .            .            shipped      .            .            ok            payment
  dispute             .            .            ok           .            .            ok            .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              not_cancel   .            .            .            .            not_cancel    .
  ship                delivery     .            .            delivery     .            .             .
  deliver             ok           .            .            .            .            .             .
  partial_refund      ok           .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
escrow_hold_delivered
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            payment      .            .            .             .
  release             .            .            ok           .            .            ok            payment
  refund              .            .            shipped      .            .            ok            payment
  dispute             .            .            ok           .            .            ok            .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              not_cancel   .            .            .            .            not_cancel    .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      ok           .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
escrow_hold_two_stage
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            payment      .            .            .             .
  release             .            .            ok           .            .            ok            payment
  refund              .            .            ok           .            .            ok            payment
  dispute             .            .            ok           .            .            ok            .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              not_cancel   .            .            .            .            not_cancel    .
  ship                ok           .            .            ok           .            .             .
  deliver             ok           .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
escrow_hold_payout_pending
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            payment      .            .            .             .
  release             .            .            payment      .            .            payment       payment
  refund              .            .            payment      .            .            payment       payment
  dispute             .            .            payment      .            .            payment       .
  resolve             .            .            .            .            .            payment       payment
  message             no_dispute   .            no_dispute   no_dispute   .            no_dispute    no_dispute
  cancel              not_cancel   .            .            .            .            not_cancel    .
  ship                delivery     .            .            delivery     .            .             .
  deliver             delivery     .            .            .            .            .             .
  partial_refund      payment      .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
disputed_shipped
  add_document        ok           ok           .            .            .            .             .
  start_approval      appr_not_now appr_not_now .            .            .            .             .
  decide_approval     .            .            no_approval  .            no_approval  .             .
  start_escrow        not_approved not_approved .            .            .            .             .
  pay                 .            .            payment      .            .            .             .
  release             .            .            dispute_open .            .            dispute_open  ok
  refund              .            .            dispute_open .            .            dispute_open  ok
  dispute             .            .            dispute_open .            .            dispute_open  .
  resolve             .            .            .            .            .            ok            ok
  message             ok           .            ok           ok           .            ok            ok
  cancel              dispute_open .            .            .            .            dispute_open  .
  ship                delivery     .            .            delivery     .            .             .
  deliver             ok           .            .            .            .            .             .
  partial_refund      dispute_open .            .            .            .            .             .
  payout_destination  ok           .            .            .            .            .             .
`);

const sections = [
  ...BY_STATUS.sections.map((section) => ({
    name: section.name,
    status: section.name as DealStatus,
    deal: DEAL_IN[section.name as DealStatus],
    section,
  })),
  ...OTHER_WAYS_TABLE.sections.map((section) => ({ name: section.name, ...OTHER_WAYS[section.name], section })),
];

const code = (refused: { code: string } | undefined) => refused?.code ?? 'allowed';

describe('the tables of every verb × role × status', () => {
  it('have a column per role, a row per verb in each section, and a section per status', () => {
    for (const { roles, sections: tableSections } of [BY_STATUS, OTHER_WAYS_TABLE]) {
      expect(roles).toEqual(ROLES);
      for (const section of tableSections) expect([...section.rows.keys()], section.name).toEqual([...DEAL_VERBS]);
    }
    expect(BY_STATUS.sections.map((section) => section.name)).toEqual([...DEAL_STATUSES]);
    expect(OTHER_WAYS_TABLE.sections.map((section) => section.name)).toEqual(Object.keys(OTHER_WAYS));
  });

  it.each(sections)('$name: the deal the section is about is $status', ({ deal, status }) => {
    expect(dealStatus(deal)).toBe(status);
  });

  describe.each(sections)('$name', ({ deal, section }) => {
    it.each(DEAL_VERBS)('%s: each role is answered as its cell says', (verb) => {
      const answered = Object.fromEntries(ROLES.map((role) => [role, outcome(deal, verb, role)]));
      expect(answered).toEqual(section.rows.get(verb));
    });

    it('offers each role exactly the verbs its cells allow (allowedActions)', () => {
      for (const role of ROLES) {
        const allowed = DEAL_VERBS.filter((verb) => section.rows.get(verb)?.[role] === 'allowed');
        expect([...allowedActions(deal, role)].sort(), role).toEqual([...allowed].sort());
      }
    });

    it('moves the payment as the cells say, asking a reason of a dispute and of the arbiter (moveRefusal)', () => {
      for (const action of ['release', 'refund', 'dispute'] as const) {
        for (const role of ROLES) {
          const cell = section.rows.get(action)![role];
          // The callers check roleMay first (404); moveRefusal is not asked for a verb outside the role.
          if (cell === 'not_found') continue;
          const asksReason = cell === 'allowed' && (action === 'dispute' || role === 'arbiter');
          expect(code(moveRefusal(deal, { action, role, reason: 'It came broken' })), `${role} ${action}`).toBe(cell);
          for (const reason of [undefined, '', ' \n\t'])
            expect(
              code(moveRefusal(deal, { action, role, reason })),
              `${role} ${action} ${JSON.stringify(reason)}`,
            ).toBe(asksReason ? 'reason_required' : cell);
        }
      }
    });
  });
});

// A payment's own moves (paymentMoveRefusal), by its status: [release, refund, dispute] as any role but the arbiter
// asks them, then as the arbiter does. Typed by PaymentStatus, so a new payment status needs its row.
type Moves = [Outcome, Outcome, Outcome];
/** The arbiter decides disputes only: a payment not disputed is not theirs to move. */
const NOT_THE_ARBITERS: Moves = ['invalid_payment_state', 'invalid_payment_state', 'invalid_payment_state'];
const PAYMENT_MOVE_TABLE: Record<PaymentStatus, [Moves, Moves]> = {
  pending: [['invalid_payment_state', 'allowed', 'invalid_payment_state'], NOT_THE_ARBITERS],
  hold: [['allowed', 'allowed', 'allowed'], NOT_THE_ARBITERS],
  released: [['invalid_payment_state', 'invalid_payment_state', 'invalid_payment_state'], NOT_THE_ARBITERS],
  refunded: [['invalid_payment_state', 'invalid_payment_state', 'invalid_payment_state'], NOT_THE_ARBITERS],
  disputed: [
    ['dispute_open', 'dispute_open', 'dispute_open'],
    ['allowed', 'allowed', 'dispute_open'],
  ],
};

describe('a payment’s moves (paymentMoveRefusal)', () => {
  it('has a row per payment status', () => {
    expect(Object.keys(PAYMENT_MOVE_TABLE)).toEqual([...PAYMENT_STATUSES]);
  });

  it.each(PAYMENT_STATUSES)('%s', (status) => {
    const actions: PaymentAction[] = ['release', 'refund', 'dispute'];
    const others = ROLES.filter((role) => role !== 'arbiter');
    const answered = (role: DealRole) =>
      actions.map((action) => code(paymentMoveRefusal(payment(status), action, role)));
    for (const role of others) expect(answered(role), role).toEqual(PAYMENT_MOVE_TABLE[status][0]);
    expect(answered('arbiter')).toEqual(PAYMENT_MOVE_TABLE[status][1]);
  });

  it('refuses every move of a deal without a payment', () => {
    for (const role of ROLES)
      for (const action of ['release', 'refund', 'dispute'] as const)
        expect(code(paymentMoveRefusal(undefined, action, role)), `${role} ${action}`).toBe('invalid_payment_state');
  });
});

// moveRefusal does not ask whether the role has the verb (its callers do, with roleMay): even so, no one but the
// arbiter moves a disputed payment, whatever reason they give.
describe('a disputed payment', () => {
  const disputed = DEAL_IN.disputed;

  it('refuses every other move, by anyone, with dispute_open, a reason or not', () => {
    const roles: DealRole[] = ['buyer', 'administrator', 'marketplace', 'widget', 'seller', 'approver'];
    for (const role of roles) {
      for (const action of ['release', 'refund', 'dispute'] as const) {
        expect(code(moveRefusal(disputed, { action, role, reason: 'Because' })), `${role} ${action}`).toBe(
          'dispute_open',
        );
        expect(code(paymentMoveRefusal(disputed.payments[0], action, role)), `${role} ${action}`).toBe('dispute_open');
      }
      expect(code(refusal(disputed, 'cancel', role)), `${role} cancel`).toBe('dispute_open');
    }
    // Another dispute is not the arbiter's either.
    expect(code(moveRefusal(disputed, { action: 'dispute', role: 'arbiter', reason: 'Again' }))).toBe('dispute_open');
  });
});
