// The Temporal worker: bundles workflows/, registers activities/, polls the configured task queue, drains on stop.
import { createRequire } from 'node:module';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import type { LogLevel, LogMetadata } from '@temporalio/common';
import type { Logger } from './log.ts';
import type { Services } from './services.ts';
import { createActivities } from '../activities/index.ts';
import { temporalConnectionOptions } from './temporal/connection.ts';
import { ensureSearchAttributes } from './temporal/search-attributes.ts';

export const WORKFLOWS_PATH = createRequire(import.meta.url).resolve('../workflows/index.ts');

export interface RunningWorker {
  worker: Worker;
  /** Stops polling, lets running activities and workflow tasks finish, then closes the connection. */
  stop(): Promise<void>;
}

export async function startWorker(
  services: Services,
  options: Pick<WorkerOptions, 'workflowBundle'> = {},
): Promise<RunningWorker> {
  const { config, logger } = services;
  installSdkLogger(logger);
  await registerSearchAttributes(services);
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(services),
    shutdownGraceTime: '20s',
  });
  const running = worker.run();
  running.catch((error: unknown) => logger.error({ err: error }, 'worker stopped with an error'));
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE }, 'worker polling');
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => {});
      await connection.close();
    },
  };
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

/** The SDK's own logs (bundling, state changes) go through pino; its chatty INFO becomes our debug. */
function installSdkLogger(logger: Logger): void {
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
    });
  } catch {
    // Already installed in this process (a second worker, as in tests): the first logger stays.
  }
}
