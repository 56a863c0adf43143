// The pure rules of src/deals/rules.ts, without a server: who may move a deal's payment, and with what. The workflow
// applies exactly these to the deal as it is when a move happens; the API and the pages use them too.
import { describe, expect, it } from 'vitest';
import type { DealSnapshot, PaymentStatus } from '../../src/deals/model.ts';
import {
  allowedActions,
  moveRefusal,
  paymentMoveRefusal,
  refusal,
  type DealRole,
  type PaymentAction,
} from '../../src/deals/rules.ts';

const at = '2026-01-01T00:00:00.000Z';

/** An approved deal whose one payment is in `status`; a dispute record when it is disputed. */
function dealWith(status: PaymentStatus): DealSnapshot {
  return {
    deal: {
      id: 'd',
      marketplace_id: 'm',
      external_id: 'o-1',
      title: 'Sofa',
      buyer_email: 'buyer@example.com',
      buyer_name: '',
      seller_email: '',
      amount: 100,
      currency: 'RUB',
      description: '',
      created_at: at,
      updated_at: at,
    },
    documents: [
      {
        id: 'doc',
        kind: 'offer',
        name: 'offer',
        content_type: 'application/pdf',
        size: 1,
        sha256: 'a'.repeat(64),
        created_at: at,
      },
    ],
    approvals: [
      { id: 'a', status: 'approved', approver: 'buyer@example.com', comment: '', created_at: at, decided_at: at },
    ],
    payments: [
      {
        id: 'p',
        amount: 100,
        currency: 'RUB',
        provider: 'sandbox',
        status,
        payment_url: null,
        provider_payment_id: 'sandbox_p',
        hold_expires_at: null,
        created_at: at,
        updated_at: at,
      },
    ],
    dispute:
      status === 'disputed'
        ? { status: 'open', reason: 'Broken', opened_by: 'buyer', opened_at: at, messages: [], decision: null }
        : null,
    cancellation: null,
  };
}

const code = (refused: { code: string } | undefined) => refused?.code ?? 'allowed';

describe('a disputed payment', () => {
  const disputed = dealWith('disputed');

  it('moves by the arbiter’s decision only, with a reason', () => {
    for (const action of ['release', 'refund'] as const) {
      expect(code(moveRefusal(disputed, { action, role: 'arbiter', reason: 'The photos show it broken' }))).toBe(
        'allowed',
      );
      expect(code(moveRefusal(disputed, { action, role: 'arbiter', reason: '' }))).toBe('reason_required');
      expect(code(moveRefusal(disputed, { action, role: 'arbiter', reason: '  \n ' }))).toBe('reason_required');
      expect(code(moveRefusal(disputed, { action, role: 'arbiter' }))).toBe('reason_required');
    }
  });

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

  it('offers an administrator the decision and the thread, no plain move', () => {
    expect(allowedActions(disputed, 'administrator')).toEqual(['resolve', 'message']);
    expect(allowedActions(disputed, 'buyer')).toEqual(['message']);
    expect(allowedActions(disputed, 'marketplace')).not.toContain('cancel');
  });
});

describe('a held payment', () => {
  const held = dealWith('hold');

  it('is no arbiter’s to decide: there is no dispute', () => {
    for (const action of ['release', 'refund'] as const) {
      expect(code(moveRefusal(held, { action, role: 'arbiter', reason: 'A reason' }))).toBe('invalid_payment_state');
    }
    expect(code(refusal(held, 'resolve', 'administrator'))).toBe('invalid_payment_state');
  });

  it('moves by the buyer or an administrator; a dispute needs a reason', () => {
    for (const role of ['buyer', 'administrator'] as const) {
      for (const action of ['release', 'refund'] satisfies PaymentAction[]) {
        expect(code(moveRefusal(held, { action, role }))).toBe('allowed');
      }
      expect(code(moveRefusal(held, { action: 'dispute', role, reason: 'Never came' }))).toBe('allowed');
      expect(code(moveRefusal(held, { action: 'dispute', role, reason: ' ' }))).toBe('reason_required');
    }
    expect(code(refusal(held, 'cancel', 'marketplace'))).toBe('deal_not_cancellable');
    expect(allowedActions(held, 'administrator')).toEqual(['release', 'refund', 'dispute']);
  });
});

describe('a moved payment', () => {
  it('is closed for good: released or refunded, whatever the role', () => {
    for (const status of ['released', 'refunded'] as const) {
      for (const role of ['buyer', 'administrator', 'arbiter'] as const) {
        for (const action of ['release', 'refund', 'dispute'] as const) {
          expect(code(moveRefusal(dealWith(status), { action, role, reason: 'x' }))).toBe('deal_closed');
        }
      }
    }
  });

  it('pending: only refunded (cancelled at the acquirer), never released, never disputed', () => {
    const pending = dealWith('pending');
    expect(code(moveRefusal(pending, { action: 'refund', role: 'buyer' }))).toBe('allowed');
    expect(code(moveRefusal(pending, { action: 'release', role: 'administrator' }))).toBe('invalid_payment_state');
    expect(code(moveRefusal(pending, { action: 'dispute', role: 'buyer', reason: 'x' }))).toBe('invalid_payment_state');
  });
});

describe('the buyer’s pay', () => {
  const approved: DealSnapshot = { ...dealWith('hold'), payments: [] };

  it('is offered to the buyer of an approved deal with no money held, and to no one else', () => {
    expect(allowedActions(approved, 'buyer')).toContain('pay');
    expect(code(refusal(approved, 'pay', 'buyer'))).toBe('allowed');
    for (const role of ['seller', 'approver', 'marketplace', 'widget', 'administrator', 'arbiter'] as const) {
      expect(allowedActions(approved, role), role).not.toContain('pay');
    }
  });

  it('answers a live payment still pending again: offered while the buyer has not paid', () => {
    const pending = dealWith('pending');
    expect(allowedActions(pending, 'buyer')).toEqual(['pay', 'refund']);
  });

  it('is refused before approval, once the money is held, and on a closed deal', () => {
    const unapproved: DealSnapshot = {
      ...approved,
      approvals: [{ ...approved.approvals[0], status: 'pending', decided_at: null }],
    };
    expect(code(refusal(unapproved, 'pay', 'buyer'))).toBe('deal_not_approved');
    expect(code(refusal({ ...approved, approvals: [] }, 'pay', 'buyer'))).toBe('deal_not_approved');
    for (const status of ['hold', 'disputed'] as const) {
      expect(code(refusal(dealWith(status), 'pay', 'buyer')), status).toBe('invalid_payment_state');
      expect(allowedActions(dealWith(status), 'buyer'), status).not.toContain('pay');
    }
    for (const status of ['released', 'refunded'] as const)
      expect(code(refusal(dealWith(status), 'pay', 'buyer')), status).toBe('deal_closed');
    const cancelled = { ...approved, cancellation: { actor: 'marketplace' as const, reason: '', cancelled_at: at } };
    expect(code(refusal(cancelled, 'pay', 'buyer'))).toBe('deal_closed');
  });
});
