// POST /api/escrow/yookassa/notifications: YooKassa's HTTP notifications. They are not signed, so the body is only
// a hint: we find our payment by its YooKassa id, re-read it from YooKassa, and tell the deal's workflow what
// YooKassa says. A notification we cannot use is answered 200 (YooKassa stops resending it); one we could use
// but cannot act on right now (YooKassa or Temporal unreachable) is answered 503, so YooKassa sends it again.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { LARGE_BODY_LIMIT_BYTES } from '../http/body.ts';
import type { Logger } from '../log.ts';
import type { Services } from '../services.ts';
import { Problem, problem } from '../http/problem.ts';
import { dealWorkflowId } from '../deals/model.ts';
import { loadSnapshot } from '../deals/store.ts';
import { signalDeal } from '../deals/commands.ts';
import { acquirerNotificationSignal } from '../../workflows/deals/deal-messages.ts';
import { EscrowConfigError, escrowProvider } from './providers.ts';
import { isRefusal } from './yookassa.ts';
import type { ProviderPayment } from './provider.ts';

const Notification = z
  .looseObject({
    type: z.literal('notification'),
    event: z.enum(['payment.waiting_for_capture', 'payment.canceled', 'payment.succeeded']),
    object: z.looseObject({ id: z.string().min(1).max(64).describe('The YooKassa payment id') }),
  })
  .meta({ title: 'YooKassaNotification', description: 'As YooKassa sends it; only object.id is used' });

interface KnownPayment {
  id: string;
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
    summary: 'Receive a YooKassa payment notification',
    description:
      'Set this URL in the YooKassa Merchant Profile (Integration → HTTP notifications) for payment.waiting_for_capture, ' +
      'payment.canceled and payment.succeeded. The body is not trusted: the payment is re-read from YooKassa.',
    tags: ['Escrow'],
    body: Notification,
    responses: {
      200: { description: 'Received (also for payments this service does not know)', schema: z.object({ ok: z.literal(true) }) },
      503: { description: 'YooKassa or the workflow engine is unreachable right now; YooKassa will resend' },
    },
    handler: async (ctx, { body }) => {
      const log: Logger = (ctx.state.log as Logger | undefined) ?? services.logger;
      await receive(services, log.child({ provider_payment_id: body.object.id, event: body.event }), body.object.id);
      ctx.body = { ok: true };
    },
  });
}

async function receive(services: Services, log: Logger, providerPaymentId: string): Promise<void> {
  // Our record first: an unknown id costs one indexed query and never makes us call YooKassa for a stranger.
  const known = await services.db.query<KnownPayment>(
    `SELECT p.id, p.deal_id, d.marketplace_id, d.external_id
       FROM deal_payments p JOIN deals d ON d.id = p.deal_id
      WHERE p.provider = 'yookassa' AND p.provider_payment_id = $1`,
    [providerPaymentId],
  );
  const payment = known.rows[0];
  if (!payment) {
    log.warn('YooKassa notification for a payment we do not know; ignored');
    return;
  }

  let current: ProviderPayment;
  try {
    current = await escrowProvider('yookassa', services.config).getPayment(providerPaymentId);
  } catch (error) {
    // A refusal for our own payment, or no configuration, means our side is wrong: loud, and let YooKassa resend.
    log[isRefusal(error) || error instanceof EscrowConfigError ? 'error' : 'warn']({ err: error }, 'could not re-read the payment from YooKassa');
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

function unavailable(detail: string): Problem {
  return problem('temporarily_unavailable', `${detail} Retry later.`, { headers: { 'Retry-After': '30' } });
}
