// The loop of an outbox drainer (deal notices, webhook deliveries, back-channel logout tokens): a row committed with
// NOTIFY on `channel` wakes it at once, else it polls each second (also when LISTEN fails: polling still sends
// everything, a second later); each pass runs `drain`, and a pass that fails is tried again. A wake that comes while a
// pass runs makes another pass at once. stop() ends the loop after its pass.
import type pg from 'pg';
import type { Db } from './db.ts';
import type { Logger } from './log.ts';

const POLL_MS = 1_000;

export interface Drainer {
  /** Sends what is due now (the tests' and the loop's own step); answers how many it sent. */
  drain(): Promise<number>;
  /** Idempotent: the worker's end and its stop may both ask. */
  stop(): Promise<void>;
}

export interface DrainLoop {
  /** Makes a pass now, or right after the one under way. */
  wake(): void;
  stop(): Promise<void>;
}

export function startDrainLoop(
  db: Db,
  logger: Logger,
  { channel, what, drain }: { channel: string; what: string; drain: () => Promise<number> },
): Drainer & DrainLoop {
  let stopped = false;
  /** Ends the wait between passes; set while the loop waits. */
  let wakeWaiting: (() => void) | undefined;
  /** A wake came since the pass under way began. */
  let woken = false;
  const wake = () => {
    woken = true;
    wakeWaiting?.();
  };
  let listener: pg.PoolClient | undefined;

  async function listen(): Promise<void> {
    try {
      listener = await db.connect();
      listener.on('notification', wake);
      await listener.query(`LISTEN ${channel}`);
    } catch (error) {
      logger.warn({ err: error }, `the ${what} drainer cannot LISTEN; it polls`);
      listener?.release();
      listener = undefined;
    }
  }

  const running = (async () => {
    await listen();
    while (!stopped) {
      woken = false;
      try {
        await drain();
      } catch (error) {
        logger.warn({ err: error }, `the ${what} drainer could not read its table; it tries again`);
      }
      if (stopped) break;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wakeWaiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeWaiting = undefined;
    }
  })();

  let stopping: Promise<void> | undefined;
  return {
    drain,
    wake,
    stop() {
      stopping ??= (async () => {
        stopped = true;
        wakeWaiting?.();
        await running;
        if (listener) {
          await listener.query(`UNLISTEN ${channel}`).catch(() => {});
          listener.release();
        }
      })();
      return stopping;
    },
  };
}
