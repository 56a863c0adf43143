// The deal notices' outbox: a change of a deal writes the notices it calls for (src/deals/notifications.ts's DealNotice)
// in its own transaction, and this drainer, running beside each worker, mails them afterwards. So a change costs its
// caller one write instead of rendering and sending mails, and a notice outlives any crash: a worker that dies while
// sending leaves its claim to lapse, and another (or the same, restarted) sends it. Several drainers share the table
// through claims (FOR UPDATE SKIP LOCKED), never through memory.
import type pg from 'pg';
import type { Services } from '../services.ts';
import type { DbClient } from '../db.ts';
import { createDealNotifier, type DealNotice } from './notifications.ts';

/** How long one drainer holds a claimed notice before another may take it. */
const CLAIM_SECONDS = 60;
/** A notice that failed this many times is logged and dropped: its mails would fail the same way. */
const MAX_ATTEMPTS = 10;
/** Without a NOTIFY (a lost connection), the table is looked at this often anyway. */
const POLL_MS = 1_000;
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

export interface NoticeDrainer {
  /** Sends what is due now (the tests' and the drainer's own step); answers how many notices it sent. */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

export function startNoticeDrainer(
  services: Pick<Services, 'db' | 'logger' | 'config' | 'mailer'> & Services,
): NoticeDrainer {
  const { db, logger } = services;
  const { notifyDealChange } = createDealNotifier(services);
  let stopped = false;
  let wake: (() => void) | undefined;
  let listener: pg.PoolClient | undefined;

  async function drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      const claimed = await db.query<{ id: string; notice: DealNotice; attempts: number }>(
        `UPDATE deal_notices SET claimed_until = now() + make_interval(secs => $1), attempts = attempts + 1
          WHERE id IN (SELECT id FROM deal_notices WHERE claimed_until IS NULL OR claimed_until < now()
                        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING id, notice, attempts`,
        [CLAIM_SECONDS, BATCH],
      );
      if (claimed.rows.length === 0) return sent;
      for (const { id, notice, attempts } of claimed.rows) {
        try {
          await notifyDealChange(notice);
          await db.query('DELETE FROM deal_notices WHERE id = $1', [id]);
          sent++;
        } catch (error) {
          const dropped = attempts >= MAX_ATTEMPTS;
          logger.error(
            { err: error, deal_id: notice.dealId, event_id: notice.eventId, attempts, dropped },
            'a deal notice could not be mailed',
          );
          if (dropped) await db.query('DELETE FROM deal_notices WHERE id = $1', [id]);
        }
      }
    }
  }

  async function listen(): Promise<void> {
    try {
      listener = await db.connect();
      listener.on('notification', () => wake?.());
      await listener.query('LISTEN deal_notices');
    } catch (error) {
      // Polling still sends everything, a second later.
      logger.warn({ err: error }, 'the deal notice drainer cannot LISTEN; it polls');
      listener?.release();
      listener = undefined;
    }
  }

  const running = (async () => {
    await listen();
    while (!stopped) {
      try {
        await drain();
      } catch (error) {
        logger.warn({ err: error }, 'the deal notice drainer could not read its table; it tries again');
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  let stopping: Promise<void> | undefined;
  return {
    drain,
    // Idempotent: the worker's end and its stop may both ask.
    stop() {
      stopping ??= (async () => {
        stopped = true;
        wake?.();
        await running;
        if (listener) {
          await listener.query('UNLISTEN deal_notices').catch(() => {});
          listener.release();
        }
      })();
      return stopping;
    },
  };
}
