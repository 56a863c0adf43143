// The Temporal worker: bundles workflows/, registers activities/, polls the configured task queue, runs the outboxes'
// drainers (deal notices, webhooks, logout tokens), drains on stop.
// Activities that keep failing are logged and counted (temporal/activity-alerts.ts); its metrics are served at
// WORKER_METRICS_ADDRESS. On start it asks the open deals to re-assert their records (after a crash PostgreSQL may
// lack writes their workflows acted on).
import { createRequire } from 'node:module';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import type { LogLevel, LogMetadata } from '@temporalio/common';
import type { Logger } from './log.ts';
import type { Services } from './services.ts';
import { startNoticeDrainer } from './deals/notice-outbox.ts';
import { startLogoutDrainer } from './sso/backchannel.ts';
import { startWebhookDrainer } from './webhooks/outbox.ts';
import { createActivities } from '../activities/index.ts';
import { reassertSignal } from '../workflows/deals/deal-messages.ts';
import { activityAlerts } from './temporal/activity-alerts.ts';
import { temporalConnectionOptions } from './temporal/connection.ts';
import { ensureSearchAttributes } from './temporal/search-attributes.ts';
import { ensureReconciliationSchedule } from './money/reconciliation.ts';

/** How long activities in flight get to finish when the worker stops (then they are cancelled). */
const SHUTDOWN_GRACE_MS = 20_000;
/** How long past that a stop waits for the worker's tasks before going on without them. */
const SHUTDOWN_WAIT_PAST_GRACE_MS = 5_000;

export const WORKFLOWS_PATH = createRequire(import.meta.url).resolve('../workflows/index.ts');

export interface RunningWorker {
  worker: Worker;
  /**
   * Stops polling, lets running activities and workflow tasks finish (activities get the grace time, then are
   * cancelled), then closes the connection; tasks still running 5 s past the grace time are left unfinished.
   */
  stop(): Promise<void>;
}

export async function startWorker(
  services: Services,
  options: Pick<WorkerOptions, 'workflowBundle'> = {},
): Promise<RunningWorker> {
  const { config, logger } = services;
  installRuntime(logger, config.WORKER_METRICS_ADDRESS);
  await registerSearchAttributes(services);
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(services),
    interceptors: { activity: [activityAlerts(logger, config.ACTIVITY_ALERT_ATTEMPTS)] },
    shutdownGraceTime: `${SHUTDOWN_GRACE_MS}ms`,
    ...(config.WORKER_WORKFLOW_THREADS !== undefined ? { workflowThreadPoolSize: config.WORKER_WORKFLOW_THREADS } : {}),
    ...(config.WORKER_MAX_CACHED_WORKFLOWS !== undefined
      ? { maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS }
      : {}),
  });
  const running = worker.run();
  running.catch((error: unknown) => logger.error({ err: error }, 'worker stopped with an error'));
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE }, 'worker polling');
  const sweep = { stopped: false };
  const reasserting = reassertOpenDeals(services, sweep);
  // The mails of deal changes, sent from their outbox after the changes committed. The drainer lives as long as the
  // worker: a worker the Temporal runtime shut down itself (a signal before the process's own handler was set) must
  // not leave it holding the process open.
  const notices = startNoticeDrainer(services);
  void running.finally(() => notices.stop());
  // Webhook deliveries, sent from their outbox after the changes that made them committed (src/webhooks/outbox.ts).
  const webhooks = startWebhookDrainer(services);
  void running.finally(() => webhooks.stop());
  // Back-channel logout tokens, POSTed to the sites after a sign-out committed (src/sso/backchannel.ts).
  const logouts = startLogoutDrainer(services);
  void running.finally(() => logouts.stop());
  await ensureReconciliationSchedule(services);
  return {
    worker,
    async stop() {
      sweep.stopped = true;
      await reasserting;
      await notices.stop();
      await webhooks.stop();
      await logouts.stop();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      // Temporal's core keeps retrying a local activity after shutdown was asked, and again after the grace time
      // cancels it (sdk-rust issue 709, kept as designed): a deal's write retrying against a PostgreSQL that is gone
      // would hold the worker's shutdown for ever, and forcing it (shutdownForceTime) crashes the workflow thread.
      // So the stop waits a little past the grace time and then goes on: the process exits with the task unfinished,
      // which is a worker lost mid-task, what the deal workflows and their versioned writes recover from on the next.
      let waiting: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        running.then(
          () => true,
          () => true,
        ),
        new Promise<false>((resolve) => {
          waiting = setTimeout(() => resolve(false), SHUTDOWN_GRACE_MS + SHUTDOWN_WAIT_PAST_GRACE_MS);
        }),
      ]);
      clearTimeout(waiting);
      if (!finished) {
        logger.warn(
          { waitedMs: SHUTDOWN_GRACE_MS + SHUTDOWN_WAIT_PAST_GRACE_MS },
          'the worker still had tasks running (a local activity retrying?); stopping without them',
        );
        return;
      }
      await connection.close();
    },
  };
}

