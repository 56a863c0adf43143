// Each process runs alone, configured only by environment variables, as docker-compose and production run them.
import { spawn } from 'node:child_process';
import os from 'node:os';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/dev/ports.ts';
import { uniqueId } from '../helpers.ts';

function run(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { PATH: process.env.PATH!, HOME: os.homedir(), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, exited, output: () => output };
}

async function until(condition: () => Promise<boolean> | boolean, what: () => string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const shared = () => ({
  DATABASE_URL: inject('databaseUrl'),
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_TASK_QUEUE: uniqueId('queue'),
});

describe('processes run alone', () => {
  it.each([
    ['main server', 'src/bin/api.ts', 'PORT'],
    ['data server', 'src/bin/data.ts', 'DATA_PORT'],
  ])('the %s serves /healthz and stops on SIGTERM', async (_name, entry, portVariable) => {
    const port = await freePort();
    const process_ = run(entry, { ...shared(), [portVariable]: String(port) });
    const healthy = async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
      } catch {
        return false;
      }
    };
    await until(healthy, process_.output);
    process_.child.kill('SIGTERM');
    expect(await process_.exited).toBe(0);
    expect(process_.output()).toContain('"msg":"stopped"');
  });

  it('the worker polls and stops on SIGTERM', async () => {
    const worker = run('src/bin/worker.ts', shared());
    await until(() => worker.output().includes('"msg":"worker polling"'), worker.output);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  it('a process without DATABASE_URL stops at once and says what to set', async () => {
    const api = run('src/bin/api.ts', { TEMPORAL_ADDRESS: inject('temporalAddress') });
    expect(await api.exited).toBe(1);
    expect(api.output()).toContain('DATABASE_URL is required');
  });

  it('a bad variable stops start-up with a message naming it', async () => {
    const api = run('src/bin/api.ts', { ...shared(), PORT: 'eighty' });
    expect(await api.exited).toBe(1);
    expect(api.output()).toMatch(/Invalid configuration:\n {2}PORT: /);
  });
});
