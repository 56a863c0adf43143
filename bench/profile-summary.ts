// Sums the self time of V8 CPU profiles (`node --cpu-prof`, one file per thread) by package and by function, so a
// profile of `npm start` under bench:deals reads as a table instead of a flame graph (docs/performance.md, "Where the
// CPU goes").
//
// Usage: npm run bench:profile -- /tmp/prof/*.cpuprofile [--top 20]
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 15;
// The number after --top is not a file; without --top (topAt -1) every argument is one, the first too.
const files = args.filter((arg, index) => !arg.startsWith('--') && (topAt < 0 || index !== topAt + 1));
if (files.length === 0) {
  console.error('Give the .cpuprofile files: npm run bench:profile -- /tmp/prof/*.cpuprofile');
  process.exit(2);
}

const root = `${process.cwd()}/`;
/** A package name for code under node_modules, the repository path for ours, the V8 label for native work. */
function owner(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'anonymous'})`;
  const local = url.replace(/^file:\/\//, '');
  const modules = local.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = local.slice(modules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  return local.startsWith(root) ? local.slice(root.length) : local;
}

const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
const share = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0).padStart(3)}%`;

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let idle = 0;
  let total = 0;
  profile.samples.forEach((id, index) => {
    const took = profile.timeDeltas[index] ?? 0;
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    total += took;
    if (functionName === '(idle)') {
      idle += took;
      return;
    }
    const who = owner(url, functionName);
    byOwner.set(who, (byOwner.get(who) ?? 0) + took);
    const fn = `${functionName || '(anonymous)'} ${url ? `${who}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + took);
  });
  const busy = total - idle;
  console.log(
    `\n${path.basename(file)}: ${ms(total).trim()} ms sampled, ${ms(busy).trim()} ms busy (${share(busy, total).trim()})`,
  );
  const table = (title: string, entries: Map<string, number>) => {
    console.log(`  ${title}`);
    for (const [name, took] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`  ${ms(took)} ms ${share(took, busy)}  ${name.length > 100 ? `${name.slice(0, 99)}…` : name}`);
    }
  };
  table('self time by package (share of busy time)', byOwner);
  table('self time by function', byFunction);
}
