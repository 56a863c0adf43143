// What needs an operator's attention, for the console's home page and its header: the open disputes (how many, the
// oldest one's age), webhook deliveries failing in the last 24 hours (by marketplace), and what the last finished
// reconciliation with the acquirer found.
import type { DbClient } from '../db.ts';

export interface Attention {
  disputes: { open: number; oldestOpenedAt: Date | null };
  webhooks: { failing: number; marketplaces: { id: string; name: string; failing: number }[] };
  reconciliation: { runAt: Date; mismatches: number; errors: number } | null;
}

/** How many disputes wait for an arbiter (the header's count beside "Disputes"). */
export async function openDisputeCount(db: DbClient): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deal_disputes WHERE status = 'open'`);
  return rows[0].n;
}

export async function attention(db: DbClient): Promise<Attention> {
  const [disputes, failing, reconciliation] = await Promise.all([
    db.query<{ open: number; oldest: Date | null }>(
      `SELECT count(*)::int AS open, min(opened_at) AS oldest FROM deal_disputes WHERE status = 'open'`,
    ),
    db.query<{ id: string; name: string; failing: number }>(
      `SELECT m.id, m.name, count(*)::int AS failing
         FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id JOIN marketplaces m ON m.id = e.marketplace_id
        WHERE d.status IN ('retrying', 'failed') AND d.updated_at > now() - interval '24 hours'
        GROUP BY m.id, m.name ORDER BY failing DESC, m.name LIMIT 6`,
    ),
    db.query<{ run_at: Date; mismatches: number; errors: number }>(
      `SELECT coalesce(finished_at, started_at) AS run_at, mismatches, errors FROM reconciliation_runs
        WHERE status = 'finished' ORDER BY finished_at DESC NULLS LAST LIMIT 1`,
    ),
  ]);
  const total = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries
      WHERE status IN ('retrying', 'failed') AND updated_at > now() - interval '24 hours'`,
  );
  const last = reconciliation.rows[0];
  return {
    disputes: { open: disputes.rows[0].open, oldestOpenedAt: disputes.rows[0].oldest },
    webhooks: { failing: total.rows[0].n, marketplaces: failing.rows },
    reconciliation: last ? { runAt: last.run_at, mismatches: last.mismatches, errors: last.errors } : null,
  };
}
