// The API's side of "one writer per deal": every change after creation is a Temporal Update on the deal's workflow.
// Update-with-start (conflict policy USE_EXISTING) means a workflow whose start was lost, or that has finished, is
// started again from the records in PostgreSQL, so a change never depends on an earlier request having worked.
import {
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  type WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import type { Services } from '../services.ts';
import { Problem, problem } from '../http/problem.ts';
import { idempotentUpdate } from '../http/idempotency.ts';
import { isProblemCode } from '../http/problem-catalog.ts';
import { dealStatus, dealWorkflowId, type DealSnapshot } from './model.ts';
import { dealSearchAttributes } from './search-attributes.ts';
import type { DealSettings, DealWorkflowInput } from '../../workflows/deals/deal-messages.ts';
import { PATCH_LEVEL } from '../../workflows/deals/patches.ts';

const WORKFLOW_TYPE = 'dealWorkflow';
const UPDATE_DEADLINE_MS = 30_000;

export function dealSettings(services: Services): DealSettings {
  return {
    holdPolicy: services.config.ESCROW_HOLD_POLICY,
    holdMarginSeconds: services.config.ESCROW_HOLD_MARGIN_SECONDS,
    historyLimit: services.config.DEAL_WORKFLOW_HISTORY_LIMIT,
  };
}

function startOptions(services: Services, snapshot: DealSnapshot) {
  // A new run takes every change of the workflow's code without a history marker for each (workflows/deals/patches.ts).
  const input: DealWorkflowInput = { snapshot, settings: dealSettings(services), patchLevel: PATCH_LEVEL };
  return {
    workflowId: dealWorkflowId(snapshot.deal.marketplace_id, snapshot.deal.external_id),
    taskQueue: services.config.TEMPORAL_TASK_QUEUE,
    args: [input] as [DealWorkflowInput],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    typedSearchAttributes: dealSearchAttributes(snapshot.deal, dealStatus(snapshot)),
    memo: { title: snapshot.deal.title },
  };
}

/** Starts the deal's workflow unless it runs already; answers without waiting for a worker. */
export async function startDealWorkflow(services: Services, snapshot: DealSnapshot): Promise<void> {
  await services.temporal.workflow.start(WORKFLOW_TYPE, startOptions(services, snapshot));
}

/** Signals the deal's workflow, starting it from the records when it has finished (late acquirer news). */
export async function signalDeal<Arg>(
  services: Services,
  snapshot: DealSnapshot,
  signal: SignalDefinition<[Arg]>,
  arg: Arg,
): Promise<void> {
  const { workflowIdConflictPolicy: _policy, ...options } = startOptions(services, snapshot);
  await services.temporal.workflow.signalWithStart(WORKFLOW_TYPE, { ...options, signal, signalArgs: [arg] });
}

/**
 * Runs an Update on the deal's workflow (starting it when needed) and turns its refusals into problems. Under an
 * Idempotency-Key (src/http/idempotency.ts) the update id is the key's, so Temporal answers a repeat with the first
 * outcome; a retry first asks for that outcome, which a finished workflow (a closed deal) still has, and sends the
 * Update only when no earlier attempt got it to the workflow.
 */
export async function updateDeal<Ret, Arg>(
  services: Services,
  snapshot: DealSnapshot,
  update: UpdateDefinition<Ret, [Arg]>,
  arg: Arg,
): Promise<Ret> {
  const startWorkflowOperation = new WithStartWorkflowOperation(WORKFLOW_TYPE, startOptions(services, snapshot));
  const idempotent = idempotentUpdate(update.name);
  try {
    return await services.temporal.withDeadline(Date.now() + UPDATE_DEADLINE_MS, async () => {
      let updateId = idempotent?.updateId;
      if (idempotent?.retry) {
        // The attempts under this key so far, in turn: one that succeeded is the answer, one refused is the refusal,
        // and one that failed for a moment (the acquirer did not answer: the deal changed nothing) is made again
        // under the next id, since Temporal answers an update id with its first outcome for good.
        for (let attempt = 1; ; attempt++) {
          updateId = attempt === 1 ? idempotent.updateId : `${idempotent.updateId}#${attempt}`;
          const earlier = await earlierOutcome<Ret>(services, startWorkflowOperation.options.workflowId, updateId);
          if (!earlier) break;
          if ('value' in earlier) return earlier.value;
          if (attempt >= MAX_UPDATE_ATTEMPTS) throw earlier.failure;
        }
      }
      return services.temporal.workflow.executeUpdateWithStart(update, {
        args: [arg],
        startWorkflowOperation,
        ...(updateId ? { updateId } : {}),
      });
    });
  } catch (error) {
    throw toProblem(error);
  }
}

/** How many times one Idempotency-Key's change is made again after failing for a moment. */
const MAX_UPDATE_ATTEMPTS = 20;

/**
 * The outcome of an update an earlier attempt sent, in the workflow's latest run: its value, or its failure when it
 * failed for a moment (to be made again); a refusal is thrown. Undefined when there is no such update.
 */
async function earlierOutcome<Ret>(
  services: Services,
  workflowId: string,
  updateId: string,
): Promise<{ value: Ret } | { failure: unknown } | undefined> {
  try {
    return { value: await services.temporal.workflow.getHandle(workflowId).getUpdateHandle<Ret>(updateId).result() };
  } catch (error) {
    if ((error as Error).name === 'WorkflowUpdateFailedError') {
      const answered = toProblem(error);
      if (answered instanceof Problem && answered.code === 'acquirer_unavailable') return { failure: error };
      throw error;
    }
    if ((error as Error).name === 'WorkflowNotFoundError' || (error as { code?: number }).code === 5) return undefined;
    throw error;
  }
}

/**
 * gRPC codes of a Temporal server that is away, restarting or busy: CANCELLED (1), DEADLINE_EXCEEDED (4),
 * RESOURCE_EXHAUSTED (8), ABORTED (10), UNAVAILABLE (14). An update-with-start is safe to send again after each.
 */
const TRANSIENT_GRPC_CODES = new Set([1, 4, 8, 10, 14]);

/**
 * Errors of the Temporal client that mean "not now" rather than "no": the call timed out, the server was away, or an
 * update it had not yet made durable was lost with a restarting server or worker (the poll for its outcome then finds
 * no such update: WorkflowNotFoundError).
 */
const TRANSIENT_ERRORS = new Set(['WorkflowUpdateRPCTimeoutOrCancelledError', 'ServiceError', 'WorkflowNotFoundError']);

/**
 * What the API answers for an error of a deal's update: a refusal's problem, 503 for what may be sent again, the error
 * itself (a 500) for anything else.
 */
export function toProblem(error: unknown): unknown {
  if ((error as Error).name !== 'WorkflowUpdateFailedError') {
    const code = (error as { code?: number }).code;
    // FAILED_PRECONDITION (9) "Workflow Task in failed state": the deal's workflow task timed out on a starved worker
    // and is being retried. "… due to unexpected workflow task failure": the task that carried the update was lost
    // before it accepted it (its worker died while a local activity ran), so the update left no trace. Either way the
    // update may be sent again: whatever its task asked of the acquirer was keyed, and is asked again with that key.
    const taskFailed =
      code === 9 &&
      /workflow task in failed state|unexpected workflow task failure/i.test((error as Error).message ?? '');
    if (
      TRANSIENT_ERRORS.has((error as Error).name) ||
      (code !== undefined && TRANSIENT_GRPC_CODES.has(code)) ||
      taskFailed
    ) {
      return problem('deal_engine_unavailable', 'The deal could not be processed right now; retry in a few seconds.', {
        headers: { 'Retry-After': '5' },
      });
    }
    return error;
  }
  let unavailable = false;
  for (let cause = (error as WorkflowUpdateFailedError).cause; cause; cause = (cause as { cause?: Error }).cause) {
    const type = (cause as { type?: string }).type;
    // A refusal of the workflow or of an activity (src/temporal/refusal.ts): its type is the code to answer with.
    if (type && isProblemCode(type) && type !== 'acquirer_unavailable') return problem(type, cause.message);
    // The acquirer's tries ran out: a server activity's (histories from before 'acquirer-local'), or local activities',
    // which the workflow tells as acquirer_unavailable. Both answer with the same retry advice.
    unavailable ||= cause.name === 'ActivityFailure' || type === 'acquirer_unavailable';
  }
  if (unavailable) {
    return problem('acquirer_unavailable', 'The payment provider did not answer; retry in a minute.', {
      headers: { 'Retry-After': '60' },
    });
  }
  return error;
}
