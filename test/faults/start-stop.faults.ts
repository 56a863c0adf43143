// In the faults suite: it starts the whole service five times, minutes that `npm test` should not wait.
// `npm start` as a newcomer runs it: everything comes up, the printed demo credentials work, Ctrl-C stops every
// process, and a second start keeps the data of the first. No process is left behind: a start after a crash that
// orphaned PostgreSQL and Temporal stops them and comes up, a start after the whole process group was SIGKILLed comes
// back by itself, and a stop that runs past its limit still stops PostgreSQL and Temporal.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { reassertSignal } from '../../workflows/deals/deal-messages.ts';
import { freePorts, isPortFree } from '../../src/dev/ports.ts';
import { commandLine } from '../../src/dev/processes.ts';
import { resolveTemporalCli } from '../../src/dev/temporal-cli.ts';
import { hashSecret } from '../../src/secrets.ts';
import { json } from '../helpers.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
chmodSync(dataDir, 0o755);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const temporalCli = await resolveTemporalCli({
  explicit: process.env.TEMPORAL_CLI || undefined,
  say: (message) => console.log(message),
});
const [PORT, DATA_PORT, TEMPORAL_PORT, TEMPORAL_UI_PORT, POSTGRES_PORT] = await freePorts(5);
const ports = { PORT, DATA_PORT, TEMPORAL_PORT, TEMPORAL_UI_PORT, POSTGRES_PORT };
const base = `http://127.0.0.1:${ports.PORT}`;
const data = `http://127.0.0.1:${ports.DATA_PORT}`;

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

async function npmStart(extraEnv: Record<string, string> = {}): Promise<Started> {
  // A newcomer's environment: nothing of ours set but the data folder and free ports (vitest sets BASE_URL itself).
  const env: Record<string, string> = {
    PATH: process.env.PATH!,
    HOME: os.homedir(),
    DATA_DIR: dataDir,
    TEMPORAL_CLI: temporalCli,
  };
  for (const [name, value] of Object.entries(ports)) env[name] = String(value);
  Object.assign(env, extraEnv);
  // Its own process group, so the test can signal the whole group as a terminal's Ctrl-C does.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/start.ts'], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 150_000;
  while (!output.includes('Press Ctrl-C to stop.')) {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { child, output: () => output, exited };
}

function leftoverProcesses(): string[] {
  const lines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n');
  return lines.filter((line) => line.includes(dataDir));
}

async function stopped(started: Started, signal: () => void): Promise<number | null> {
  signal();
  return Promise.race([
    started.exited,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`did not stop:\n${started.output()}`)), 60_000),
    ),
  ]);
}

