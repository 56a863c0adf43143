// Activities of the daily reconciliation (src/money/reconciliation.ts): open the run, reconcile one batch of deals
// against their acquirers, close the run (and set the worker's gauges svc_reconciliation_mismatches and _errors). A batch heartbeats after each call to an acquirer and records how far it
// got, so an attempt that is retried (the worker restarted, a heartbeat missed) goes on from there instead of asking
// the acquirer about the same deals again.
import { activityInfo, cancellationSignal, heartbeat, metricMeter } from '@temporalio/activity';
import type { Services } from '../../src/services.ts';
import { escrowProvider } from '../../src/escrow/providers.ts';
import type { EscrowProvider } from '../../src/escrow/provider.ts';
import {
  RECENTLY_CLOSED_DAYS,
  beginRun,
  checkDeal,
  dealsToReconcile,
  finishRun,
  recordFindings,
  type LiveProviderName,
  type RunRecord,
} from '../../src/money/reconciliation.ts';

/** Deals read per batch: one activity's worth, a few minutes of acquirer calls at most. */
export const RECONCILIATION_BATCH = 200;
/** Deals asked about at once: YooKassa takes a few parallel requests from one shop well, not hundreds. */
const PARALLEL_DEALS = 8;

export interface BatchInput {
  runId: string;
  /** The last deal id of the previous batch; null for the first. */
  after: string | null;
  /** Closed deals that changed since this moment (ISO 8601) are reconciled too. */
  closedSince: string;
}

export interface BatchResult {
  /** The last deal id of this batch, to continue after; null when no deal is left. */
  next: string | null;
  deals: number;
  checks: number;
}

/** How a run ended, as its workflow answers. */
export interface RunSummary {
  runId: string;
  status: RunRecord['status'];
  dealsChecked: number;
  checks: number;
  mismatches: number;
  errors: number;
}

/** What a batch's heartbeat records: where it got, and what it counted up to there. */
interface Progress {
  after: string | null;
  deals: number;
  checks: number;
}

export function createReconciliationActivities(services: Services) {
  return {
    /** Opens the run (a manual run's row is there already) and says from when closed deals count. */
    async beginReconciliation(input: {
      runId: string;
      trigger: RunRecord['trigger'];
      workflowId: string;
    }): Promise<{ closedSince: string }> {
      const run = await beginRun(services.db, input);
      return {
        closedSince: new Date(run.started_at.getTime() - RECENTLY_CLOSED_DAYS * 24 * 3600 * 1000).toISOString(),
      };
    },

    async reconcileBatch(input: BatchInput): Promise<BatchResult> {
      // A retried attempt starts where the last one's heartbeat says it got, with its counts.
      const resumed = activityInfo().heartbeatDetails as Progress | undefined;
      const progress: Progress = resumed ?? { after: input.after, deals: 0, checks: 0 };
      const deals = await dealsToReconcile(services.db, {
        after: progress.after,
        closedSince: input.closedSince,
        limit: RECONCILIATION_BATCH - progress.deals,
      });
      const providers = new Map<LiveProviderName, EscrowProvider>();
      // Made on first use: a provider that is not configured throws here, inside the check, as that check's error.
      const providerOf = (name: LiveProviderName) => {
        if (!providers.has(name)) providers.set(name, escrowProvider(name, services.config));
        return providers.get(name)!;
      };
      const signal = cancellationSignal();
      for (let start = 0; start < deals.length; start += PARALLEL_DEALS) {
        if (signal.aborted) throw signal.reason;
        const chunk = deals.slice(start, start + PARALLEL_DEALS);
        const checked = await Promise.all(
          chunk.map(async (deal) => ({
            deal,
            ...(await checkDeal(deal, providerOf, () => heartbeat({ ...progress }))),
          })),
        );
        await recordFindings(services.db, input.runId, checked);
        progress.after = chunk.at(-1)!.dealId;
        progress.deals += chunk.length;
        progress.checks += checked.reduce((total, deal) => total + deal.checks, 0);
        heartbeat({ ...progress });
      }
      // A batch shorter than asked is the last one.
      const full = progress.deals >= RECONCILIATION_BATCH;
      return { next: full ? progress.after : null, deals: progress.deals, checks: progress.checks };
    },

    async finishReconciliation(input: {
      runId: string;
      dealsChecked: number;
      checks: number;
      error?: string;
    }): Promise<RunSummary> {
      const run = await finishRun(services.db, input);
      // The worker's metrics (WORKER_METRICS_ADDRESS) carry what the last run found, for an alert on a mismatch.
      metricMeter
        .createGauge(
          'svc_reconciliation_mismatches',
          'int',
          'findings',
          'Mismatches with the acquirer the last reconciliation run found',
        )
        .set(run.mismatches);
      metricMeter
        .createGauge(
          'svc_reconciliation_errors',
          'int',
          'findings',
          'Checks the acquirer did not answer in the last reconciliation run',
        )
        .set(run.errors);
      return {
        runId: run.id,
        status: run.status,
        dealsChecked: run.deals_checked,
        checks: run.checks,
        mismatches: run.mismatches,
        errors: run.errors,
      };
    },
  };
}
