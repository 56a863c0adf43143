// What the start and build scripts print while they work, so long work shows progress.
import { spawn } from 'node:child_process';

/** The start scripts' progress lines: "▸ label…", then "✓ label (seconds)" when the step is done. */
export function progressStep(say: (message: string) => void) {
  return async <T>(label: string, work: () => Promise<T>): Promise<T> => {
    const begun = Date.now();
    say(`▸ ${label}…`);
    const result = await work();
    say(`  ✓ ${label} (${((Date.now() - begun) / 1000).toFixed(1)} s)`);
    return result;
  };
}

/**
 * Runs a long build (go install, mvn) to its end, saying every 15 s how far it got: `counts` tells which output lines
 * are a unit of progress (a package compiled, a file downloaded). Answers the exit code and the last 20 lines of output,
 * for the error message of a failed build.
 */
export async function runWithProgress(options: {
  command: string;
  args: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** What the meter counts, e.g. "packages compiled". */
  unit: string;
  /** The activity, for "still building X: …". */
  doing: string;
  counts: (line: string) => boolean;
  say: (message: string) => void;
}): Promise<{ code: number | null; lastLines: string[] }> {
  const started = Date.now();
  let done = 0;
  let lastLines: string[] = [];
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const onOutput = (chunk: Buffer) => {
    const lines = chunk.toString().split('\n').filter(Boolean);
    done += lines.filter(options.counts).length;
    lastLines = [...lastLines, ...lines].slice(-20);
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  const ticker = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    options.say(
      `  still ${options.doing}: ${done} ${options.unit}, ${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`,
    );
  }, 15_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  }).finally(() => clearInterval(ticker));
  return { code, lastLines };
}
