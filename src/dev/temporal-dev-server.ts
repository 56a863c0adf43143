// The Temporal dev server for one machine: state in a SQLite file, the Web UI on, our search attributes registered,
// and the dynamic config that Updates and update-with-start need.
import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.ts';
import { assertPortFree } from './ports.ts';
import type { PidFile } from './processes.ts';

const DYNAMIC_CONFIG = {
  'frontend.enableUpdateWorkflowExecution': true,
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
  'frontend.enableExecuteMultiOperation': true,
  // A workflow task that schedules an activity gets the activity back in its answer when this worker has a free slot:
  // a webhook delivery starts at once, without a round trip through matching (docs/performance.md).
  'system.enableActivityEagerExecution': true,
};

export interface TemporalDevServer {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

export async function startTemporalDevServer(options: {
  cli: string;
  /** SQLite file for state that survives restarts; in memory without it (tests). */
  dbFile?: string;
  host: string;
  port: number;
  uiPort: number;
  namespace: string;
  startTimeoutMs?: number;
  /** Where its pid is kept while it runs, so that a later start can stop it if we die without stopping it. */
  pidFile?: PidFile;
}): Promise<TemporalDevServer> {
  await assertPortFree(options.host, options.port, 'TEMPORAL_PORT');
  await assertPortFree(options.host, options.uiPort, 'TEMPORAL_UI_PORT');
  const args = [
    'server',
    'start-dev',
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    // WAL with synchronous=NORMAL: a crash of any process loses nothing; only a power cut can lose the last moments.
    // Without it every history write waits for an fsync and the disk, not the CPU, bounds the whole service.
    ...(options.dbFile ? ['--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL'] : []),
    '--ip',
    options.host,
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--namespace',
    options.namespace,
    '--log-level',
    'error',
    ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    ...Object.entries(DYNAMIC_CONFIG).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${JSON.stringify(value)}`,
    ]),
  ];
  const child = spawn(options.cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const { exited, output } = watchChild(child, { pidFile: options.pidFile });

  const address = `${options.host}:${options.port}`;
  try {
    await waitUntilServing(address, options.namespace, exited, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await stopChild(child, exited);
    throw new Error(
      `The Temporal dev server did not start: ${(error as Error).message}\nIts output:\n${output().trim()}`,
      { cause: error },
    );
  }
  return {
    address,
    uiUrl: `http://${options.host}:${options.uiPort}`,
    stop: () => stopChild(child, exited),
  };
}

async function waitUntilServing(address: string, namespace: string, exited: Promise<number | null>, timeoutMs: number) {
  await untilTemporalAnswers(address, exited, timeoutMs, (connection) =>
    connection.workflowService.describeNamespace({ namespace }),
  );
}

/**
 * Retries `ready` on a fresh connection to the frontend until it succeeds, the process exits, or the time is up: what
 * the dev server and the cluster's Temporal server both need before anything else may use them.
 */
export async function untilTemporalAnswers(
  address: string,
  exited: Promise<number | null>,
  timeoutMs: number,
  ready: (connection: Connection) => Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  for (;;) {
    if (exitCode !== undefined) throw new Error(`it exited with code ${exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await ready(connection);
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`not serving after ${timeoutMs} ms (${(error as Error).message})`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Keeps the pid file while the server runs and the last lines of its output for an error message (each line also to
 * `onLine`): what the dev server and the cluster's Temporal server both need of their child process.
 */
export function watchChild(child: ChildProcess, options: { pidFile?: PidFile; onLine?: (line: string) => void }) {
  if (child.pid !== undefined) options.pidFile?.write(child.pid);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-6000);
    if (options.onLine) for (const line of chunk.toString().split('\n')) if (line.trim()) options.onLine(line);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      options.pidFile?.remove();
      resolve(code);
    }),
  );
  return { exited, output: () => output };
}

/** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, exited: Promise<number | null>, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
