/**
 * Shell tracking reads what changed in the workspace after an `lstat` found a regular file. A loop flips that
 * file between a regular file and a symlink to a secret outside the workspace, live, while an agent's execs make
 * the tracker read it again and again. Opened by path and following links, the read between the look and the
 * open took the secret into the blob store and the action log (the old code's `open(full, 'r')`, a turn of the
 * event loop after the `lstat`). The canary is the secret's content: it must never reach the data dir or a review.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileReview } from '../../schemas/review.ts';
import { killGroup } from '../support/process-group.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const CANARY = `TRACKER-SWAP-CANARY-${process.pid}`;
const EXECS = 150;

/** Every regular file under `dir` whose bytes hold `needle`. */
function holding(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true })) {
    const path = join(dir, String(entry));
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isFile() && readFileSync(path).includes(needle)) found.push(path);
  }
  return found;
}

describe('hostile: a tracked file swapped for a symlink out of the workspace between its lstat and its read', () => {
  let rt: TestRuntime;
  let swapper: ChildProcess | undefined;

  beforeAll(async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
  }, 60_000);
  afterAll(async () => {
    if (swapper) killGroup(swapper);
    await rt?.dispose();
  });

  it('never stores or shows the secret the link points at', async () => {
    const outside = join(rt.dir, 'outside');
    mkdirSync(outside);
    const secret = join(outside, 'secret.txt');
    writeFileSync(secret, `${CANARY}\n`);
    const { terminalId } = ok(await rt.call('terminal.open', {}));
    // The first exec starts tracking (the workspace's first scan).
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    // Renames, so the path is always a regular file or the link: each flip is one notification and one read.
    swapper = spawn(
      'bash',
      [
        '-c',
        `cd '${rt.workspace}' && while :; do printf 'safe\\n' > .f.tmp; mv -f .f.tmp f.txt; ` +
          `ln -sfn '${secret}' .f.lnk; mv -fT .f.lnk f.txt; done`,
      ],
      { detached: true, stdio: 'ignore' },
    );
    for (let i = 0; i < EXECS; i++) {
      const r = ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
      expect(r['exitCode']).toBe(0);
    }
    killGroup(swapper);
    swapper = undefined;
    // Left a regular file by a command, whatever the loop last did (removed first: a link would be written
    // through), so that this last change is the agent's and recorded.
    await new Promise((r) => setTimeout(r, 100));
    ok(await rt.call('terminal.exec', { terminalId, command: "rm -f f.txt && printf 'final\\n' > f.txt" }));
    const files = ok(await rt.call('review.list', {}))['files'] as FileReview[];
    // Tracked all along (the file is in the review, as last written), and nothing read of it is the secret.
    expect(files.find((f) => f.path === join(rt.workspace, 'f.txt'))?.diff).toContain('+final');
    expect(files.filter((f) => f.diff.includes(CANARY)).map((f) => f.path)).toEqual([]);
    expect(holding(join(rt.dir, 'data'), CANARY)).toEqual([]);
  }, 120_000);
});
