// The Temporal Web UI for `npm run start:cluster`, whose real Temporal server has none (the dev server of `npm start`
// serves its own): Temporal's UI server built once with Go beside the server's build, its web assets embedded in the
// binary, and started on a config file of its own in the cluster's DATA_DIR.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWithGo, findOnPath, isExecutable, temporalCliCacheDir } from './temporal-cli.ts';
import { assertPortFree } from './ports.ts';
import { stopChild, watchChild } from './temporal-dev-server.ts';
import type { PidFile } from './processes.ts';

export const TEMPORAL_UI_SERVER_VERSION = 'v2.42.1';
const MODULE = `github.com/temporalio/ui-server/v2/cmd/server@${TEMPORAL_UI_SERVER_VERSION}`;

/** The folder under DATA_DIR that holds the UI server's config, and the environment (its file's name) it reads. */
export const UI_CONFIG_DIR = 'temporal-ui';
const UI_ENV = 'cluster';

export function temporalUiServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(temporalCliCacheDir(env)), `temporal-ui-server-${TEMPORAL_UI_SERVER_VERSION.slice(1)}`);
}

/** The cached binary, or builds it (progress printed). */
export async function resolveTemporalUiServer(options: {
  say: (message: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<string> {
  const env = options.env ?? process.env;
  const dir = temporalUiServerCacheDir(env);
  // `go install …/cmd/server` names the binary after its package's folder.
  const binary = path.join(dir, 'server');
  if (isExecutable(binary)) return binary;
  const go = findOnPath('go', env);
  if (!go)
    throw new Error(
      `Go is needed once to build the Temporal UI server ${TEMPORAL_UI_SERVER_VERSION} (https://go.dev/dl/).`,
    );
  await buildWithGo({
    go,
    modules: [MODULE],
    cacheDir: dir,
    what: `the Temporal UI server ${TEMPORAL_UI_SERVER_VERSION}`,
    hint: 'then run it again',
    say: options.say,
    env,
  });
  return binary;
}

export interface RunningTemporalUiServer {
  /** What a browser opens: the console's links start with it. */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startTemporalUiServer(options: {
  binary: string;
  /** Where its config file is written (DATA_DIR/temporal-ui/cluster.yaml). */
  dataDir: string;
  /** The address it listens on (HOST). */
  host: string;
  port: number;
  /** The Temporal frontend it talks to, host:port. */
  temporalAddress: string;
  namespace: string;
  pidFile?: PidFile;
  log: (line: string) => void;
}): Promise<RunningTemporalUiServer> {
  await assertPortFree(options.host, options.port, 'TEMPORAL_UI_PORT');
  const configDir = path.join(options.dataDir, UI_CONFIG_DIR);
  mkdirSync(configDir, { recursive: true });
  // The UI server reads DIR/base.yaml and DIR/<env>.yaml; ours is all of it. Strings as JSON, which YAML reads as
  // quoted strings. No auth, as on a developer's machine; plain http, so its CSRF cookie must not be marked Secure or
  // the browser drops it and every action the UI posts is refused.
  const yaml = [
    `temporalGrpcAddress: ${JSON.stringify(options.temporalAddress)}`,
    `host: ${JSON.stringify(options.host)}`,
    `port: ${options.port}`,
    'enableUi: true',
    `defaultNamespace: ${JSON.stringify(options.namespace)}`,
    'auth:',
    '  enabled: false',
    'cors:',
    '  cookieInsecure: true',
    '',
  ].join('\n');
  writeFileSync(path.join(configDir, `${UI_ENV}.yaml`), yaml);
  const child = spawn(
    options.binary,
    ['--root', options.dataDir, '--config', UI_CONFIG_DIR, '--env', UI_ENV, 'start'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const { exited, output } = watchChild(child, { pidFile: options.pidFile, onLine: options.log });
  const linkHost = options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  const url = `http://${linkHost}:${options.port}`;
  try {
    await untilUiAnswers(url, exited, 30_000);
  } catch (error) {
    await stopChild(child, exited);
    throw new Error(
      `The Temporal UI server did not start: ${(error as Error).message}\nIts output:\n${output().trim()}`,
      { cause: error },
    );
  }
  return { url, pid: child.pid!, stop: () => stopChild(child, exited) };
}

/** Polls GET / until it answers 200 (the UI's page), the process exits, or the time is up. */
async function untilUiAnswers(url: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  let last: string;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`it exited with code ${exitCode}`);
    try {
      const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) });
      await response.body?.cancel();
      if (response.status === 200) return;
      last = `GET / answered ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${url}/ not answering 200 after ${timeoutMs} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

// Run directly, it builds the UI server once and prints where it is: how a machine gets the build ahead of a run.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  resolveTemporalUiServer({ say: (message) => console.error(message) })
    .then((binary) => console.log(binary))
    .catch((error: Error) => {
      console.error(error.message);
      process.exit(1);
    });
}
