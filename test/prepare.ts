// Run before the tests (`npm test`, `npm run test:workflow`, `npm run test:e2e`, `npm run test:faults`): makes sure
// what the layers need is on this machine, so a newcomer's `npm install && npm test` is enough.
//   workflow  Java (and Maven, once) for Temporal's time-skipping test server
//   e2e       the Temporal CLI (built with Go, once), Chromium for the browser journeys, and the test server
//   faults    the e2e needs, the Temporal server and its Web UI server (built with Go, once)
// Missing Debian packages are installed when we run as root (or have sudo without a password) on Debian, showing
// progress; otherwise it stops at once with the one command to run. Builds are cached in ~/.cache/svc.
// Usage: node --import tsx test/prepare.ts [workflow|e2e|faults ...]   (no argument: every layer of `npm test`)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findOnPath, isExecutable, resolveTemporalCli } from '../src/dev/temporal-cli.ts';
import { cachedTemporalTestServer, resolveTemporalTestServer } from '../src/dev/temporal-test-server.ts';
import { runWithProgress } from '../src/dev/progress.ts';
import { CHROMIUM } from './chromium.ts';

type Layer = 'workflow' | 'e2e' | 'faults';
const LAYERS: Layer[] = ['workflow', 'e2e', 'faults'];

const say = (message: string) => process.stdout.write(`${message}\n`);
const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !LAYERS.includes(name as Layer));
if (unknown.length > 0) {
  say(`test/prepare.ts: unknown layer ${unknown.join(', ')}; give any of ${LAYERS.join(', ')}.`);
  process.exit(2);
}
const layers = new Set<Layer>(asked.length > 0 ? (asked as Layer[]) : ['workflow', 'e2e']);
const needs = {
  java: layers.has('workflow') || layers.has('e2e') || layers.has('faults'),
  chromium: layers.has('e2e') || layers.has('faults'),
  temporalCli: layers.has('e2e') || layers.has('faults'),
  cluster: layers.has('faults'),
};

try {
  await installMissingPackages();
  if (needs.temporalCli) await resolveTemporalCli({ explicit: process.env.TEMPORAL_CLI || undefined, say });
  if (needs.java) await resolveTemporalTestServer({ explicit: process.env.TEMPORAL_TEST_SERVER || undefined, say });
  if (needs.cluster) {
    // The faults suite's production topology: the real Temporal server and its Web UI, built like the CLI.
    const { resolveTemporalServer } = await import('../src/dev/temporal-server.ts');
    const { resolveTemporalUiServer } = await import('../src/dev/temporal-ui-server.ts');
    await resolveTemporalServer({ say });
    await resolveTemporalUiServer({ say });
  }
} catch (error) {
  say(`\n✗ ${(error as Error).message}`);
  process.exit(1);
}

/** The Debian packages this machine lacks for the layers asked, installed with apt-get or named in one command. */
async function installMissingPackages(): Promise<void> {
  const packages: string[] = [];
  if (needs.chromium && !process.env.CHROMIUM_PATH && !isExecutable(CHROMIUM)) packages.push('chromium');
  const testServerBuilt = cachedTemporalTestServer() !== undefined;
  if (needs.java && !process.env.TEMPORAL_TEST_SERVER) {
    if (!findOnPath('java', process.env)) packages.push('openjdk-17-jdk-headless');
    if (!testServerBuilt && !findOnPath('mvn', process.env)) packages.push('maven');
  }
  if (packages.length === 0) return;
  const command = `apt-get install -y ${packages.join(' ')}`;
  const root = process.getuid?.() === 0;
  const sudo = !root && findOnPath('sudo', process.env) && spawnSync('sudo', ['-n', 'true']).status === 0;
  if (!existsSync('/usr/bin/apt-get') || (!root && !sudo)) {
    throw new Error(
      `The tests need ${packages.join(', ')}, which this machine lacks. Install them, then run the tests again:\n` +
        `  sudo ${command}\n` +
        (packages.includes('chromium') ? '(or set CHROMIUM_PATH to a Chromium or Chrome executable)\n' : ''),
    );
  }
  const prefix = root ? [] : ['sudo'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  say(`▸ Installing ${packages.join(', ')} with apt-get (once per machine; it takes a few minutes)…`);
  const begun = Date.now();
  execFileSync(prefix[0] ?? 'apt-get', [...prefix.slice(1), ...(root ? [] : ['apt-get']), 'update', '-q'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const { code, lastLines } = await runWithProgress({
    command: prefix[0] ?? 'apt-get',
    args: [...(root ? [] : ['apt-get']), 'install', '-y', '-q', '--no-install-recommends', ...packages],
    env,
    unit: 'packages set up',
    doing: `installing ${packages.join(', ')}`,
    counts: (line) => line.startsWith('Setting up'),
    say,
  });
  if (code !== 0) {
    throw new Error(
      `apt-get could not install ${packages.join(', ')}:\n${lastLines.join('\n')}\nRun \`${command}\` and read why.`,
    );
  }
  say(`  ✓ Installed ${packages.join(', ')} (${((Date.now() - begun) / 1000).toFixed(1)} s)`);
}
