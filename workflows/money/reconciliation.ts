// The daily reconciliation with the acquirer (src/money/reconciliation.ts), started by the Schedule
// `money-reconciliation` every night or by an administrator's "run now": the deals are reconciled batch after batch,
// each batch one activity that heartbeats, and the run is closed with its counts. A failure that outlasts the
// activities' retries closes the run as failed before the workflow fails. Deterministic: only @temporalio/workflow and
// type imports.
import { ActivityFailure, proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { BatchResult, createReconciliationActivities, RunSummary } from '../../activities/money/reconciliation.ts';
import type { ReconciliationInput } from '../../src/money/reconciliation.ts';

type Activities = ReturnType<typeof createReconciliationActivities>;

const records = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 10 } });
// A batch asks the acquirer about up to 200 deals; the heartbeat (after every call) tells a stuck attempt from a slow one.
const acquirer = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10s', backoffCoefficient: 2, maximumAttempts: 5 },
});

export async function reconciliationWorkflow(input: ReconciliationInput = {}): Promise<RunSummary> {
  const runId = input.runId ?? uuid4();
  const { closedSince } = await records.beginReconciliation({
    runId,
    trigger: input.trigger ?? 'schedule',
    workflowId: workflowInfo().workflowId,
  });
  let after: string | null = null;
  let dealsChecked = 0;
  let checks = 0;
  try {
    do {
      const batch: BatchResult = await acquirer.reconcileBatch({ runId, after, closedSince });
      dealsChecked += batch.deals;
      checks += batch.checks;
      after = batch.next;
    } while (after !== null);
  } catch (failure) {
    const error =
      failure instanceof ActivityFailure ? (failure.cause?.message ?? failure.message) : (failure as Error).message;
    await records.finishReconciliation({ runId, dealsChecked, checks, error });
    throw failure;
  }
  return await records.finishReconciliation({ runId, dealsChecked, checks });
}
