// POST /api/escrow/yookassa/notifications: YooKassa's HTTP notifications, for payments (two-stage and safe deal) and
// for a safe deal's payouts. They are not signed, so the body is only a hint: we find our payment or payout by its
// YooKassa id, re-read it from YooKassa, and tell the deal's workflow what YooKassa says. A notification we cannot use
// is answered 200 (YooKassa stops resending it); one we could use but cannot act on right now (YooKassa or Temporal
// unreachable) is answered 503, so YooKassa sends it again.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { LARGE_BODY_LIMIT_BYTES } from '../http/body.ts';
import type { Logger } from '../log.ts';
import type { Services } from '../services.ts';
import { Problem, problem } from '../http/problem.ts';
import { dealWorkflowId } from '../deals/model.ts';
import { loadSnapshot } from '../deals/store.ts';
import { signalDeal } from '../deals/commands.ts';
import { acquirerNotificationSignal, payoutNewsSignal } from '../../workflows/deals/deal-messages.ts';
import { EscrowConfigError, escrowProvider } from './providers.ts';
import { isRefusal } from './yookassa.ts';
import type { ProviderPayment, ProviderPayout } from './provider.ts';

const PAYMENT_EVENTS = ['payment.waiting_for_capture', 'payment.canceled', 'payment.succeeded'] as const;
const PAYOUT_EVENTS = ['payout.succeeded', 'payout.canceled'] as const;

const Notification = z
  .looseObject({
    type: z.literal('notification'),
    event: z.enum([...PAYMENT_EVENTS, ...PAYOUT_EVENTS]),
    object: z.looseObject({ id: z.string().min(1).max(64).describe('The YooKassa payment or payout id') }),
  })
  .meta({ title: 'YooKassaNotification', description: 'As YooKassa sends it; only event and object.id are used' });

/** The acquirers whose payments YooKassa notifies about: both are YooKassa shops behind the same URL. */
type YooKassaProviderName = 'yookassa' | 'yookassa_safe_deal';

interface KnownPayment {
  id: string;
  provider: YooKassaProviderName;
  deal_id: string;
  marketplace_id: string;
  external_id: string;
}

export function escrowNotificationRoutes(api: Api, services: Services): void {
  api.route({
    method: 'post',
    path: '/api/escrow/yookassa/notifications',
    operationId: 'receiveYooKassaNotification',
    bodyLimitBytes: LARGE_BODY_LIMIT_BYTES, // YooKassa's JSON: a payment object of a few KiB, room to spare
    summary: 'Receive a YooKassa payment or payout notification',
    description:
      'Set this URL in the YooKassa Merchant Profile (Integration → HTTP notifications) for payment.waiting_for_capture, ' +
      'payment.canceled and payment.succeeded, and with Safe Deal for payout.succeeded and payout.canceled. The body is ' +
      'not trusted: the payment or payout is re-read from YooKassa.',
    tags: ['Escrow'],
    body: Notification,
    responses: {
      200: {
        description: 'Received (also for payments and payouts this service does not know)',
        schema: z.object({ ok: z.literal(true) }),
      },
      503: { description: 'YooKassa or the workflow engine is unreachable right now; YooKassa will resend' },
    },
    handler: async (ctx, { body }) => {
      const log: Logger = (ctx.state.log as Logger | undefined) ?? services.logger;
      if (body.event.startsWith('payout.')) {
        await receivePayout(
          services,
          log.child({ provider_payout_id: body.object.id, event: body.event }),
          body.object.id,
        );
      } else {
        await receivePayment(
          services,
          log.child({ provider_payment_id: body.object.id, event: body.event }),
          body.object.id,
        );
      }
      ctx.body = { ok: true };
    },
  });
}

