// The sandbox acquirer, choosing a provider by marketplace mode, and the configuration YooKassa needs.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { EscrowConfigError, escrowProvider, providerFor } from '../../src/escrow/providers.ts';
import { SandboxProvider } from '../../src/escrow/sandbox.ts';
import { YooKassaProvider } from '../../src/escrow/yookassa.ts';
import { createEscrowActivities } from '../../activities/deals/escrow.ts';
import { testConfig } from '../helpers.ts';

const SEVEN_DAYS = 7 * 24 * 3600;

describe('the sandbox provider', () => {
  const sandbox = new SandboxProvider();
  const input = () => ({
    paymentId: randomUUID(),
    dealId: randomUUID(),
    amount: 10,
    currency: 'RUB',
    description: 'test',
    returnUrl: 'https://shop.example/back',
  });

  it('holds at once, without a payment page, under a derived id', async () => {
    const request = input();
    expect(await sandbox.createPayment(request)).toEqual({
      status: 'hold',
      providerPaymentId: `sandbox_${request.paymentId}`,
      providerDealId: `sandbox_deal_${request.paymentId}`,
      paymentUrl: null,
    });
    expect(sandbox).toMatchObject({ name: 'sandbox', holdLimitSeconds: SEVEN_DAYS });
  });

  it('captures and cancels its own payments, and refuses other providers’ ids', async () => {
    const { providerPaymentId } = await sandbox.createPayment(input());
    await expect(sandbox.capture(providerPaymentId)).resolves.toBeUndefined();
    await expect(sandbox.cancel(providerPaymentId)).resolves.toBeUndefined();
    await expect(sandbox.capture('2f3b588d-000f-5000-8000-1d6e87c7fbde')).rejects.toMatchObject({
      type: 'acquirer_refused',
      nonRetryable: true,
    });
  });

  it('cannot re-read a payment, since it keeps no state, and says so instead of guessing', async () => {
    const { providerPaymentId } = await sandbox.createPayment(input());
    const error = await sandbox.getPayment(providerPaymentId).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'not_supported', nonRetryable: true });
  });
});

describe('choosing the provider', () => {
  it('maps marketplace modes to providers', () => {
    expect(providerFor({ mode: 'sandbox' })).toBe('sandbox');
    expect(providerFor({ mode: 'live' })).toBe('yookassa');
    expect(providerFor({ mode: 'live', provider: 'yookassa_two_stage' })).toBe('yookassa');
    expect(providerFor({ mode: 'live', provider: 'yookassa_safe_deal' })).toBe('yookassa_safe_deal');
    expect(providerFor({ mode: 'sandbox', provider: 'yookassa_safe_deal' })).toBe('sandbox');
  });

  it('builds YooKassa from the configuration, and names what is missing', () => {
    const configured = escrowProvider('yookassa', testConfig({ YOOKASSA_SHOP_ID: '1', YOOKASSA_SECRET_KEY: 'k' }));
    expect(configured).toBeInstanceOf(YooKassaProvider);
    expect(configured).toMatchObject({ name: 'yookassa', holdLimitSeconds: SEVEN_DAYS });
    expect(escrowProvider('sandbox', testConfig())).toBeInstanceOf(SandboxProvider);
    expect(() => escrowProvider('yookassa', testConfig())).toThrow(EscrowConfigError);
    expect(() => escrowProvider('yookassa', testConfig({ YOOKASSA_SHOP_ID: '1' }))).toThrow(
      /set YOOKASSA_SECRET_KEY \(/,
    );
    expect(() => escrowProvider('yookassa', testConfig())).toThrow(/YOOKASSA_SHOP_ID and YOOKASSA_SECRET_KEY/);
  });

  it('fails the activity for good when live escrow is not configured, and still serves the sandbox', async () => {
    const activities = createEscrowActivities({ config: testConfig() });
    const error = await activities
      .createEscrowPayment('yookassa', {
        paymentId: randomUUID(),
        dealId: randomUUID(),
        amount: 1,
        currency: 'RUB',
        description: '',
        returnUrl: 'https://x.example',
      })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ type: 'acquirer_not_configured', nonRetryable: true });
    expect((error as Error).message).toMatch(/YOOKASSA_SHOP_ID/);
    const paymentId = randomUUID();
    const held = await activities.createEscrowPayment('sandbox', {
      paymentId,
      dealId: randomUUID(),
      amount: 1,
      currency: 'RUB',
      description: '',
      returnUrl: 'https://x.example',
    });
    expect(held.status).toBe('hold');
    await activities.captureEscrowPayment('sandbox', held.providerPaymentId, 1, 'RUB', `${paymentId}/release`);
    await activities.cancelEscrowPayment('sandbox', held.providerPaymentId, `${paymentId}/refund`);
  });
});
