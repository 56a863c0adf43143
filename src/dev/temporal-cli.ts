// Finds the Temporal CLI (it has no npm package): TEMPORAL_CLI, then `temporal` on PATH, then our cached build,
// and otherwise builds it once with Go into the cache. Run directly (`npm run temporal:cli`) it prints the path.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWithProgress } from './progress.ts';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
// Later tags have a `replace` in go.mod, which `go install pkg@version` refuses.
const MODULE = `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`;

export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheRoot, 'svc', `temporal-cli-${TEMPORAL_CLI_VERSION.slice(1)}`);
}

export async function resolveTemporalCli(options: {
  explicit?: string;
  say: (message: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<string> {
  const env = options.env ?? process.env;
  if (options.explicit) {
    if (!isExecutable(options.explicit)) {
      throw new Error(
        `TEMPORAL_CLI=${options.explicit} is not an executable file. Point it at the temporal binary or unset it.`,
      );
    }
    return options.explicit;
  }
  const onPath = findOnPath('temporal', env);
  if (onPath) return onPath;
  const cached = path.join(temporalCliCacheDir(env), 'temporal');
  if (isExecutable(cached)) return cached;

  const go = findOnPath('go', env);
  if (!go) {
    throw new Error(
      [
        'The Temporal CLI is needed for the local Temporal server, and neither it nor Go was found.',
        'Do one of these, then run npm start again:',
        `  - install Go (https://go.dev/dl/) so that npm start can build the CLI once (go install ${MODULE});`,
        '  - put a `temporal` binary on PATH or set TEMPORAL_CLI to its path (https://docs.temporal.io/cli#install);',
        '  - or set TEMPORAL_ADDRESS to a running Temporal server.',
      ].join('\n'),
    );
  }
  await buildWithGo({
    go,
    modules: [MODULE],
    cacheDir: temporalCliCacheDir(env),
    what: `the Temporal CLI ${TEMPORAL_CLI_VERSION}`,
    hint: 'or install the CLI yourself and set TEMPORAL_CLI',
    say: options.say,
    env,
  });
  return cached;
}

/** `go install` of `modules` into `cacheDir`, printing progress every 15 s (the Temporal CLI, the Temporal server). */
export async function buildWithGo(options: {
  go: string;
  modules: string[];
  cacheDir: string;
  /** What is built, for the messages: "the Temporal CLI v1.5.1". */
  what: string;
  /** The way around a failed build, for the message. */
  hint: string;
  say: (message: string) => void;
  env: NodeJS.ProcessEnv;
}): Promise<void> {
  const { go, cacheDir, what, say, env } = options;
  mkdirSync(cacheDir, { recursive: true });
  say(`Building ${what} with Go into ${cacheDir}.`);
  say('This happens once per machine and takes a few minutes; later starts reuse the build.');
  const started = Date.now();
  const { code, lastLines } = await runWithProgress({
    command: go,
    args: ['install', '-v', ...options.modules],
    env: { ...env, GOBIN: cacheDir },
    unit: 'packages compiled',
    doing: `building ${what}`,
    // `go install -v` prints one line per package it downloads or compiles: our progress meter.
    counts: (line) => !line.startsWith('go: '),
    say,
  });
  if (code !== 0) {
    throw new Error(
      `Building ${what} failed (go install exited with ${code}). Its last output:\n${lastLines.join('\n')}\n` +
        `Check that the Go module proxy is reachable, ${options.hint}.`,
    );
  }
  say(`Built ${what} in ${Math.round((Date.now() - started) / 1000)} s.`);
}

export function findOnPath(command: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  resolveTemporalCli({ explicit: process.env.TEMPORAL_CLI || undefined, say: (message) => console.error(message) })
    .then((cli) => console.log(cli))
    .catch((error: Error) => {
      console.error(error.message);
      process.exit(1);
    });
}
