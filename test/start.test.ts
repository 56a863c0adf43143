// `npm start` as a newcomer runs it: everything comes up, the printed demo credentials work, Ctrl-C stops every
// process, and a second start keeps the data of the first.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { freePort, isPortFree } from '../src/dev/ports.ts';
import { hashSecret } from '../src/secrets.ts';
import { json } from './helpers.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
chmodSync(dataDir, 0o755);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const ports = {
  PORT: await freePort(),
  DATA_PORT: await freePort(),
  TEMPORAL_PORT: await freePort(),
  TEMPORAL_UI_PORT: await freePort(),
  POSTGRES_PORT: await freePort(),
};
const base = `http://127.0.0.1:${ports.PORT}`;
const data = `http://127.0.0.1:${ports.DATA_PORT}`;

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

async function npmStart(): Promise<Started> {
  // A newcomer's environment: nothing of ours set but the data folder and free ports (vitest sets BASE_URL itself).
  const env: Record<string, string> = { PATH: process.env.PATH!, HOME: os.homedir(), DATA_DIR: dataDir, TEMPORAL_CLI: inject('temporalCli') };
  for (const [name, value] of Object.entries(ports)) env[name] = String(value);
  // Its own process group, so the test can signal the whole group as a terminal's Ctrl-C does.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/start.ts'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
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
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`did not stop:\n${started.output()}`)), 60_000)),
  ]);
}

describe('npm start', () => {
  it('brings everything up with working demo credentials, and Ctrl-C stops every process', { timeout: 240_000 }, async () => {
    const started = await npmStart();
    try {
      expect(started.output()).toContain(`API docs         ${base}/docs`);
      expect(started.output()).toContain(`Temporal UI      http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`);
      expect(started.output()).toContain(`MCP endpoint     ${data}/mcp/`);

      for (const url of [`${base}/healthz`, `${data}/healthz`]) {
        expect(await json(await fetch(url)), url).toEqual({ ok: true });
      }
      for (const url of [`${base}/docs`, `${data}/docs`, `${base}/api/openapi.json`, `${data}/v1/openapi.json`, `http://127.0.0.1:${ports.TEMPORAL_UI_PORT}/`]) {
        expect((await fetch(url)).status, url).toBe(200);
      }

      const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8'));
      expect(started.output()).toContain(demo.admin_token);
      expect(started.output()).toContain(demo.marketplace.secret_key);
      expect(started.output()).toContain(demo.marketplace.public_key);
      expect(started.output()).toContain(demo.data_key.key);

      const ping = await fetch(`${base}/api/mkt/ping`, { headers: { 'X-Svc-Key': demo.marketplace.secret_key } });
      expect(await json(ping)).toEqual({ ok: true, marketplace_id: demo.marketplace.id, name: 'Demo marketplace', mode: 'sandbox' });
      const mail = await fetch(`${base}/admin/mail`, { headers: { Authorization: `Bearer ${demo.admin_token}` } });
      expect(mail.status).toBe(200);

      const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
      const client = new pg.Client({ connectionString: `postgres://postgres:${password}@127.0.0.1:${ports.POSTGRES_PORT}/svc` });
      await client.connect();
      const key = await client.query(
        `SELECT a.tariff FROM data_keys k JOIN data_accounts a ON a.id = k.account_id WHERE k.key_hash = $1`,
        [hashSecret(demo.data_key.key)],
      );
      await client.end();
      expect(key.rows).toEqual([{ tariff: 'free' }]);
    } finally {
      const code = await stopped(started, () => process.kill(-started.child.pid!, 'SIGINT'));
      expect(code).toBe(0);
    }
    expect(started.output()).toContain('Stopped.');
    expect(leftoverProcesses()).toEqual([]);
    for (const [name, port] of Object.entries(ports)) expect(await isPortFree('127.0.0.1', port), name).toBe(true);
  });

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
});
