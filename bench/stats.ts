// Small helpers for the benchmarks: run N tasks at a given concurrency and summarise latencies.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface Summary {
  count: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Runs `total` calls of `task` with `concurrency` in flight; returns each call's latency in ms. */
export async function runConcurrently(
  total: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<Summary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const index = next++;
        const begun = performance.now();
        await task(index);
        latencies.push(performance.now() - begun);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { count: total, seconds, perSecond: total / seconds, ...percentiles(latencies) };
}

export function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

export function line(label: string, summary: Summary): string {
  return `${label.padEnd(34)} ${summary.perSecond.toFixed(1).padStart(8)}/s   p50 ${summary.p50.toFixed(1).padStart(7)} ms   p99 ${summary.p99.toFixed(1).padStart(7)} ms   (${summary.count} in ${summary.seconds.toFixed(1)} s)`;
}

/** `--name N` on the command line, or the default. */
export function numberFlag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

/** The administrator token: SVC_ADMIN_TOKEN, or the demo one `npm start` keeps in DATA_DIR. */
export function benchAdminToken(dataDir: string): string {
  return (
    process.env.SVC_ADMIN_TOKEN ??
    JSON.parse(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8')).admin_token
  );
}

/**
 * CPU seconds used so far by the processes of this machine, grouped: PostgreSQL, the Temporal server, our Node
 * processes (the main servers and workers) and the rest. Linux only (/proc); empty elsewhere. The clock ticks of
 * /proc/<pid>/stat are 1/100 s on Linux. A process counts the CPU of its children that ended too (cutime, cstime):
 * a PostgreSQL backend whose connection closed during a phase would otherwise take its CPU with it, and the phase's
 * figure for PostgreSQL could come out below zero.
 */
export function cpuByProcess(): Map<string, number> {
  const groups = new Map<string, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return groups;
  }
  for (const pid of pids) {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
      const group = /postgres/.test(command)
        ? 'PostgreSQL'
        : /temporal.* server|temporal-server|\/server start/.test(command)
          ? 'Temporal'
          : /bench\//.test(command)
            ? 'the bench'
            : /src\/bin\//.test(command)
              ? 'our processes'
              : 'other';
      groups.set(group, (groups.get(group) ?? 0) + seconds);
    } catch {
      // A process that ended meanwhile.
    }
  }
  return groups;
}

/** The CPU each group used between two readings, per unit of work, in ms. */
export function cpuPer(before: Map<string, number>, after: Map<string, number>, units: number): string {
  return [...after]
    .filter(([group]) => group !== 'other')
    .map(([group, seconds]) => `${group} ${(((seconds - (before.get(group) ?? 0)) * 1000) / units).toFixed(0)} ms`)
    .join(', ');
}
