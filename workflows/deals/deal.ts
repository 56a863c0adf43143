// One workflow per deal: the only writer of the deal after creation (docs/decisions/0001-one-writer-per-deal.md).
// This function wires the deal (workflows/deals/deal-entity.ts) to its messages: updates validate and answer, signals
// carry acquirer news. Each change writes its webhook events with it, and the outbox sends them (runs from before the
// outbox send theirs in this loop, one after another, in the order they happened). The loop acts before an
// acquirer's hold lapses, ends when the deal is closed and continues as new when the history grows long.
// Deterministic code only.
//
// Changing this code: old histories must still replay (test/workflow/deal-replay.test.ts replays
// test/fixtures/deal-histories). Guard a changed step with `take('<change-id>')` (patched(), see patches.ts) and keep
// the old branch until no open workflow can take it.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { isFinal } from '../../src/deals/model.ts';
import { dealSearchAttributes } from '../../src/deals/search-attributes.ts';
import {
  acquirerNotificationSignal,
  addDocumentUpdate,
  cancelUpdate,
  continueUpdate,
  decideUpdate,
  deliverUpdate,
  partialRefundUpdate,
  payoutDestinationSignal,
  payoutNewsSignal,
  shipUpdate,
  disputeMessageUpdate,
  movePaymentUpdate,
  reassertSignal,
  snapshotQuery,
  startApprovalUpdate,
  startEscrowUpdate,
  type DealWorkflowInput,
} from './deal-messages.ts';
import { DealEntity } from './deal-entity.ts';
import { deliverWebhookOrMarkFailed } from '../webhooks/webhook-options.ts';
import { PATCH_LEVEL, taken } from './patches.ts';

