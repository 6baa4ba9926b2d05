/**
 * An agent makes the host's fuzzy matcher do unbounded work with one small edit. The search compares every
 * old_text line with every file line and walks back from every best candidate; in a file of near-alike lines
 * (an agent writes one with one shell command) every line is a candidate. Unbounded, a 200-line old_text against
 * 5,000 such lines held the host's event loop for 20 s (every agent and the operator waited), 500 against
 * 20,000 for 208 s, and two 200,000-character lines would compare for hours. The canaries: the host's event
 * loop stalled for seconds, a reply never coming, an error listing thousands of lines, the file changed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { ALLOW_ALL_POLICY, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks, stallOf } from './support.ts';

/** Longest the host's event loop may stall on one of these edits (unbounded: 20 s and more, see above). */
const MAX_STALL_MS = 5_000;
const ALIKE_LINES = 5_000;
const QUERY_LINES = 500;
const LONG_LINE = 200_000;

let rt: TestRuntime;
const sockets = agentSockets(() => rt);
const as = sockets.as;
const alike = Array.from({ length: ALIKE_LINES }, (_, i) => `  const value${i % 50} = compute(${i % 7}, "x");`)
  .join('\n')
  .concat('\n');
const nearAlike = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `const value${i % 50} = compute(${(i + 3) % 7}, 'y');`).join('\n');

/** Resets the kernel's peak of this process's resident memory (VmHWM) to what it holds now. */
function resetPeakRss(): void {
  writeFileSync('/proc/self/clear_refs', '5');
}

/** This process's peak resident memory since the last reset, in bytes. */
function peakRss(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Number(kb) * 1024;
}

function failedWith(reply: Reply, code: string): string {
  expect(reply.ok).toBe(false);
  if (reply.ok) return '';
  expect(reply.error.code).toBe(code);
  return reply.error.message;
}

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', policy: ALLOW_ALL_POLICY });
  writeFileSync(join(rt.workspace, 'alike.ts'), alike);
  const long = 'abcdefghij'.repeat(LONG_LINE / 10);
  writeFileSync(join(rt.workspace, 'long.txt'), `${long}\n${long}\n`);
  ok(await rt.call('agent.spawn', { label: 'hog', agentId: 'hog' }));
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('edit-matcher');

