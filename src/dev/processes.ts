// The servers `npm start` and `npm run start:cluster` run for themselves (PostgreSQL, Temporal) are found again by
// their pid files under DATA_DIR, so that a stop that runs out of time, or a start after a crash that orphaned
// them, can stop exactly those processes: never one that merely reused the pid, never another DATA_DIR's.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The command line of a running process, or undefined when it is gone (or a zombie: it holds nothing any more). */
export function commandLine(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/\) Z /.test(stat)) return undefined;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  return commandLine(pid) !== undefined;
}

/**
 * Sends `signal`, waits up to `graceMs` for the process to go, then SIGKILLs it (a stopped or wedged process
 * ignores everything else). Resolves once it is gone.
 */
export async function stopProcess(pid: number, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  const send = (which: NodeJS.Signals) => {
    try {
      process.kill(pid, which);
    } catch {
      // already gone
    }
  };
  send(signal);
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!alive(pid)) return;
  send('SIGKILL');
  while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The postmaster of the PostgreSQL data directory `databaseDir`, when one runs. */
export function runningPostmaster(databaseDir: string): number | undefined {
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  // postmaster.pid: the pid on the first line, the data directory on the second.
  const [pidLine = '', dirLine = ''] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine.trim());
  if (!Number.isInteger(pid) || pid <= 0 || path.resolve(dirLine.trim()) !== path.resolve(databaseDir))
    return undefined;
  const command = commandLine(pid);
  // A pid reused by something else after a reboot is not ours to stop; PostgreSQL itself then ignores the stale file.
  return command && /(^|\/)postgres(\s|$)/.test(command.split(' -D ')[0]) && command.includes(databaseDir)
    ? pid
    : undefined;
}

/**
 * Stops the PostgreSQL running on `databaseDir`: SIGINT is its fast shutdown (it rolls back open transactions and
 * writes a checkpoint, a second or two); past `graceMs` SIGKILL, after which it recovers from its WAL on the next start.
 */
export async function stopPostmaster(databaseDir: string, graceMs = 15_000): Promise<number | undefined> {
  const pid = runningPostmaster(databaseDir);
  if (pid === undefined) return undefined;
  await stopProcess(pid, 'SIGINT', graceMs);
  return pid;
}

/** A pid file for a server process we spawn, naming the process so that a reused pid is not mistaken for it. */
export class PidFile {
  constructor(
    readonly file: string,
    /** A piece of the command line only our process has (its data file, say). */
    readonly marker: string,
  ) {}

  write(pid: number): void {
    writeFileSync(this.file, `${pid}\n`);
  }

  remove(): void {
    rmSync(this.file, { force: true });
  }

  /** The recorded process, when it still runs and is still ours. */
  running(): number | undefined {
    if (!existsSync(this.file)) return undefined;
    const pid = Number(readFileSync(this.file, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    return commandLine(pid)?.includes(this.marker) ? pid : undefined;
  }

  /** Stops the recorded process (SIGTERM, then SIGKILL after `graceMs`) and forgets it; its pid when there was one. */
  async stop(graceMs = 10_000): Promise<number | undefined> {
    const pid = this.running();
    if (pid !== undefined) await stopProcess(pid, 'SIGTERM', graceMs);
    this.remove();
    return pid;
  }
}
