/**
 * @module
 * Action-log benchmark: `review.list` at the root of a fleet of 32 agents
 * that changed 5 files each (160 files, ~200 lines, a few hunks each), read
 * through the service (blob store on disk, diffs, hunk ids). Baseline: the
 * bare jsdiff `structuredPatch` of the same 160 text pairs in memory, the
 * irreducible part. Also: recordChange latency (a change recorded in the
 * child's and the root's log).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { structuredPatch } from 'diff';
import { ActionLogService } from '../../actors/review/action-log.ts';
import { BlobStore } from '../../actors/review/blob-store.ts';
import { percentile, type Bench, type BenchResult } from './types.ts';

const AGENTS = 32;
const FILES = 5;
const LINES = 200;
const RUNS = 30;

function fileText(seed: number): string {
  const line = (i: number) => `const v${seed}_${i} = ${(i * 7919 + seed) % 1000}; // line ${i}`;
  return `${Array.from({ length: LINES }, (_, i) => line(i)).join('\n')}\n`;
}

function edited(text: string, seed: number): string {
  const lines = text.split('\n');
  for (const at of [10, 80, 150]) lines[at + (seed % 7)] = `// edited by agent ${seed}`;
  lines.splice(120, 0, `export const added${seed} = true;`);
  return lines.join('\n');
}

export const bench: Bench = {
  name: 'action-log',
  async run(): Promise<BenchResult[]> {
    const dir = mkdtempSync(join(tmpdir(), 'skein-al-bench-'));
    try {
      const blobs = new BlobStore(join(dir, 'blobs'));
      const service = new ActionLogService({ blobs, emit: async () => {} });
      const pairs: Array<[string, string]> = [];
      const recordMs: number[] = [];
      for (let a = 0; a < AGENTS; a++) {
        for (let f = 0; f < FILES; f++) {
          const before = fileText(a * FILES + f);
          const after = edited(before, a);
          pairs.push([before, after]);
          const t0 = performance.now();
          await service.recordChange({
            agentId: `agent-${a}`,
            ancestors: ['root'],
            path: join(dir, 'ws', `a${a}`, `f${f}.ts`),
            before,
            after,
            source: { kind: 'edit' },
          });
          recordMs.push(performance.now() - t0);
        }
      }
      const listMs: number[] = [];
      let files = 0;
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        const reply = await service.list('root');
        listMs.push(performance.now() - t0);
        files = reply.files.length;
      }
      const baseMs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        for (const [b, c] of pairs) structuredPatch('a', 'b', b, c, undefined, undefined, { context: 3 });
        baseMs.push(performance.now() - t0);
      }
      const p50 = percentile(listMs, 50);
      const base50 = percentile(baseMs, 50);
      return [
        {
          name: `review.list at the root, ${AGENTS} agents × ${FILES} files (${files} files) p50`,
          value: p50,
          unit: 'ms',
          baseline: base50,
          ratio: base50 / p50,
          target: '≤ 100 ms',
          met: p50 <= 100,
          note:
            `p99 ${percentile(listMs, 99).toFixed(1)} ms; ` +
            'baseline = bare jsdiff structuredPatch of the same pairs in memory',
        },
        {
          name: 'recordChange (child + root log, 2 blobs) p50',
          value: percentile(recordMs, 50),
          unit: 'ms',
          note: `p99 ${percentile(recordMs, 99).toFixed(2)} ms over ${recordMs.length} changes (blob writes fsync'd)`,
        },
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
