// A refusal that crosses Temporal: a non-retryable ApplicationFailure whose `type` is the problem code the API answers
// with, at the status the catalog gives that code (toProblem in src/deals/commands.ts). The deal workflow refuses a verb
// with it; activities refuse what no retry can change (the acquirer's no, a value the records cannot store).
// Workflow-safe: the deal workflow's bundle imports it, so it imports @temporalio/common and a type, nothing else.
import { ApplicationFailure } from '@temporalio/common';
import type { ProblemCode } from '../http/problem-catalog.ts';

export function refuse(
  code: ProblemCode,
  message: string,
  options: { details?: unknown[]; cause?: Error } = {},
): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, nonRetryable: true, ...options });
}
