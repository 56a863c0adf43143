// `npm run test:fuzz`: Schemathesis, every check, against both OpenAPI documents of a real `npm start` (a fresh
// DATA_DIR on free ports), with the demo marketplace key, the demo administrator token and an unlimited data key,
// and the cabinet's operations once more with a buyer's cabinet token.
// Schemathesis comes from PyPI into a virtual environment under ~/.cache/svc (made once, version pinned). The run
// fails on any Schemathesis failure and on any "unhandled error" the servers log (a 500 the checks did not see).
// Then the hostile-shape pass (hostile.ts): deep nesting, huge arrays, long strings, many fields and refused text sent
// to every JSON, form and MCP operation of both servers while a probe times each server; it fails on a 5xx or a slow
// probe. FUZZ_ONLY=hostile runs that pass alone (no Schemathesis), FUZZ_ONLY=schemathesis the other way round.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../../src/dev/ports.ts';
import { hostilePass } from './hostile.ts';

const SCHEMATHESIS_VERSION = '4.32.5';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CONFIG = path.join(ROOT, 'test/fuzz/schemathesis.toml');
const OUTPUT = path.join(ROOT, 'test-output/fuzz');
/** Seconds of fuzzing per document; CI keeps the default, a deeper local run sets FUZZ_SECONDS. */
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 150);
/**
 * The same seed on every CI run, so that a run fails only for a change in the code, never by the draw; FUZZ_SEED sets
 * another one, and FUZZ_SEED=random lets Schemathesis draw (its report prints the seed to replay a failure with).
 */
const SEED = process.env.FUZZ_SEED ?? '20261123';
/** Which passes run: both (the default, and CI's), or `schemathesis` or `hostile` alone. */
const ONLY = process.env.FUZZ_ONLY ?? '';
if (!['', 'schemathesis', 'hostile'].includes(ONLY))
  throw new Error(`FUZZ_ONLY is "schemathesis" or "hostile", not "${ONLY}".`);

const say = (message: string) => process.stdout.write(`${message}\n`);

function schemathesis(): string {
  const cacheRoot = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const venv = path.join(cacheRoot, 'svc', `schemathesis-${SCHEMATHESIS_VERSION}`);
  const binary = path.join(venv, 'bin', 'schemathesis');
  if (existsSync(binary)) return binary;
  say(`▸ Schemathesis ${SCHEMATHESIS_VERSION} into ${venv} (once; about a minute)…`);
  const run = (command: string, args: string[]) => {
    const result = spawnSync(command, args, { stdio: 'inherit' });
    if (result.status !== 0) {
      throw new Error(
        `${command} ${args.join(' ')} failed. It needs python3 with venv (Debian: apt-get install python3-venv).`,
      );
    }
  };
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `schemathesis==${SCHEMATHESIS_VERSION}`,
  ]);
  return binary;
}

interface Service {
  child: ChildProcess;
  main: string;
  data: string;
  dataDir: string;
  log: () => string;
}

async function startService(): Promise<Service> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-fuzz-'));
  chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its folder
  const [port, dataPort, postgresPort, temporalPort, uiPort] = await freePorts(5);
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/bin/start.ts')], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      DATA_PORT: String(dataPort),
      POSTGRES_PORT: String(postgresPort),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  say('▸ npm start on a fresh DATA_DIR…');
  const deadline = Date.now() + 5 * 60_000;
  while (!output.includes('Press Ctrl-C to stop.')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  say('  ✓ running');
  return { child, main: `http://127.0.0.1:${port}`, data: `http://127.0.0.1:${dataPort}`, dataDir, log: () => output };
}

async function stopService(service: Service): Promise<void> {
  if (service.child.exitCode === null) {
    const exited = new Promise((resolve) => service.child.once('exit', resolve));
    process.kill(-service.child.pid!, 'SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 60_000))]);
    if (service.child.exitCode === null) process.kill(-service.child.pid!, 'SIGKILL');
  }
  rmSync(service.dataDir, { recursive: true, force: true });
}

interface Figures {
  document: string;
  operations: string;
  cases: number;
  failures: number;
  exitCode: number;
}

/**
 * Schemathesis closes with a pytest-style footer ("=== 2 warnings in 150.06s ==="). CI reads such a line as pytest
 * finishing with no test run, so the echo says it in other words; the saved log keeps the original.
 */
function echoed(line: string): string {
  const footer = /^=+ (.+) in ([\d.]+)s =+$/.exec(line);
  return footer ? `Schemathesis finished: ${footer[1]} (${footer[2]} s)` : line;
}

function fuzz(binary: string, document: string, url: string, headers: string[], only: string[] = []): Promise<Figures> {
  say(`▸ Schemathesis on ${url}${only.length > 0 ? ` (${only.join(' ')})` : ''} (all checks, ${SECONDS} s)…`);
  const args = [
    '--config-file',
    CONFIG,
    'run',
    url,
    ...only,
    '--checks',
    'all',
    '--max-time',
    String(SECONDS),
    '--workers',
    '1',
    '--report',
    'junit',
    '--report-dir',
    path.join(OUTPUT, document),
    ...(SEED === 'random' ? [] : ['--seed', SEED]),
    ...headers.flatMap((header) => ['-H', header]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_HOOKS: 'hooks', PYTHONPATH: path.join(ROOT, 'test/fuzz') },
    });
    let text = '';
    let line = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      const lines = (line + chunk).split('\n');
      line = lines.pop()!;
      for (const complete of lines) say(echoed(complete));
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (line) say(echoed(line));
      writeFileSync(path.join(OUTPUT, `${document}.log`), text);
      const tested = /Tested:\s*(\d+)/.exec(text)?.[1];
      const selected = /Selected:\s*(\d+\/\d+)/.exec(text)?.[1];
      const cases = Number(/(\d+) generated/.exec(text)?.[1] ?? 0);
      const failures = Number(/found (\d+) unique failures?/.exec(text)?.[1] ?? (code === 0 ? 0 : NaN));
      resolve({
        document,
        operations: `${tested ?? '?'} tested of ${selected ?? '?'} selected`,
        cases,
        failures,
        exitCode: code ?? 1,
      });
    });
  });
}