describe('npm start', () => {
  it(
    'brings everything up with working demo credentials, and Ctrl-C stops every process',
    { timeout: 240_000 },
    async () => {
      const started = await npmStart();
      try {
        expect(started.output()).toContain(`API docs         ${base}/docs`);
        expect(started.output()).toContain(`Temporal UI      http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`);
        expect(started.output()).toContain(`MCP endpoint     ${data}/mcp/`);

        for (const url of [`${base}/healthz`, `${data}/healthz`]) {
          expect(await json(await fetch(url)), url).toEqual({ ok: true });
        }
        for (const url of [
          `${base}/docs`,
          `${data}/docs`,
          `${base}/api/openapi.json`,
          `${data}/v1/openapi.json`,
          `http://127.0.0.1:${ports.TEMPORAL_UI_PORT}/`,
        ]) {
          expect((await fetch(url)).status, url).toBe(200);
        }

        const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8'));
        expect(started.output()).toContain(demo.admin_token);
        expect(started.output()).toContain(demo.marketplace.secret_key);
        expect(started.output()).toContain(demo.marketplace.public_key);
        expect(started.output()).toContain(demo.data_key.key);

        const ping = await fetch(`${base}/api/mkt/ping`, { headers: { 'X-Svc-Key': demo.marketplace.secret_key } });
        expect(await json(ping)).toEqual({
          ok: true,
          marketplace_id: demo.marketplace.id,
          name: 'Demo marketplace',
          mode: 'sandbox',
        });
        // A developer's receiver on this machine is welcome under npm start, and the summary says so.
        expect(started.output()).toContain('Webhooks         may reach this machine (WEBHOOK_ALLOW_LOOPBACK=true');
        const hook = await fetch(`${base}/api/mkt/webhook`, {
          method: 'POST',
          headers: { 'X-Svc-Key': demo.marketplace.secret_key, 'Content-Type': 'application/json' },
          body: JSON.stringify({ url: 'http://127.0.0.1:4000/hooks' }),
        });
        expect(hook.status).toBe(200);
        const mail = await fetch(`${base}/admin/mail`, { headers: { Authorization: `Bearer ${demo.admin_token}` } });
        expect(mail.status).toBe(200);

        const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
        const client = new pg.Client({
          connectionString: `postgres://postgres:${password}@127.0.0.1:${ports.POSTGRES_PORT}/svc`,
        });
        await client.connect();
        const key = await client.query(
          `SELECT a.tariff FROM data_keys k JOIN data_accounts a ON a.id = k.account_id WHERE k.key_hash = $1`,
          [hashSecret(demo.data_key.key)],
        );
        // The service's processes connect as the application role, which is no superuser and owns nothing; the
        // migrations ran as the owner (src/db-roles.ts).
        const connected = await client.query<{ usename: string }>(
          `SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = 'svc' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        );
        const roles = await client.query(
          `SELECT r.rolname, r.rolsuper, (SELECT count(*)::int FROM pg_class c WHERE c.relowner = r.oid) AS owned
         FROM pg_roles r WHERE r.rolname IN ('svc_app', 'svc_owner') ORDER BY r.rolname`,
        );
        await client.end();
        expect(key.rows).toEqual([{ tariff: 'free' }]);
        expect(connected.rows).toEqual([{ usename: 'svc_app' }]);
        expect(roles.rows).toEqual([
          { rolname: 'svc_app', rolsuper: false, owned: 0 },
          { rolname: 'svc_owner', rolsuper: false, owned: expect.any(Number) },
        ]);
        expect(roles.rows[1].owned).toBeGreaterThan(0);
        for (const file of ['postgres-owner.password', 'postgres-app.password']) {
          expect(statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
          expect(started.output(), file).not.toContain(readFileSync(path.join(dataDir, file), 'utf8').trim());
        }
      } finally {
        const code = await stopped(started, () => process.kill(-started.child.pid!, 'SIGINT'));
        expect(code).toBe(0);
      }
      expect(started.output()).toContain('Stopped.');
      expect(leftoverProcesses()).toEqual([]);
      for (const [name, port] of Object.entries(ports)) expect(await isPortFree('127.0.0.1', port), name).toBe(true);
    },
  );

  it('keeps the data of the first start, demo credentials included', { timeout: 240_000 }, async () => {
    const before = readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8');
    const started = await npmStart();
    try {
      const demo = JSON.parse(before);
      expect(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8')).toBe(before);
      expect(started.output()).toContain(demo.admin_token);
      expect(started.output()).not.toContain('1763600000000_foundation'); // nothing left to migrate
      const ping = await fetch(`${base}/api/mkt/ping`, { headers: { 'X-Svc-Key': demo.marketplace.secret_key } });
      expect(ping.status).toBe(200);
    } finally {
      // SIGTERM to the launcher alone, as a process manager would send it.
      expect(await stopped(started, () => started.child.kill('SIGTERM'))).toBe(0);
    }
    expect(leftoverProcesses()).toEqual([]);
  });

  it(
    'after a crash that orphaned PostgreSQL and Temporal, the next start stops them and comes up',
    { timeout: 300_000 },
    async () => {
      const first = await npmStart();
      const service = pidIn('start.pid');
      const postgres = pidIn('postgres/postmaster.pid');
      const temporal = pidIn('temporal.pid');
      // The service process dies at once, as under the OOM killer; the supervisor follows it.
      process.kill(service, 'SIGKILL');
      await first.exited;
      expect(commandLine(postgres), 'PostgreSQL was orphaned').toContain(dataDir);
      expect(commandLine(temporal), 'Temporal was orphaned').toContain(dataDir);

      const second = await npmStart();
      try {
        expect(second.output()).toContain(
          `stopped the PostgreSQL a previous start left running on this DATA_DIR (pid ${postgres})`,
        );
        expect(second.output()).toContain(
          `stopped the Temporal dev server a previous start left running on this DATA_DIR (pid ${temporal})`,
        );
        expect(commandLine(postgres)).toBeUndefined();
        expect(commandLine(temporal)).toBeUndefined();
        expect((await fetch(`${base}/api/mkt/ping`, { headers: { 'X-Svc-Key': demoKey() } })).status).toBe(200);
      } finally {
        expect(await stopped(second, () => process.kill(-second.child.pid!, 'SIGINT'))).toBe(0);
      }
      expect(leftoverProcesses()).toEqual([]);
    },
  );

  it('comes back by itself after the whole of it was SIGKILLed', { timeout: 300_000 }, async () => {
    const first = await npmStart();
    const created = await fetch(`${base}/api/mkt/deals`, {
      method: 'POST',
      headers: { 'X-Svc-Key': demoKey(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ external_id: `crash-${Date.now()}`, buyer_email: 'crash@example.com', amount: 10 }),
    });
    expect(created.status).toBe(201);
    const deal = await json(created);
    // Every process of both groups at once (the supervisor's and the service's, which holds PostgreSQL and Temporal),
    // as a crash of the machine's session would: nothing gets to clean up.
    const service = pidIn('start.pid');
    process.kill(-first.child.pid!, 'SIGKILL');
    process.kill(-service, 'SIGKILL');
    await first.exited;
    await expect.poll(leftoverProcesses, { timeout: 10_000 }).toEqual([]);

    const second = await npmStart();
    try {
      const found = await fetch(`${base}/api/mkt/deals?external_id=${deal.external_id}`, {
        headers: { 'X-Svc-Key': demoKey() },
      });
      expect(found.status).toBe(200);
      expect((await json(found)).id).toBe(deal.id);
    } finally {
      expect(await stopped(second, () => process.kill(-second.child.pid!, 'SIGINT'))).toBe(0);
    }
    expect(leftoverProcesses()).toEqual([]);
  });

  it(
    'stops when PostgreSQL went first (Ctrl-C reached its whole process group), a deal’s write retrying against it',
    { timeout: 300_000 },
    async () => {
      const started = await npmStart();
      const created = await fetch(`${base}/api/mkt/deals`, {
        method: 'POST',
        headers: { 'X-Svc-Key': demoKey(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ external_id: `pg-first-${Date.now()}`, buyer_email: 'first@example.com', amount: 10 }),
      });
      expect(created.status).toBe(201);
      const deal = await json(created);
      // A signal to the service's whole group (kill -INT -- -pgid, a supervisor's stop) reaches PostgreSQL beside the
      // service, and PostgreSQL may be gone before the orderly stop gets to it. Make that certain: it goes first.
      const postmaster = pidIn('postgres/postmaster.pid');
      process.kill(postmaster, 'SIGINT');
      await expect.poll(() => alive(postmaster), { timeout: 30_000, interval: 100 }).toBe(false);
      // The deal's workflow asked to re-assert its records now: its write (a local activity) retries against the
      // PostgreSQL that is gone, which Temporal's core keeps doing through the worker's shutdown unless forced.
      const connection = await Connection.connect({ address: `127.0.0.1:${ports.TEMPORAL_PORT}` });
      try {
        const handle = new Client({ connection }).workflow.getHandle(
          dealWorkflowId(demoMarketplaceId(), deal.external_id),
        );
        await handle.signal(reassertSignal);
        await expect
          .poll(
            async () => {
              const events = (await handle.fetchHistory()).events ?? [];
              const signalled = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes);
              return (
                signalled >= 0 && events.slice(signalled).some((event) => event.workflowTaskStartedEventAttributes)
              );
            },
            { timeout: 30_000, interval: 200 },
          )
          .toBe(true);
      } finally {
        await connection.close();
      }
      // The orderly stop must not wait out its limit (which exits 1) for a PostgreSQL that is gone.
      const code = await stopped(started, () => process.kill(-started.child.pid!, 'SIGINT'));
      // The output says what held the stop up or failed, when it did not exit 0.
      expect(code, started.output()).toBe(0);
      expect(started.output()).not.toContain('Did not stop within');
      expect(leftoverProcesses()).toEqual([]);
    },
  );

  it('stops PostgreSQL and Temporal when the orderly stop runs past its limit', { timeout: 300_000 }, async () => {
    const started = await npmStart({ SHUTDOWN_LIMIT_SECONDS: '2' });
    // A request whose body never comes holds the main server's stop for its 10 s drain, past the 2 s limit.
    // The server answers `Expect: 100-continue` once it has taken the request in, so we know the stop will wait for it.
    const held = http.request(`${base}/api/mkt/deals`, {
      method: 'POST',
      headers: {
        'X-Svc-Key': demoKey(),
        'Content-Type': 'application/json',
        'Content-Length': '1000',
        Expect: '100-continue',
      },
    });
    held.on('error', () => {}); // the server drops it in the end
    await new Promise<void>((resolve) => held.once('continue', resolve));
    held.write('{"external_id":');

    const code = await stopped(started, () => process.kill(-started.child.pid!, 'SIGINT'));
    expect(code).toBe(1);
    expect(started.output()).toContain(
      'Did not stop within 2 s (the main server was still stopping); stopping PostgreSQL and Temporal, then exiting anyway.',
    );
    expect(started.output()).not.toContain('Stopped.');
    expect(leftoverProcesses()).toEqual([]);
    for (const [name, port] of Object.entries(ports)) expect(await isPortFree('127.0.0.1', port), name).toBe(true);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function pidIn(file: string): number {
  return Number(readFileSync(path.join(dataDir, file), 'utf8').split('\n')[0]);
}

function demoMarketplaceId(): string {
  return JSON.parse(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8')).marketplace.id;
}

function demoKey(): string {
  return JSON.parse(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8')).marketplace.secret_key;
}