export async function dealWorkflow(input: DealWorkflowInput): Promise<void> {
  // In the order the changes came: a history records each marker where it was first asked.
  const take = (id: string) => taken(input.patchLevel, id);
  const patches = {
    localRecords: take('local-records'),
    reassert: take('reassert-records'),
    recheck: take('exclusive-recheck'),
    people: take('deal-people'),
    fromRecords: take('start-from-records'),
    outbox: take('webhook-outbox'),
    acquirerLocal: take('acquirer-local'),
    payoutLocal: take('payout-local'),
    taken: take,
  };
  const deal = new DealEntity(input, patches);
  const { state, deliveries } = deal;
  const { settings } = input;
  const exclusive = <T>(work: () => Promise<T>) => deal.exclusive(work);

  const provision = async () => {
    const provisioned = await deal.records.provisionParties(deal.dealId);
    if (patches.fromRecords && provisioned?.snapshot) deal.adopt(provisioned.snapshot);
    return provisioned;
  };
  // Since 'start-from-records' the lock is taken before the handlers are set: setting one runs an update that came with
  // the start at once, and that update must wait for the deal as recorded (a run started again after the deal's
  // workflow ended was given what its caller read, which may be older).
  const provisioning = !input.provisioned && patches.fromRecords ? exclusive(provision) : undefined;

  setHandler(snapshotQuery, () => state);
  setHandler(addDocumentUpdate, (document) => exclusive(() => deal.addDocument(document)), {
    validator: (_document) => deal.check('add_document', 'marketplace'),
  });
  setHandler(startApprovalUpdate, (request) => exclusive(() => deal.startApproval(request)), {
    validator: (_request) => deal.check('start_approval', 'marketplace'),
  });
  // The widget's Continue as one step of the deal's single writer: a double click, on one server or two, runs twice
  // in turn, and the second finds the contract and the approval the first made.
  setHandler(continueUpdate, (request) => exclusive(() => deal.continueDeal(request)));
  setHandler(decideUpdate, (decision) => exclusive(() => deal.decide(decision)), {
    validator: ({ approval_id, actor }) => void deal.approvalToDecide(approval_id, actor),
  });
  setHandler(startEscrowUpdate, (escrow) => exclusive(() => deal.startEscrow(escrow)), {
    validator: (escrow) => deal.checkStartEscrow(escrow),
  });
  setHandler(movePaymentUpdate, (move) => exclusive(() => deal.movePaymentAsAsked(move)), {
    validator: (move) => void deal.paymentToMove(move),
  });
  setHandler(cancelUpdate, (request) => exclusive(() => deal.cancel(request)), {
    validator: (_request) => deal.check('cancel', 'marketplace'),
  });
  setHandler(disputeMessageUpdate, ({ message }) => exclusive(() => deal.addDisputeMessage(message)), {
    validator: (_message) => deal.check('message', 'administrator'),
  });
  setHandler(shipUpdate, (shipment) => exclusive(() => deal.ship(shipment)), {
    validator: ({ actor }) => deal.check('ship', actor),
  });
  setHandler(deliverUpdate, (delivery) => exclusive(() => deal.deliver(delivery)), {
    validator: ({ actor }) => deal.check('deliver', actor),
  });
  setHandler(partialRefundUpdate, (refund) => exclusive(() => deal.partialRefund(refund)), {
    validator: (refund) => void deal.checkPartialRefund(refund),
  });
  setHandler(acquirerNotificationSignal, (news) => exclusive(() => deal.acquirerNews(news)));
  setHandler(payoutNewsSignal, (news) => exclusive(() => deal.payoutNews(news)));
  setHandler(payoutDestinationSignal, () => exclusive(() => deal.payoutDestinationChanged()));
  // Sent when PostgreSQL may have lost writes (a worker starting sends it to every open deal: src/worker.ts).
  setHandler(reassertSignal, () => exclusive(() => deal.reassert()));

  if (!patches.localRecords) {
    // Before the patch runs repeated what the start request (and continue-as-new) already sets.
    upsertSearchAttributes(dealSearchAttributes(state.deal, deal.status()));
    upsertMemo({ title: state.deal.title });
  }
  // A run that continues an earlier one starts from that run's memory: PostgreSQL gets it once more.
  if (patches.reassert && workflowInfo().continuedFromExecutionRunId) await exclusive(() => deal.reassert());
  if (!input.provisioned) {
    // Under the lock since 'deal-people': an update that came with the start waits, so its write never runs beside
    // this one. Two local activities at once in one workflow task can come back in another order on replay.
    const created = await (provisioning ?? (patches.people ? exclusive(provision) : provision()));
    // The API wrote deal.created with the deal, before any change could happen: it goes first (the outbox sends it
    // from the creation's commit on).
    if (patches.people && !patches.outbox && created?.deliveryId) deliveries.unshift(created.deliveryId);
  }

  const historyIsLong = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > settings.historyLimit;
  let reassertedAtEnd = false;
  for (;;) {
    // A released payment owed to the seller is paid out before anything waits (one payout per turn, each its own step).
    const due = deal.payoutDue();
    if (due) {
      await exclusive(() => deal.payOut(due.id));
      continue;
    }
    const seen = deal.changes;
    // Before the lapse of a hold, the buyer's reminder, the end of the inspection window, the next payout check.
    const timer = deal.nextTimer(settings);
    // Wakes only for something one of the branches below acts on. A closed deal whose updates are still running (a
    // refund waiting for the lock while a release closed the deal) must not wake the loop: it would go round and round
    // in microtasks, each turn true again at once, and the waiting update, whose condition the SDK checks only once the
    // microtasks settle, would never run (the worker thread then dies of an exhausted async stack).
    const woke = await condition(
      () =>
        deliveries.length > 0 ||
        deal.changes !== seen ||
        (isFinal(deal.status()) && !deal.busy && allHandlersFinished()) ||
        historyIsLong(),
      timer ? Math.max(timer.at - Date.now(), 1) : undefined,
    );
    if (deliveries.length > 0) {
      // One after another, so the marketplace gets this deal's events in order; a failed one does not block the rest.
      await deliverWebhookOrMarkFailed(deliveries[0]);
      deliveries.shift();
      continue;
    }
    if (!woke && timer) {
      await exclusive(() => timer.act());
      continue;
    }
    if (deal.changes !== seen) continue;
    if (isFinal(deal.status()) && !deal.busy && allHandlersFinished()) {
      if (!patches.reassert || reassertedAtEnd) return;
      // After the end nothing could heal a lost write any more: the final state goes to PostgreSQL once more.
      await exclusive(() => deal.reassert());
      reassertedAtEnd = true;
      continue;
    }
    if (historyIsLong()) {
      await condition(() => !deal.busy && allHandlersFinished());
      if (deliveries.length > 0) continue;
      await continueAsNew<typeof dealWorkflow>({
        ...input,
        snapshot: state,
        pendingDeliveries: deliveries,
        provisioned: true,
        // The next run is this code from its start: it takes every change without a marker.
        patchLevel: PATCH_LEVEL,
        holdLimits: deal.pendingHoldLimits(),
      });
    }
  }
}