/**
 * Signals every open deal workflow of our task queue to write its deal to PostgreSQL once more (idempotent upserts):
 * a machine that crashed may have lost the last writes they acted on. Never fails the start; it only logs. A stop of
 * the worker ends it after the signal in flight.
 */
async function reassertOpenDeals(services: Services, sweep: { stopped: boolean }): Promise<void> {
  const { temporal, config, logger } = services;
  const queue = config.TEMPORAL_TASK_QUEUE.replace(/['\\]/g, '\\$&');
  const query = `WorkflowType = 'dealWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${queue}'`;
  let signalled = 0;
  try {
    for await (const execution of temporal.workflow.list({ query })) {
      if (sweep.stopped) break;
      // One that ended meanwhile has nothing to re-assert.
      await temporal.workflow
        .getHandle(execution.workflowId, execution.runId)
        .signal(reassertSignal)
        .then(
          () => signalled++,
          () => {},
        );
    }
    if (signalled > 0) logger.info({ deals: signalled }, 'open deals asked to re-assert their records');
  } catch (error) {
    logger.warn({ err: error }, 'could not ask the open deals to re-assert their records');
  }
}

/** Clusters other than our dev server may lack the deal search attributes; Temporal Cloud manages them itself. */
async function registerSearchAttributes(services: Services): Promise<void> {
  try {
    const added = await ensureSearchAttributes(services.temporal.connection, services.config.TEMPORAL_NAMESPACE);
    if (added.length > 0) services.logger.info({ added }, 'search attributes registered');
  } catch (error) {
    services.logger.warn({ err: error }, 'could not check search attributes; register them on the cluster (README)');
  }
}

/**
 * The SDK's own logs (bundling, state changes) go through pino; its chatty INFO becomes our debug. With a metrics
 * address, the SDK's Prometheus exporter serves the worker's metrics (Temporal's own and temporal/activity-alerts.ts's).
 */
function installRuntime(logger: Logger, metricsAddress: string | undefined): void {
  const sdk = logger.child({ component: 'temporal-sdk' });
  const levels = { TRACE: 'trace', DEBUG: 'debug', INFO: 'debug', WARN: 'warn', ERROR: 'error' } as const;
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => sdk[levels[level]](meta ?? {}, message);
  try {
    Runtime.install({
      logger: {
        log,
        trace: (message, meta) => log('TRACE', message, meta),
        debug: (message, meta) => log('DEBUG', message, meta),
        info: (message, meta) => log('INFO', message, meta),
        warn: (message, meta) => log('WARN', message, meta),
        error: (message, meta) => log('ERROR', message, meta),
      },
      ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } } : {}),
    });
  } catch {
    // Already installed in this process (a second worker, as in tests): the first logger and exporter stay.
  }
}
