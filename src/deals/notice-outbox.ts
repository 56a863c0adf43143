// The deal notices' outbox: a change of a deal writes the notices it calls for (src/deals/notifications.ts's DealNotice)
// in its own transaction, and this drainer, running beside each worker, mails them afterwards. So a change costs its
// caller one write instead of rendering and sending mails, and a notice outlives any crash: a worker that dies while
// sending leaves its claim to lapse, and another (or the same, restarted) sends it. Several drainers share the table
// through claims (FOR UPDATE SKIP LOCKED), never through memory.
import { startDrainLoop, type Drainer } from '../outbox-drainer.ts';
import type { Services } from '../services.ts';
import type { DbClient } from '../db.ts';
import { createDealNotifier, type DealNotice } from './notifications.ts';

/** How long one drainer holds a claimed notice before another may take it. */
const CLAIM_SECONDS = 60;
/** A notice that failed this many times is logged and dropped: its mails would fail the same way. */
export const MAX_ATTEMPTS = 10;
/** Notices claimed at once: each batch reads what its mails need in one statement and writes them in another. */
const BATCH = 20;

/** Writes a change's notices, in the caller's transaction; each is keyed by its event (or message) id. */
export async function enqueueNotices(client: DbClient, notices: DealNotice[]): Promise<void> {
  if (notices.length === 0) return;
  await client.query(
    `INSERT INTO deal_notices (id, deal_id, notice)
     SELECT (n->>'eventId')::uuid, (n->>'dealId')::uuid, n FROM jsonb_array_elements($1::jsonb) AS n
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(notices)],
  );
}

/** drain() answers how many notices it sent. */
export type NoticeDrainer = Drainer;

export function startNoticeDrainer(
  services: Pick<Services, 'db' | 'logger' | 'config' | 'mailer'> & Services,
): NoticeDrainer {
  const { db, logger } = services;
  const { notifyDealChanges } = createDealNotifier(services);

  async function drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      const claimed = await db.query<{ id: string; notice: DealNotice; attempts: number; created_at: Date }>(
        `UPDATE deal_notices SET claimed_until = now() + make_interval(secs => $1), attempts = attempts + 1
          WHERE id IN (SELECT id FROM deal_notices WHERE claimed_until IS NULL OR claimed_until < now()
                        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING id, notice, attempts, created_at`,
        [CLAIM_SECONDS, BATCH],
      );
      if (claimed.rows.length === 0) return sent;
      // In the order they were written (RETURNING keeps no order: sorted here), so a person's mails about one deal are
      // queued in the order its changes happened.
      const rows = [...claimed.rows].sort((a, b) => +a.created_at - +b.created_at || a.id.localeCompare(b.id));
      const outcomes = await notifyDealChanges(rows.map((row) => row.notice)).catch((reason: unknown) =>
        rows.map((): PromiseRejectedResult => ({ status: 'rejected', reason })),
      );
      const done: string[] = [];
      rows.forEach(({ id, notice, attempts }, index) => {
        const outcome = outcomes[index];
        if (outcome.status === 'fulfilled') {
          done.push(id);
          sent++;
          return;
        }
        const dropped = attempts >= MAX_ATTEMPTS;
        logger.error(
          { err: outcome.reason, deal_id: notice.dealId, event_id: notice.eventId, attempts, dropped },
          'a deal notice could not be mailed',
        );
        if (dropped) done.push(id);
      });
      // One statement for the batch; a notice left again waits for its claim to lapse and is mailed once more.
      if (done.length > 0) await db.query('DELETE FROM deal_notices WHERE id = ANY($1::uuid[])', [done]);
      // A short batch was all that was due: a notice written since wakes the loop with its NOTIFY, and one whose claim
      // lapses is found by the loop's poll, so no claim that finds nothing ends the pass.
      if (claimed.rows.length < BATCH) return sent;
    }
  }

  return startDrainLoop(db, logger, { channel: 'deal_notices', what: 'deal notice', drain });
}