describe('hostile: an edit that makes the fuzzy matcher work without bound', { timeout: 120_000 }, () => {
  attack(
    'fuzzy-work',
    `${QUERY_LINES} near-alike old_text lines against ${ALIKE_LINES} near-alike file lines: refused, no stall`,
    async () => {
      const hog = await as('hog');
      const edits = [{ oldText: nearAlike(QUERY_LINES), newText: 'pwned' }];
      const { value, stallMs } = await stallOf(() =>
        call(hog, 'hog', 'file.edit', { path: 'alike.ts', edits }, { timeoutMs: 100_000 }),
      );
      console.log(`fuzzy-work: host stalled ${stallMs.toFixed(0)} ms`);
      const message = failedWith(value, 'not_found');
      expect(message).toContain(`at ${QUERY_LINES} lines against the file's ${ALIKE_LINES}`);
      expect(message).toContain('copy old_text exactly');
      expect(stallMs).toBeLessThan(MAX_STALL_MS);
      expect(readFileSync(join(rt.workspace, 'alike.ts'), 'utf8')).toBe(alike);
    },
    120_000,
  );

  attack(
    'long-lines',
    `a ${LONG_LINE}-character old_text line, nearly one of the file's: refused, no stall`,
    async () => {
      const hog = await as('hog');
      const line = `${'abcdefghij'.repeat(LONG_LINE / 10 - 1)}abcdefghiX`;
      const { value, stallMs } = await stallOf(() =>
        call(
          hog,
          'hog',
          'file.edit',
          { path: 'long.txt', edits: [{ oldText: line, newText: 'pwned' }] },
          {
            timeoutMs: 100_000,
          },
        ),
      );
      console.log(`long-lines: host stalled ${stallMs.toFixed(0)} ms`);
      expect(failedWith(value, 'not_found')).toContain('too large to search for approximately');
      expect(stallMs).toBeLessThan(MAX_STALL_MS);
      expect(readFileSync(join(rt.workspace, 'long.txt'), 'utf8')).not.toContain('pwned');
    },
    120_000,
  );

  attack(
    'everywhere',
    `a 3-line old_text alike to every place of ${ALIKE_LINES} lines: ambiguous, naming a few places`,
    async () => {
      const hog = await as('hog');
      const edits = [{ oldText: nearAlike(3), newText: 'pwned' }];
      const reply = await call(hog, 'hog', 'file.edit', { path: 'alike.ts', edits }, { timeoutMs: 100_000 });
      const message = failedWith(reply, 'conflict');
      // Unbounded, every line of the file was traced back and listed (~30 KB of line numbers).
      expect(message).toMatch(/matched multiple locations in the file at lines: [\d, ]+ and more\./);
      expect(message.length).toBeLessThan(1_000);
      expect(readFileSync(join(rt.workspace, 'alike.ts'), 'utf8')).toBe(alike);
    },
    120_000,
  );

  attack(
    'json-depth',
    '30 edit.input chunks of a million "[" each: the scanner refuses past its depth, the host holds none of it',
    async () => {
      const hog = await as('hog');
      const begun = ok(await call(hog, 'hog', 'edit.begin', { path: 'alike.ts' }, { timeoutMs: 30_000 }));
      const editId = String(begun['editId']);
      ok(await call(hog, 'hog', 'edit.input', { editId, chunk: '{"edits":' }, { timeoutMs: 30_000 }));
      const chunk = '['.repeat(1_000_000);
      const rssBefore = process.memoryUsage().rss;
      let peak = rssBefore;
      for (let i = 0; i < 30; i++) {
        await call(hog, 'hog', 'edit.input', { editId, chunk }, { timeoutMs: 30_000 });
        peak = Math.max(peak, process.memoryUsage().rss);
      }
      const finish = await call(hog, 'hog', 'edit.finish', { editId }, { timeoutMs: 30_000 });
      console.log(`json-depth: host RSS +${((peak - rssBefore) / 2 ** 20).toFixed(0)} MiB at most`);
      // Unbounded, each "[" was a frame held until it closed: ~2 GB for these 30 million.
      expect(failedWith(finish, 'invalid_json')).toContain('nests objects and arrays more than 64 deep');
      expect(peak - rssBefore).toBeLessThan(400 * 2 ** 20);
      expect(readFileSync(join(rt.workspace, 'alike.ts'), 'utf8')).toBe(alike);
    },
    120_000,
  );

  attack(
    'live-diff',
    'new_text chunks of 1,000 characters against a 40,000-character matched range: the live diff holds a slice',
    async () => {
      const region = Array.from({ length: 39_990 }, (_, i) => 'abcdefghij'[(i * 7) % 10]).join('');
      writeFileSync(join(rt.workspace, 'wide.txt'), `${region}\n`);
      const hog = await as('hog');
      const send = (editId: string, chunk: string) =>
        call(hog, 'hog', 'edit.input', { editId, chunk }, { timeoutMs: 60_000 });
      const editId = String(
        ok(await call(hog, 'hog', 'edit.begin', { path: 'wide.txt' }, { timeoutMs: 30_000 }))['editId'],
      );
      ok(await send(editId, `{"edits":[{"old_text":${JSON.stringify(region)},"new_text":"`));
      // The peak of the host's resident memory (this process: the runtime is embedded) from here on.
      resetPeakRss();
      const before = peakRss();
      for (let c = 0; c < 5; c++) {
        ok(await send(editId, Array.from({ length: 1_000 }, (_, i) => 'abcdefghij'[(i * 3 + c) % 10]).join('')));
      }
      const grown = peakRss() - before;
      ok(await send(editId, '"}]}'));
      ok(await call(hog, 'hog', 'edit.finish', { editId }, { timeoutMs: 60_000 }));
      console.log(`live-diff: host peak RSS +${(grown / 2 ** 20).toFixed(0)} MiB over 5 chunks`);
      // Unbounded, each chunk's alignment held 12 bytes a cell: 1,000 × 40,000 cells, ~480 MB.
      expect(grown).toBeLessThan(150 * 2 ** 20);
      expect(readFileSync(join(rt.workspace, 'wide.txt'), 'utf8').length).toBe(5_000 + 1);
    },
    120_000,
  );

  attack(
    'streamed',
    `the ${QUERY_LINES}-line old_text streamed a line per edit.input: every reply comes, no stall`,
    async () => {
      const hog = await as('hog');
      const editId = String(
        ok(await call(hog, 'hog', 'edit.begin', { path: 'alike.ts' }, { timeoutMs: 30_000 }))['editId'],
      );
      const body = JSON.stringify({ edits: [{ old_text: nearAlike(QUERY_LINES), new_text: 'pwned' }] });
      const chunks = body.split(/(?<=\\n)/);
      expect(chunks.length).toBeGreaterThanOrEqual(QUERY_LINES);
      // The old_text is judged when its string closes: the refusal is the reply to that input or to the finish.
      const { value, stallMs } = await stallOf(async () => {
        for (const chunk of chunks) {
          const reply = await call(hog, 'hog', 'edit.input', { editId, chunk }, { timeoutMs: 30_000 });
          if (!reply.ok) return reply;
        }
        return call(hog, 'hog', 'edit.finish', { editId }, { timeoutMs: 100_000 });
      });
      console.log(`streamed: ${chunks.length} chunks, host stalled ${stallMs.toFixed(0)} ms at most`);
      expect(failedWith(value, 'not_found')).toContain('too large to search for approximately');
      expect(stallMs).toBeLessThan(MAX_STALL_MS);
      expect(readFileSync(join(rt.workspace, 'alike.ts'), 'utf8')).toBe(alike);
    },
    120_000,
  );
});
