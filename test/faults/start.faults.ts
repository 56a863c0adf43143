// The one-machine `npm start` SIGKILLed as a whole (both of its process groups: the supervisor's and the service's,
// which holds PostgreSQL and the Temporal dev server) while a batch of deals is in flight, then started again on the
// same DATA_DIR: it must come back by itself and every deal must complete, every event reach the receiver.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePorts } from '../../src/dev/ports.ts';
import { resolveTemporalCli } from '../../src/dev/temporal-cli.ts';
import {
  Client,
  driveDeal,
  expectAllArrived,
  inParallel,
  Receiver,
  report,
  setUpMarketplace,
  tally,
  until,
} from './harness.ts';

const DEALS = Number(process.env.FAULTS_DEALS ?? 150);
const CONCURRENCY = 12;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-faults-start-'));
chmodSync(dataDir, 0o755);
const [PORT, DATA_PORT, TEMPORAL_PORT, TEMPORAL_UI_PORT, POSTGRES_PORT] = await freePorts(5);
const ports = { PORT, DATA_PORT, TEMPORAL_PORT, TEMPORAL_UI_PORT, POSTGRES_PORT };
let running: ChildProcess | undefined;

afterAll(async () => {
  if (running && running.exitCode === null) {
    const exited = new Promise((resolve) => running!.once('exit', resolve));
    process.kill(-running.pid!, 'SIGINT');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function npmStart(): Promise<ChildProcess> {
  const cli = process.env.TEMPORAL_CLI || (await resolveTemporalCli({ say: (message) => console.log(message) }));
  const env: Record<string, string> = {
    PATH: process.env.PATH!,
    HOME: os.homedir(),
    DATA_DIR: dataDir,
    TEMPORAL_CLI: cli,
    WEBHOOK_RETRY_BASE_SECONDS: '1',
  };
  for (const [name, value] of Object.entries(ports)) env[name] = String(value);
  // Its own process group, as a terminal gives it.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/start.ts'], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await until('npm start up', 180_000, () => {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
    return output.includes('Press Ctrl-C to stop.') ? true : undefined;
  });
  running = child;
  return child;
}

function databaseUrl(): string {
  const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${ports.POSTGRES_PORT}/svc`;
}

function leftoverProcesses(): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(dataDir));
}

it(
  'npm start SIGKILLed as a whole mid-lifecycle comes back by itself on the same DATA_DIR, and every deal completes',
  { timeout: 600_000 },
  async () => {
    const first = await npmStart();
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8'));
    const client = new Client(`http://127.0.0.1:${ports.PORT}`);
    const receiver = new Receiver();
    await receiver.up();
    const market = await setUpMarketplace(client, { Authorization: `Bearer ${demo.admin_token}` }, receiver, 'start');

    let created = 0;
    let crashed: Promise<void> | undefined;
    let downFor = 0;
    const crash = async () => {
      const service = Number(readFileSync(path.join(dataDir, 'start.pid'), 'utf8').split('\n')[0]);
      const exited = new Promise((resolve) => first.once('exit', resolve));
      // Every process of both groups at once, as a crash of the machine's session would: nothing gets to clean up.
      process.kill(-first.pid!, 'SIGKILL');
      process.kill(-service, 'SIGKILL');
      await exited;
      await until('every process of the first start gone', 10_000, () =>
        leftoverProcesses().length === 0 ? true : undefined,
      );
      const downAt = Date.now();
      await npmStart();
      downFor = Date.now() - downAt;
    };
    const ids = new Set(
      await inParallel(DEALS, CONCURRENCY, (index) =>
        driveDeal(client, market, `start-${index}`, (step) => {
          if (step === 'created' && ++created === Math.ceil(DEALS / 3)) crashed = crash();
        }),
      ),
    );
    await crashed;
    const tallied = await tally(databaseUrl(), receiver, ids, 120_000);
    report(
      'npm start SIGKILLed',
      `SIGKILLed both process groups of npm start once ${Math.ceil(DEALS / 3)} of ${DEALS} deals existed, started it again on the same DATA_DIR (up again after ${(downFor / 1000).toFixed(1)} s)`,
      tallied,
      client,
    );
    expect(client.unexpected5xx()).toEqual([]);
    expectAllArrived(tallied, DEALS);
    // What the API says agrees with what the marketplace was told: every deal paid, its payment released.
    const states = await inParallel(DEALS, CONCURRENCY, (index) =>
      client.call('GET', `/api/mkt/deals?external_id=start-${index}`, undefined, market.key),
    );
    expect(
      states.map(
        (state) =>
          `${state.body.status}/${state.body.payments.map((payment: { status: string }) => payment.status).join()}`,
      ),
    ).toEqual(Array(DEALS).fill('paid/released'));
    await receiver.down();
  },
);
