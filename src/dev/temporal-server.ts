// A real Temporal server (not the dev server) on PostgreSQL, for `npm run start:cluster` and the faults suite: the
// server and its SQL tool built once with Go beside the CLI's build, the schemas of its two databases set up and
// upgraded with that tool, and the server started with deploy/temporal-cluster.yaml.
import { spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import proto from '@temporalio/proto';
import { ensureSearchAttributes } from '../temporal/search-attributes.ts';
import { buildWithGo, findOnPath, isExecutable, temporalCliCacheDir } from './temporal-cli.ts';
import { assertPortFree } from './ports.ts';
import { stopChild, untilTemporalAnswers, watchChild } from './temporal-dev-server.ts';
import type { PidFile } from './processes.ts';

export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const MODULES = [
  `go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION}`,
  `go.temporal.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
];
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface TemporalServerBuild {
  server: string;
  sqlTool: string;
  /** schema/postgresql/v12 of the server's module source: what the SQL tool applies. */
  schemaDir: string;
}

export function temporalServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(temporalCliCacheDir(env)), `temporal-server-${TEMPORAL_SERVER_VERSION.slice(1)}`);
}

/** The cached build, or builds it (about two minutes on two cores, progress printed). */
export async function resolveTemporalServer(options: {
  say: (message: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<TemporalServerBuild> {
  const env = options.env ?? process.env;
  const dir = temporalServerCacheDir(env);
  const build = {
    server: path.join(dir, 'server'),
    sqlTool: path.join(dir, 'sql'),
    schemaDir: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
  if (isExecutable(build.server) && isExecutable(build.sqlTool) && existsSync(build.schemaDir)) return build;
  const go = findOnPath('go', env);
  if (!go)
    throw new Error(`Go is needed once to build the Temporal server ${TEMPORAL_SERVER_VERSION} (https://go.dev/dl/).`);
  await buildWithGo({
    go,
    modules: MODULES,
    cacheDir: dir,
    what: `the Temporal server ${TEMPORAL_SERVER_VERSION}`,
    hint: 'then run it again',
    say: options.say,
    env,
  });
  // The schema files ship in the module's source, which `go install` has just fetched into the module cache; kept
  // beside the binaries, the build does not depend on that cache staying.
  const moduleCache = execFileSync(go, ['env', 'GOMODCACHE'], { env, encoding: 'utf8' }).trim();
  cpSync(
    path.join(moduleCache, `go.temporal.io/server@${TEMPORAL_SERVER_VERSION}`, 'schema', 'postgresql', 'v12'),
    build.schemaDir,
    { recursive: true },
  );
  return build;
}

export interface TemporalDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** Creates the `temporal` and `temporal_visibility` databases when missing and brings their schemas up to this version. */
export async function setUpTemporalSchemas(
  build: TemporalServerBuild,
  db: TemporalDatabase,
  existing: Set<string>,
): Promise<void> {
  const env = { ...process.env, SQL_PASSWORD: db.password };
  const tool = (database: string, ...args: string[]) =>
    run(
      build.sqlTool,
      ['--plugin', 'postgres12', '--ep', db.host, '-p', String(db.port), '-u', db.user, '--db', database, ...args],
      env,
    );
  for (const [database, folder] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    if (!existing.has(database)) {
      await tool(database, 'create-database');
      await tool(database, 'setup-schema', '-v', '0.0');
    }
    // Applies the versions a database lacks, so a cache built by a newer release upgrades it in place.
    await tool(database, 'update-schema', '-d', path.join(build.schemaDir, folder, 'versioned'));
  }
}

export interface TemporalServerPorts {
  /** The frontend (gRPC), what clients dial. */
  frontend: number;
  /** Its HTTP API, then history, matching and the internal worker, then the four membership ports. */
  others: number[];
}

/** TEMPORAL_PORT and the nine ports after it. */
export function temporalServerPorts(frontend: number): TemporalServerPorts {
  return { frontend, others: Array.from({ length: 8 }, (_, i) => frontend + 1 + i) };
}

export interface RunningTemporalServer {
  address: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startTemporalServer(options: {
  build: TemporalServerBuild;
  db: TemporalDatabase;
  port: number;
  namespace: string;
  dynamicConfig: string;
  pidFile?: PidFile;
  log: (line: string) => void;
}): Promise<RunningTemporalServer> {
  const ports = temporalServerPorts(options.port);
  // Temporal records its services' membership ports in a smallint column: above 32767 the server dies at start with
  // "value … is out of range for type smallint".
  if (options.port + 8 > 32_767)
    throw new Error(
      `TEMPORAL_PORT must be at most 32759 (it and the 8 ports after it are kept in a smallint by Temporal); got ${options.port}`,
    );
  for (const port of [ports.frontend, ...ports.others])
    await assertPortFree('127.0.0.1', port, 'TEMPORAL_PORT (it and the 8 ports after it)');
  const [http, history, matching, worker, ...membership] = ports.others;
  const env = {
    ...process.env,
    TEMPORAL_DB_HOST: options.db.host,
    TEMPORAL_DB_PORT: String(options.db.port),
    TEMPORAL_DB_USER: options.db.user,
    TEMPORAL_DB_PASSWORD: options.db.password,
    TEMPORAL_FRONTEND_PORT: String(ports.frontend),
    TEMPORAL_FRONTEND_HTTP_PORT: String(http),
    TEMPORAL_HISTORY_PORT: String(history),
    TEMPORAL_MATCHING_PORT: String(matching),
    TEMPORAL_WORKER_PORT: String(worker),
    TEMPORAL_FRONTEND_MEMBERSHIP_PORT: String(membership[0]),
    TEMPORAL_HISTORY_MEMBERSHIP_PORT: String(membership[1]),
    TEMPORAL_MATCHING_MEMBERSHIP_PORT: String(membership[2]),
    TEMPORAL_WORKER_MEMBERSHIP_PORT: String(membership[3]),
    TEMPORAL_DYNAMIC_CONFIG: options.dynamicConfig,
  };
  // --root and --env name deploy/temporal-cluster.yaml; no authorizer, as on a developer's machine.
  const child = spawn(
    options.build.server,
    ['--root', ROOT, '--config', 'deploy', '--env', 'temporal-cluster', '--allow-no-auth', 'start'],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const { exited, output } = watchChild(child, { pidFile: options.pidFile, onLine: options.log });
  const address = `127.0.0.1:${ports.frontend}`;
  try {
    await waitForNamespace(address, options.namespace, exited, 90_000);
  } catch (error) {
    await stopChild(child, exited, 15_000);
    throw new Error(`The Temporal server did not start: ${(error as Error).message}\nIts output:\n${output().trim()}`, {
      cause: error,
    });
  }
  return { address, pid: child.pid!, stop: () => stopChild(child, exited, 15_000) };
}

/** Waits for the frontend, registers the namespace (3 days of retention after close) and our search attributes. */
async function waitForNamespace(address: string, namespace: string, exited: Promise<number | null>, timeoutMs: number) {
  await untilTemporalAnswers(address, exited, timeoutMs, async (connection) => {
    await connection.workflowService
      .registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: proto.google.protobuf.Duration.fromObject({ seconds: 3 * 24 * 3600 }),
      })
      .catch((error) => {
        // 6 = ALREADY_EXISTS: a later start of the same cluster.
        if ((error as { code?: number }).code !== 6) throw error;
      });
    await ensureSearchAttributes(connection, namespace);
  });
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `${path.basename(file)} ${args.filter((arg) => !arg.startsWith('--pw')).join(' ')} exited with ${code}:\n${output.trim()}`,
            ),
          ),
    );
  });
}

// Run directly (`.ci/run` does), it builds the server once and prints where it is.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  resolveTemporalServer({ say: (message) => console.error(message) })
    .then((build) => console.log(build.server))
    .catch((error: Error) => {
      console.error(error.message);
      process.exit(1);
    });
}