async function receivePayment(services: Services, log: Logger, providerPaymentId: string): Promise<void> {
  // Our record first: an unknown id costs one indexed query and never makes us call YooKassa for a stranger.
  const known = await services.db.query<KnownPayment>(
    `SELECT p.id, p.provider, p.deal_id, d.marketplace_id, d.external_id
       FROM deal_payments p JOIN deals d ON d.id = p.deal_id
      WHERE p.provider IN ('yookassa', 'yookassa_safe_deal') AND p.provider_payment_id = $1`,
    [providerPaymentId],
  );
  const payment = known.rows[0];
  if (!payment) {
    log.warn('YooKassa notification for a payment we do not know; ignored');
    return;
  }

  let current: ProviderPayment;
  try {
    // Re-read through the payment's own provider: a safe deal's `succeeded` is money held, a two-stage one's is released.
    current = await escrowProvider(payment.provider, services.config).getPayment(providerPaymentId);
  } catch (error) {
    // A refusal for our own payment, or no configuration, means our side is wrong: loud, and let YooKassa resend.
    log[isRefusal(error) || error instanceof EscrowConfigError ? 'error' : 'warn'](
      { err: error },
      'could not re-read the payment from YooKassa',
    );
    throw unavailable('Could not re-read the payment from YooKassa.');
  }
  if (current.status !== 'hold' && current.status !== 'refunded') {
    log.info({ status: current.status }, 'YooKassa notification with nothing for the deal to learn; ignored');
    return;
  }

  const workflowId = dealWorkflowId(payment.marketplace_id, payment.external_id);
  try {
    // With start: a deal whose workflow has finished (refunded while pending, then paid anyway) must still act.
    const snapshot = (await loadSnapshot(services.db, payment.deal_id))!;
    await signalDeal(services, snapshot, acquirerNotificationSignal, { paymentId: payment.id, status: current.status });
    log.info({ workflow_id: workflowId, status: current.status }, 'deal told of the acquirer notification');
  } catch (error) {
    log.warn({ err: error, workflow_id: workflowId }, 'could not signal the deal workflow');
    throw unavailable('Could not reach the deal workflow.');
  }
}

interface KnownPayout {
  id: string;
  deal_id: string;
  marketplace_id: string;
  external_id: string;
}

async function receivePayout(services: Services, log: Logger, providerPayoutId: string): Promise<void> {
  // Only safe deals pay out through YooKassa; the sandbox's payouts never reach this route.
  const known = await services.db.query<KnownPayout>(
    `SELECT o.id, o.deal_id, d.marketplace_id, d.external_id
       FROM deal_payouts o JOIN deal_payments p ON p.id = o.payment_id JOIN deals d ON d.id = o.deal_id
      WHERE o.provider_payout_id = $1 AND p.provider = 'yookassa_safe_deal'`,
    [providerPayoutId],
  );
  const payout = known.rows[0];
  if (!payout) {
    log.warn('YooKassa notification for a payout we do not know; ignored');
    return;
  }

  let current: ProviderPayout;
  try {
    current = await escrowProvider('yookassa_safe_deal', services.config).getPayout(providerPayoutId);
  } catch (error) {
    // As for payments: a refusal for our own payout, or no configuration, is our side's fault, so it is loud.
    log[isRefusal(error) || error instanceof EscrowConfigError ? 'error' : 'warn'](
      { err: error },
      'could not re-read the payout from YooKassa',
    );
    throw unavailable('Could not re-read the payout from YooKassa.');
  }
  if (current.status === 'pending') {
    log.info('YooKassa payout notification while the payout is still pending; ignored');
    return;
  }

  const workflowId = dealWorkflowId(payout.marketplace_id, payout.external_id);
  try {
    // With start, as for payments: the news must reach the deal also when its workflow is not running.
    const snapshot = (await loadSnapshot(services.db, payout.deal_id))!;
    await signalDeal(services, snapshot, payoutNewsSignal, {
      payoutId: payout.id,
      status: current.status,
      failureReason: current.failureReason,
    });
    log.info({ workflow_id: workflowId, status: current.status }, 'deal told of the payout');
  } catch (error) {
    log.warn({ err: error, workflow_id: workflowId }, 'could not signal the deal workflow');
    throw unavailable('Could not reach the deal workflow.');
  }
}

function unavailable(detail: string): Problem {
  return problem('temporarily_unavailable', `${detail} Retry later.`, { headers: { 'Retry-After': '30' } });
}
