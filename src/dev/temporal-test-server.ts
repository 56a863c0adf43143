// The time-skipping Temporal test server for tests (`TestWorkflowEnvironment.createTimeSkipping`). The SDK would
// download it from GitHub; here it is the Java build from Maven Central instead, resolved once with Maven into the
// cache outside the repository, with a wrapper script the SDK starts as an `existing-path` executable (it passes the
// port as the first argument). Run directly it prints the wrapper's path, building it first when needed.
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progressStep, runWithProgress } from './progress.ts';
import { freePort } from './ports.ts';
import { findOnPath, isExecutable } from './temporal-cli.ts';

export const TEMPORAL_TEST_SERVER_VERSION = '1.38.0';
const ARTIFACT = `io.temporal:temporal-test-server:${TEMPORAL_TEST_SERVER_VERSION}`;
const MAIN_CLASS = 'io.temporal.testserver.TestServer';
// The version the test server's slf4j-api has: without a binding it prints a three-line warning at every start.
const SLF4J_VERSION = '1.7.36';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
// The SDK gives the server 5 s to answer; a class-data archive recorded at build time makes the JVM start in a
// fraction of that even on a busy machine, and one compiler and the serial collector keep it light on shared cores.
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

export function temporalTestServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheRoot, 'svc', `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`);
}

/** The wrapper a build left in the cache, if one did (it is written last: a build that stopped half way left none). */
export function cachedTemporalTestServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const wrapper = path.join(temporalTestServerCacheDir(env), 'temporal-test-server');
  return isExecutable(wrapper) ? wrapper : undefined;
}

/**
 * The executable to give `TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type:
 * 'existing-path', path } } })`: TEMPORAL_TEST_SERVER when set, else the cached wrapper, built once with Maven
 * (about half a minute; the wrapper is written last, so a build that stopped half way is done again).
 */
