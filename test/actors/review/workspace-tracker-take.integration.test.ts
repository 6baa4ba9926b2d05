/**
 * `WorkspaceTracker.takeSoFar`: an edit is about to write a file a running command changed, and takes the
 * command's change at that one path out of its mark. It reads that path alone: a command churning thousands of
 * files held every edit in the workspace (under the edit's path lock) for the reads and blob writes of all of
 * them (p50 590 ms against 24 ms). Where the one path cannot be told apart from the rest (a directory above it
 * notified or replaced), everything is applied, as before. Real files, real inotify.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceSnapshotter } from '../../../actors/review/workspace-snapshot.ts';
import { WorkspaceTracker, type TrackMark } from '../../../actors/review/workspace-tracker.ts';
import { makeFixture, type Fixture } from '../../support/action-log-fs.ts';

const sh = (cwd: string, script: string) => execFileSync('/bin/bash', ['-c', script], { cwd });

type Diff = Awaited<ReturnType<WorkspaceTracker['end']>>;
const summary = (ws: string, diff: Diff | undefined) =>
  (diff?.changes ?? []).map((c) => [c.path.slice(ws.length + 1), c.status, c.after]);

let f: Fixture;
let outside: string;
let tracker: WorkspaceTracker;
/** A tracker with other limits than the default one (closing the one made before). */
const remake = (opts: { overflowAt?: number } = {}, budget: { maxFiles?: number; maxFileBytes?: number } = {}) => {
  tracker?.close();
  tracker = new WorkspaceTracker({
    snapshotter: new WorkspaceSnapshotter({ blobs: f.blobs, budget: { maxMs: 120_000, ...budget } }),
    watch: true,
    ...opts,
  });
};
beforeEach(() => {
  f = makeFixture();
  outside = mkdtempSync(join(tmpdir(), 'skein-outside-'));
  remake();
});
afterEach(() => {
  tracker.close();
  f.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

const watched = (mark: TrackMark) => {
  if (mark.kind !== 'watch') throw new Error('expected a watched root');
  return mark.rw;
};

describe('an edit takes a running command’s change at one path', () => {
  it('during a churn of 3,000 files (past overflowAt): reads its one file; the end still sees the 3,000', async () => {
    f.write('a.txt', 'base\n');
    f.write('churn/keep', 'k\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'echo CANARY > a.txt; cd churn && for i in $(seq 1 3000); do echo x > f$i; done');
    const taken = await tracker.takeSoFar(mark, join(f.ws, 'a.txt'));
    expect(summary(f.ws, taken)).toEqual([['a.txt', 'modified', 'CANARY\n']]);
    // Not one of the churned files was read for it.
    const rw = watched(mark);
    expect([...rw.state.keys()].filter((p) => p.startsWith('churn/f'))).toEqual([]);
    sh(f.ws, 'echo EDIT > a.txt');
    const end = summary(f.ws, await tracker.end(mark));
    expect(end.length).toBe(3_001);
    expect(end.filter(([p, s]) => !String(p).startsWith('churn/f') || s !== 'created')).toEqual([
      ['a.txt', 'modified', 'EDIT\n'],
    ]);
  }, 120_000);

  it('a change whose notification was lost (events dropped) is read from the disk all the same', async () => {
    f.write('a.txt', 'base\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'echo CANARY > a.txt');
    await new Promise((r) => setTimeout(r, 50));
    watched(mark).dirty.clear();
    expect(summary(f.ws, await tracker.takeSoFar(mark, join(f.ws, 'a.txt')))).toEqual([
      ['a.txt', 'modified', 'CANARY\n'],
    ]);
  });

  it('the directory above it replaced, or swapped for a symlink out: applies all, as the end would', async () => {
    f.write('d/a.txt', 'old\n');
    f.write('e/a.txt', 'old\n');
    f.write('d/other', 'o\n');
    sh(outside, 'echo OUTSIDE > a.txt');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, `mv d d.old && mkdir d && echo new > d/a.txt && rm -rf e && ln -s ${outside} e`);
    expect(summary(f.ws, await tracker.takeSoFar(mark, join(f.ws, 'd/a.txt')))).toEqual([
      ['d/a.txt', 'modified', 'new\n'],
    ]);
    expect(summary(f.ws, await tracker.takeSoFar(mark, join(f.ws, 'e/a.txt')))).toEqual([['e/a.txt', 'deleted', null]]);
    // Everything else the command did is still its own at its end; what was taken is not.
    expect(summary(f.ws, await tracker.end(mark))).toEqual([
      ['d.old/a.txt', 'created', 'old\n'],
      ['d.old/other', 'created', 'o\n'],
      ['d/other', 'deleted', null],
    ]);
  });

  it('a path the command made a directory, or ignored, or never touched: nothing to take', async () => {
    f.write('.gitignore', 'skip.txt\n');
    f.write('skip.txt', 'a\n');
    f.write('same.txt', 's\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'mkdir dir.txt && echo in > dir.txt/x && echo b > skip.txt');
    expect(await tracker.takeSoFar(mark, join(f.ws, 'dir.txt'))).toBeUndefined();
    expect(await tracker.takeSoFar(mark, join(f.ws, 'skip.txt'))).toBeUndefined();
    expect(await tracker.takeSoFar(mark, join(f.ws, 'same.txt'))).toBeUndefined();
    expect(summary(f.ws, await tracker.end(mark))).toEqual([['dir.txt/x', 'created', 'in\n']]);
  });

  it('after the edit writes, the command writing its first content back is seen, from the edit’s', async () => {
    f.write('a.txt', 'base\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'echo CANARY > a.txt');
    expect(summary(f.ws, await tracker.takeSoFar(mark, join(f.ws, 'a.txt')))).toHaveLength(1);
    sh(f.ws, 'echo EDIT > a.txt');
    await tracker.wrote(join(f.ws, 'a.txt'), 'EDIT\n');
    sh(f.ws, 'echo CANARY > a.txt');
    const end = (await tracker.end(mark)).changes;
    expect(end.map((c) => [c.path.slice(f.ws.length + 1), c.status, c.before, c.after])).toEqual([
      ['a.txt', 'modified', 'EDIT\n', 'CANARY\n'],
    ]);
  });

  it('the command wrote before the edit was told: the marks start from what the edit wrote, not the disk', async () => {
    f.write('a.txt', 'base\n');
    f.write('b.txt', 'base\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'echo EDIT > a.txt && echo CANARY > a.txt && echo EDIT > b.txt');
    await tracker.wrote(join(f.ws, 'a.txt'), 'EDIT\n');
    await tracker.wrote(join(f.ws, 'b.txt'), 'EDIT\n');
    const end = (await tracker.end(mark)).changes;
    // b.txt holds what the edit wrote: no change of the command's.
    expect(end.map((c) => [c.path.slice(f.ws.length + 1), c.status, c.before, c.after])).toEqual([
      ['a.txt', 'modified', 'EDIT\n', 'CANARY\n'],
    ]);
  });

  it('a mark ended after the tracker closed (a stop) scans its root: nothing it touched reads as deleted', async () => {
    f.write('a.txt', 'base\n');
    f.write('d/b.txt', 'b\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'echo CANARY > a.txt && echo B > d/b.txt && echo new > d/c.txt');
    tracker.close();
    expect(summary(f.ws, await tracker.end(mark))).toEqual([
      ['a.txt', 'modified', 'CANARY\n'],
      ['d/b.txt', 'modified', 'B\n'],
      ['d/c.txt', 'created', 'new\n'],
    ]);
  });

  it('an edit of an ignored file (or one in node_modules) is no change of the running command', async () => {
    f.write('.gitignore', '*.log\n');
    f.write('a.log', 'x\n');
    f.write('node_modules/m.js', 'm\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'echo EDIT > a.log; echo EDIT > node_modules/m.js');
    await tracker.wrote(join(f.ws, 'a.log'), 'EDIT\n');
    await tracker.wrote(join(f.ws, 'node_modules/m.js'), 'EDIT\n');
    const end = await tracker.end(mark);
    expect({ changes: summary(f.ws, end), reported: end.reportedOnly }).toEqual({ changes: [], reported: [] });
  });

  it('the root demoted to scans while the command runs: its content written back after the edit is seen', async () => {
    remake({ overflowAt: 10 }, { maxFiles: 30 });
    f.write('a.txt', 'base\n');
    const mark = await tracker.begin(f.ws);
    sh(f.ws, 'echo CANARY > a.txt; for i in $(seq 1 40); do echo x > f$i; done');
    await tracker.refreshAhead(f.ws);
    expect(tracker.mode(f.ws)).toBe('scan');
    expect(summary(f.ws, await tracker.takeSoFar(mark, join(f.ws, 'a.txt')))).toEqual([
      ['a.txt', 'modified', 'CANARY\n'],
    ]);
    sh(f.ws, 'echo EDIT > a.txt');
    await tracker.wrote(join(f.ws, 'a.txt'), 'EDIT\n');
    sh(f.ws, 'echo CANARY > a.txt');
    const end = summary(f.ws, await tracker.end(mark));
    expect(end.filter(([p]) => p === 'a.txt')).toEqual([['a.txt', 'modified', 'CANARY\n']]);
  });

  it('a file kept by hash only, rewritten (same size) by the command before the edit was told: reported', async () => {
    remake({}, { maxFileBytes: 1000 });
    f.write('big.txt', 'a'.repeat(2000));
    const mark = await tracker.begin(f.ws);
    const edit = 'X'.repeat(2000);
    sh(f.ws, `printf '${edit}' > big.txt; printf '${'Y'.repeat(2000)}' > big.txt`);
    await tracker.wrote(join(f.ws, 'big.txt'), edit);
    const end = await tracker.end(mark);
    expect(end.reportedOnly.map((r) => [r.path.slice(f.ws.length + 1), r.status])).toEqual([['big.txt', 'modified']]);
  });
});
