// Which changes of the deal workflow's code a run has taken. Workflow-safe: only @temporalio/workflow.
//
// A history records a marker (and Temporal a search-attribute upsert) where a run first asks patched() for a change:
// seven changes made that fourteen events of every new deal, each a visibility write. A run started by code that has
// all of them says so with its input's patchLevel, and takes them without asking: only histories from before a change
// ask patched() for it, at the same places as they always did, so they replay as they ran.
import { patched } from '@temporalio/workflow';

/**
 * Each change, with the patch level from which a run takes it without asking. A new change gets no level (runs ask
 * patched() for it) until the code that adds it raises PATCH_LEVEL and lists it here: a run started at level 1 must
 * still ask for a change made after it started.
 */
const TAKEN_AT: Record<string, number> = {
  'local-records': 1,
  'reassert-records': 1,
  'exclusive-recheck': 1,
  'deal-people': 1,
  'start-from-records': 1,
  payouts: 1,
  'arbiter-decides-disputes': 1,
  'webhook-outbox': 1,
  'acquirer-local': 2,
  'payout-local': 3,
};

/** What new runs are started with (src/deals/commands.ts) and what a run continuing as new carries on. */
export const PATCH_LEVEL = 3;

/** patched(id), or true without a marker when the run's level includes the change. */
export function taken(patchLevel: number | undefined, id: string): boolean {
  const level = TAKEN_AT[id];
  return (level !== undefined && (patchLevel ?? 0) >= level) || patched(id);
}