export async function resolveTemporalTestServer(options: {
  explicit?: string;
  say: (message: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<string> {
  const env = options.env ?? process.env;
  if (options.explicit) {
    if (!isExecutable(options.explicit)) {
      throw new Error(
        `TEMPORAL_TEST_SERVER=${options.explicit} is not an executable file. Point it at a test server executable or unset it.`,
      );
    }
    return options.explicit;
  }
  const cached = cachedTemporalTestServer(env);
  if (cached) return cached;
  const dir = temporalTestServerCacheDir(env);
  const wrapper = path.join(dir, 'temporal-test-server');

  const java = findOnPath('java', env);
  const mvn = findOnPath('mvn', env);
  if (!java || !mvn) {
    throw new Error(
      [
        `The time-skipping Temporal test server (${ARTIFACT}, from Maven Central) needs ${!java && !mvn ? 'Java and Maven' : !java ? 'Java' : 'Maven'}, which ${!java && !mvn ? 'were' : 'was'} not found on PATH.`,
        'Do one of these, then run the tests again:',
        '  - install a JDK 17 or later and Maven (Debian: apt-get install openjdk-17-jdk-headless maven), so that the',
        `    tests can resolve it once into ${dir};`,
        '  - or set TEMPORAL_TEST_SERVER to a test server executable (https://github.com/temporalio/sdk-java/releases).',
      ].join('\n'),
    );
  }

  const step = progressStep(options.say);
  options.say(`Resolving the Temporal test server ${TEMPORAL_TEST_SERVER_VERSION} with Maven into ${dir}.`);
  options.say('This happens once per machine; later runs reuse it.');
  const lib = path.join(dir, 'lib');
  await step(`Maven: ${ARTIFACT} and its runtime dependencies`, async () => {
    rmSync(lib, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'pom.xml'), pom());
    await runMaven(mvn, dir, lib, options.say, env);
  });
  const classpath = `${lib}/*`;
  const archive = path.join(dir, 'classes.jsa');
  await step('Class-data archive for a fast start', () => recordClassArchive(java, classpath, archive, env));
  const partial = `${wrapper}.${process.pid}`;
  writeFileSync(partial, wrapperScript(java, classpath, archive), { mode: 0o755 });
  renameSync(partial, wrapper);
  return wrapper;
}

/** A project with the test server as its one dependency, for `copy-dependencies`. */
function pom(): string {
  const dependency = (groupId: string, artifactId: string, version: string) =>
    `    <dependency><groupId>${groupId}</groupId><artifactId>${artifactId}</artifactId><version>${version}</version></dependency>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by src/dev/temporal-test-server.ts: the time-skipping test server's runtime class path. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>svc.dev</groupId>
  <artifactId>temporal-test-server-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${dependency('io.temporal', 'temporal-test-server', TEMPORAL_TEST_SERVER_VERSION)}
${dependency('org.slf4j', 'slf4j-nop', SLF4J_VERSION)}
  </dependencies>
</project>
`;
}

async function runMaven(
  mvn: string,
  dir: string,
  lib: string,
  say: (message: string) => void,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const { code, lastLines } = await runWithProgress({
    command: mvn,
    args: [
      '-B',
      '-f',
      path.join(dir, 'pom.xml'),
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      '-DincludeScope=runtime',
      `-DoutputDirectory=${lib}`,
    ],
    cwd: dir,
    env,
    unit: 'files downloaded',
    doing: 'resolving the test server',
    // In batch mode Maven prints one "Downloaded from central: …" line per file it fetches: our progress meter.
    counts: (line) => line.includes('Downloaded from'),
    say,
  });
  if (code !== 0) {
    throw new Error(
      `Resolving ${ARTIFACT} with Maven failed (mvn exited with ${code}). Its last output:\n${lastLines.join('\n')}\n` +
        'Check that Maven Central (or the mirror in ~/.m2/settings.xml) is reachable, or set TEMPORAL_TEST_SERVER to a test server executable.',
    );
  }
}

/**
 * Starts the server once with -XX:ArchiveClassesAtExit and stops it when it listens: the JVM writes the classes it
 * loaded into an archive that later starts map at once. Only a speed-up: a JVM that cannot use it starts without it.
 */
async function recordClassArchive(
  java: string,
  classpath: string,
  archive: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  rmSync(archive, { force: true });
  const port = await freePort();
  const child = spawn(
    java,
    [...JVM_FLAGS, `-XX:ArchiveClassesAtExit=${archive}`, '-cp', classpath, MAIN_CLASS, String(port)],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const deadline = Date.now() + 60_000;
  let listening = false;
  while (!listening && child.exitCode === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    listening = await answers(port);
  }
  child.kill('SIGTERM');
  await exited;
  if (!listening) {
    throw new Error(
      `The Temporal test server did not start (java ${MAIN_CLASS} on port ${port}). Its last output:\n${errors}\n` +
        `Check that \`${java} -version\` is 17 or later, or set TEMPORAL_TEST_SERVER to a test server executable.`,
    );
  }
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** `exec`, so the process the SDK stops is the JVM itself. */
function wrapperScript(java: string, classpath: string, archive: string): string {
  return `#!/bin/sh
# The time-skipping Temporal test server ${ARTIFACT}, written by src/dev/temporal-test-server.ts.
# Usage: temporal-test-server <port> [--enable-time-skipping]
ARCHIVE='${archive}'
if [ -f "$ARCHIVE" ]; then set -- -XX:SharedArchiveFile="$ARCHIVE" -Xlog:cds=off -Xlog:cds+dynamic=off ${JVM_FLAGS.join(' ')} -cp '${classpath}' ${MAIN_CLASS} "$@"
else set -- ${JVM_FLAGS.join(' ')} -cp '${classpath}' ${MAIN_CLASS} "$@"
fi
exec '${java}' "$@"
`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  resolveTemporalTestServer({
    explicit: process.env.TEMPORAL_TEST_SERVER || undefined,
    say: (message) => console.error(message),
  })
    .then((wrapper) => console.log(wrapper))
    .catch((error: Error) => {
      console.error(error.message);
      process.exit(1);
    });
}
