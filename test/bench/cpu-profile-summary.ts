/**
 * @module
 * Sums a `.cpuprofile`'s self time by file and by function (file:function), main thread only (the profile
 * of one thread), and prints the top entries with their share: `node --import tsx
 * test/bench/cpu-profile-summary.ts <file.cpuprofile> [top]`.
 */
import { readFileSync } from 'node:fs';

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const byFile = new Map<string, number>();
const byFunction = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  const { url, functionName, lineNumber } = byId.get(id)!.callFrame;
  const where = shortUrl(url) || `(${functionName || 'anonymous'})`;
  total += us;
  if (functionName === '(idle)') continue;
  byFile.set(where, (byFile.get(where) ?? 0) + us);
  const fn = `${where}:${functionName || '(anon)'}:${lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
}
const idle = [...selfUs].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)');
const idleUs = idle.reduce((s, [, us]) => s + us, 0);
process.stdout.write(`total ${(total / 1000).toFixed(0)} ms, busy ${((total - idleUs) / 1000).toFixed(0)} ms\n`);
for (const [title, map] of [
  ['by file', byFile],
  ['by function', byFunction],
] as const) {
  process.stdout.write(`\n${title}\n`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = ((100 * us) / (total - idleUs)).toFixed(1).padStart(5);
    process.stdout.write(`${share}% ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}\n`);
  }
}

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'nm:')
    .replace(/^\/(work|tmp)\/[^/]+\//, '');
}
