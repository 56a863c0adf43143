// What request handlers and activities share in one process: configuration, logger, database, Temporal client, mail.
import { Client, Connection } from '@temporalio/client';
import { ConfigError, type Config } from './config.ts';
import { createDb, type Db } from './db.ts';
import type { Logger } from './log.ts';
import { Mailer } from './mail/outbox.ts';
import type { HealthCheck } from './http/app.ts';
import { temporalConnectionOptions } from './temporal/connection.ts';
import { loadMasterKey } from './secrets.ts';
import { createDocumentStore, type DocumentStore } from './documents/index.ts';

export interface Services {
  config: Config;
  logger: Logger;
  db: Db;
  temporal: Client;
  mailer: Mailer;
  /** Encrypts viewable secrets and signs invitation links (secrets.ts). */
  masterKey: Buffer;
  /** The buyers' cloud for deal documents. */
  documents: DocumentStore;
  close(): Promise<void>;
}

export function createServices(config: Config, logger: Logger): Services {
  if (!config.DATABASE_URL) {
    throw new ConfigError(
      'DATABASE_URL is required when a process runs alone (npm start sets it for the embedded database).',
    );
  }
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE, {
    prepare: config.DATABASE_PREPARED_STATEMENTS,
  });
  // Lazy: the servers start and answer /healthz with 503 while Temporal is still coming up.
  const connection = Connection.lazy(temporalConnectionOptions(config));
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const mailer = new Mailer(db, config.SMTP_URL, config.MAIL_FROM);
  return {
    config,
    logger,
    db,
    temporal,
    mailer,
    masterKey: loadMasterKey(config.SVC_MASTER_KEY, config.DATA_DIR),
    documents: createDocumentStore(config),
    async close() {
      mailer.close();
      // The SDK retries a failed call on a timer it cannot cancel: a health probe still retrying when the connection
      // closes would throw "Channel has been shut down" from that timer. The probes end by their deadline; wait for them.
      await Promise.allSettled([...(probesInFlight.get(connection) ?? [])]);
      await connection.close();
      await db.end();
    },
  };
}

/** How long a health probe of Temporal may take, its SDK retries included (/healthz waits 2 s for an answer). */
const TEMPORAL_PROBE_DEADLINE_MS = 2_000;
/** Health probes of each connection still running, so that closing it waits for them (see close()). */
const probesInFlight = new WeakMap<object, Set<Promise<unknown>>>();

/** /healthz is 200 once both PostgreSQL and Temporal (our namespace) answer. */
export function healthChecks(services: Services): HealthCheck[] {
  return [
    { name: 'PostgreSQL', check: () => services.db.query('SELECT 1') },
    {
      name: 'Temporal',
      check: () => {
        const { connection } = services.temporal;
        // Past the deadline a retry fails at once (DEADLINE_EXCEEDED is not retried), so the probe ends by then.
        const probe = connection.withDeadline(Date.now() + TEMPORAL_PROBE_DEADLINE_MS, () =>
          connection.workflowService.describeNamespace({ namespace: services.config.TEMPORAL_NAMESPACE }),
        );
        const running = probesInFlight.get(connection) ?? new Set<Promise<unknown>>();
        probesInFlight.set(connection, running);
        running.add(probe);
        void probe.then(
          () => running.delete(probe),
          () => running.delete(probe),
        );
        return probe;
      },
    },
  ];
}