async function main(): Promise<number> {
  const binary = ONLY === 'hostile' ? '' : schemathesis();
  mkdirSync(OUTPUT, { recursive: true });
  const service = await startService();
  try {
    const credentials = JSON.parse(readFileSync(path.join(service.dataDir, 'demo-credentials.json'), 'utf8'));
    // hooks.py keeps the run from switching off the marketplace whose key it sends.
    process.env.FUZZ_MARKETPLACE_ID = credentials.marketplace.id;
    const admin = `Authorization: Bearer ${credentials.admin_token}`;
    const dataKey = await unlimitedDataKey(service.main, credentials.admin_token, 'fuzz@example.com');

    const cabinetToken = await buyerWithDeal(service.main, credentials);

    const results =
      ONLY === 'hostile'
        ? []
        : [
            await fuzz(binary, 'main', `${service.main}/api/openapi.json`, [
              admin,
              `X-Svc-Key: ${credentials.marketplace.secret_key}`,
            ]),
            // The cabinet's operations as a buyer with a deal of the demo marketplace (the first pass had no cabinet token).
            await fuzz(
              binary,
              'cabinet',
              `${service.main}/api/openapi.json`,
              [`Authorization: Bearer ${cabinetToken}`],
              ['--include-path-regex', '^/cabinet/'],
            ),
            await fuzz(binary, 'data', `${service.data}/v1/openapi.json`, [`Authorization: Bearer ${dataKey}`]),
          ];
    const hostile =
      ONLY === 'schemathesis'
        ? undefined
        : await hostilePass(
            { main: service.main, data: service.data },
            // Credentials of its own: Schemathesis may have changed the first key's account or ended the buyer's sessions.
            {
              admin: credentials.admin_token,
              marketplaceKey: credentials.marketplace.secret_key,
              cabinetToken: await buyerSignIn(service.main, cabinetToken),
              dataKey: await unlimitedDataKey(service.main, credentials.admin_token, 'fuzz-hostile@example.com'),
            },
            say,
          );
    const unhandled = service
      .log()
      .split('\n')
      .filter((line) => line.includes('unhandled error'));

    say('\nFuzzing figures');
    for (const result of results) {
      say(
        `  ${result.document.padEnd(7)} ${result.operations}; ${result.cases} cases; ${result.failures} failures (exit ${result.exitCode})`,
      );
    }
    if (hostile) say(`  ${hostile.summary}`);
    say(`  server log: ${unhandled.length} unhandled errors`);
    for (const line of unhandled.slice(0, 5)) say(`    ${line.slice(0, 400)}`);
    say(`  reports: ${path.relative(ROOT, OUTPUT)}/`);
    const fuzzed = results.every((result) => result.exitCode === 0 && result.failures === 0);
    return fuzzed && (hostile?.ok ?? true) && unhandled.length === 0 ? 0 : 1;
  } finally {
    await stopService(service);
  }
}

async function unlimitedDataKey(base: string, adminToken: string, email: string): Promise<string> {
  const issued = await fetch(`${base}/admin/data-keys`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, tariff: 'enterprise' }),
  });
  if (issued.status !== 201)
    throw new Error(`Could not issue an unlimited data key: ${issued.status} ${await issued.text()}`);
  return ((await issued.json()) as { key: string }).key;
}

const BUYER_EMAIL = 'fuzz-buyer@example.com';
const BUYER_PASSWORD = 'a fuzzing buyer password';

/** A fresh cabinet token of the fuzzing buyer, or `fallback` when the sign-in is refused (a limit, a changed password). */
async function buyerSignIn(base: string, fallback: string): Promise<string> {
  const response = await fetch(`${base}/cabinet/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: BUYER_EMAIL, password: BUYER_PASSWORD }),
  });
  return response.status === 200 ? ((await response.json()) as { token: string }).token : fallback;
}

/** A buyer of a deal of the demo marketplace, signed in through the invitation link the deal mailed: a cabinet token. */
async function buyerWithDeal(
  base: string,
  credentials: { admin_token: string; marketplace: { secret_key: string } },
): Promise<string> {
  const email = BUYER_EMAIL;
  const created = await fetch(`${base}/api/mkt/deals`, {
    method: 'POST',
    headers: { 'X-Svc-Key': credentials.marketplace.secret_key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ external_id: 'fuzz-order', buyer_email: email, title: 'Fuzzing', amount: 100 }),
  });
  if (created.status !== 201)
    throw new Error(`Could not create the buyer's deal: ${created.status} ${await created.text()}`);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const mail = await fetch(`${base}/admin/mail?to=${encodeURIComponent(email)}`, {
      headers: { Authorization: `Bearer ${credentials.admin_token}` },
    });
    const items = ((await mail.json()) as { items: { text: string }[] }).items;
    const token = items[0]?.text.match(/\/cabinet\/invite\?token=(\S+)/)?.[1];
    if (token) {
      const accepted = await fetch(`${base}/cabinet/invite/accept`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token, password: BUYER_PASSWORD }),
      });
      if (accepted.status !== 200)
        throw new Error(`Could not accept the invitation: ${accepted.status} ${await accepted.text()}`);
      return ((await accepted.json()) as { token: string }).token;
    }
    if (Date.now() > deadline) throw new Error('The buyer got no invitation mail within 60 s.');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(error.message);
    process.exit(1);
  },
);
