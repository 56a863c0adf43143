// What the API answers when a deal's update fails (src/deals/commands.ts toProblem): a refusal's own problem, 503 with
// its retry advice for what may be sent again, and the error itself (a 500) for anything else.
import { describe, expect, it } from 'vitest';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { toProblem } from '../../src/deals/commands.ts';
import { Problem } from '../../src/http/problem.ts';

/** A gRPC error as the Temporal client throws it. */
const grpcError = (code: number, message: string) => Object.assign(new Error(message), { code });
const updateFailed = (cause: Error) => new WorkflowUpdateFailedError('Workflow Update failed', cause);
const answer = (error: unknown) => {
  const answered = toProblem(error);
  return answered instanceof Problem
    ? { status: answered.status, code: answered.code, headers: answered.headers }
    : { passedOn: answered === error };
};

describe('an update the engine could not run now', () => {
  it.each([
    'Workflow Task in failed state.',
    'Unable to perform workflow execution update due to unexpected workflow task failure.',
  ])('is 503 deal_engine_unavailable, to be sent again in 5 s, on FAILED_PRECONDITION "%s"', (message) => {
    expect(answer(grpcError(9, message))).toEqual({
      status: 503,
      code: 'deal_engine_unavailable',
      headers: { 'Retry-After': '5' },
    });
  });

  it('is 503 on an unavailable server or a timed-out call', () => {
    expect(answer(grpcError(14, 'UNAVAILABLE'))).toMatchObject({ status: 503, code: 'deal_engine_unavailable' });
    expect(answer(grpcError(4, 'DEADLINE_EXCEEDED'))).toMatchObject({ status: 503 });
  });

  it('passes on another FAILED_PRECONDITION, which no retry changes', () => {
    expect(answer(grpcError(9, 'Workflow execution already completed.'))).toEqual({ passedOn: true });
  });
});

describe('an update the workflow failed', () => {
  it('answers a refusal with its code', () => {
    const refused = ApplicationFailure.create({ type: 'acquirer_refused', message: 'No', nonRetryable: true });
    expect(answer(updateFailed(refused))).toMatchObject({ status: 502, code: 'acquirer_refused' });
  });

  it('answers 503 acquirer_unavailable, to be sent again in a minute, when a server activity’s tries ran out', () => {
    const exhausted = new ActivityFailure(
      'Activity task failed',
      'createEscrowPayment',
      '5',
      RetryState.MAXIMUM_ATTEMPTS_REACHED,
      'worker',
      ApplicationFailure.create({ message: 'The acquirer answered 500' }),
    );
    expect(answer(updateFailed(exhausted))).toEqual({
      status: 503,
      code: 'acquirer_unavailable',
      headers: { 'Retry-After': '60' },
    });
  });

  it('answers the same when local activities’ tries ran out and the workflow said so', () => {
    const told = ApplicationFailure.create({
      type: 'acquirer_unavailable',
      message: 'The payment provider did not answer; retry in a minute.',
      nonRetryable: true,
      cause: ApplicationFailure.create({ message: 'The acquirer answered 500' }),
    });
    expect(answer(updateFailed(told))).toEqual({
      status: 503,
      code: 'acquirer_unavailable',
      headers: { 'Retry-After': '60' },
    });
  });

  it('passes on a failure that is neither a refusal nor the acquirer’s silence', () => {
    expect(answer(updateFailed(ApplicationFailure.create({ message: 'Something else' })))).toEqual({ passedOn: true });
  });
});
