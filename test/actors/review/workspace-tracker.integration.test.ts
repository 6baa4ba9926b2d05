import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceSnapshotter } from '../../../actors/review/workspace-snapshot.ts';
import { WorkspaceTracker, type TrackMark } from '../../../actors/review/workspace-tracker.ts';
import { makeFixture, type Fixture } from '../../support/action-log-fs.ts';

/** Runs a shell script in the workspace; execFileSync blocks the event loop, so notifications pile up meanwhile. */
const sh = (cwd: string, script: string) => execFileSync('/bin/bash', ['-c', script], { cwd });

type Summary = Array<[string, string, string | null]>;

describe.each([
  ['change notifications', true],
  ['snapshots (fallback)', false],
])('shell side effects tracked by %s', (_name, watch) => {
  let f: Fixture;
  let outside: string;
  let tracker: WorkspaceTracker;
  beforeEach(() => {
    f = makeFixture();
    outside = mkdtempSync(join(tmpdir(), 'skein-outside-'));
    tracker = new WorkspaceTracker({
      snapshotter: new WorkspaceSnapshotter({ blobs: f.blobs, budget: { maxMs: 120_000 } }),
      watch,
    });
  });
  afterEach(() => {
    tracker.close();
    f.cleanup();
    rmSync(outside, { recursive: true, force: true });
  });

  /** Runs `script` between begin and end; the changes as [relative path, status, content after]. */
  async function run(script: string): Promise<Summary> {
    const mark = await tracker.begin(f.ws);
    expect(tracker.mode(f.ws)).toBe(watch ? 'watch' : 'scan');
    sh(f.ws, script);
    return summary(await tracker.end(mark));
  }
  const summary = (diff: Awaited<ReturnType<WorkspaceTracker['end']>>): Summary => {
    expect(diff.reportedOnly).toEqual([]);
    return diff.changes.map((c) => [c.path.slice(f.ws.length + 1), c.status, c.after]);
  };

  it('sees what a command created (in new nested directories), modified and deleted', async () => {
    f.write('src/a.ts', 'a\n');
    f.write('src/b.ts', 'b\n');
    expect(await run('echo A > src/a.ts && rm src/b.ts && mkdir -p gen/x/y && echo made > gen/x/y/out.txt')).toEqual([
      ['gen/x/y/out.txt', 'created', 'made\n'],
      ['src/a.ts', 'modified', 'A\n'],
      ['src/b.ts', 'deleted', null],
    ]);
    // The next command sees only its own change, also in the directory made by the last one.
    expect(await run('echo more > gen/x/y/two.txt')).toEqual([['gen/x/y/two.txt', 'created', 'more\n']]);
  });

  it('a write then a revert is no change; a write hidden by resetting the mtime is still seen', async () => {
    f.write('a.txt', 'one\n');
    expect(await run('echo two > a.txt && echo one > a.txt')).toEqual([]);
    expect(
      await run(
        'touch -r a.txt /tmp/.skein-ref-$$ && echo evil > a.txt && ' +
          'touch -r /tmp/.skein-ref-$$ a.txt; rm -f /tmp/.skein-ref-$$',
      ),
    ).toEqual([['a.txt', 'modified', 'evil\n']]);
  });

  it('writes through symlinks: a link to a workspace file records it; a link outside records nothing', async () => {
    f.write('real.txt', 'r\n');
    sh(f.ws, `ln -s real.txt link.txt && ln -s ${outside} out`);
    await run('true'); // the links are in place before the command under test
    expect(
      await run(`echo via-link > link.txt && echo canary > out/CANARY && mkdir out/sub && echo x > out/sub/f`),
    ).toEqual([['real.txt', 'modified', 'via-link\n']]);
  });

  it('a directory swapped for a symlink to the outside: its files are gone, nothing outside is recorded', async () => {
    f.write('d/keep.txt', 'k\n');
    expect(await run(`mv d d.old && ln -s ${outside} d && echo canary > d/CANARY && echo y > d/keep.txt`)).toEqual([
      ['d.old/keep.txt', 'created', 'k\n'],
      ['d/keep.txt', 'deleted', null],
    ]);
    expect(await run('echo canary2 > d/CANARY2')).toEqual([]);
  });

  it('a directory moved out, changed and moved back, or deleted and made again, shows its changes', async () => {
    f.write('d/f.txt', 'f\n');
    f.write('e/g.txt', 'g\n');
    expect(
      await run(
        `mv d ${outside}/d && echo evil > ${outside}/d/f.txt && mkdir ${outside}/d/n && ` +
          `echo n > ${outside}/d/n/new && mv ${outside}/d d`,
      ),
    ).toEqual([
      ['d/f.txt', 'modified', 'evil\n'],
      ['d/n/new', 'created', 'n\n'],
    ]);
    expect(await run('rm -rf e && mkdir e && echo again > e/h.txt')).toEqual([
      ['e/g.txt', 'deleted', null],
      ['e/h.txt', 'created', 'again\n'],
    ]);
  });

  it('9,000 new files at once (more events than the kernel queues, the loop blocked) are all recorded', async () => {
    f.write('many/keep', 'k\n'); // a directory watched before the command: its files arrive as notifications only
    const changes = await run('cd many && for i in $(seq 1 9000); do echo same > f$i; done');
    expect(changes.length).toBe(9_000);
    expect(changes.filter(([p, s]) => !p.startsWith('many/f') || s !== 'created')).toEqual([]);
    expect(await run('echo 1 > many/f8999')).toEqual([['many/f8999', 'modified', '1\n']]);
  }, 120_000);

  it('changes between commands are nobody’s; commands at once each see what changed while they ran', async () => {
    f.write('x.txt', 'x\n');
    const a = await tracker.begin(f.ws);
    sh(f.ws, 'echo 1 > x.txt');
    const b: TrackMark = await tracker.begin(f.ws);
    sh(f.ws, 'echo 2 > y.txt');
    expect(summary(await tracker.end(a))).toEqual([
      ['x.txt', 'modified', '1\n'],
      ['y.txt', 'created', '2\n'],
    ]);
    sh(f.ws, 'echo 3 > z.txt');
    expect(summary(await tracker.end(b))).toEqual([
      ['y.txt', 'created', '2\n'],
      ['z.txt', 'created', '3\n'],
    ]);
    sh(f.ws, 'echo between > w.txt');
    expect(await run('true')).toEqual([]);
  });

  it('16 commands ending at once (refreshes shared): each sees its own change, made just before its end', async () => {
    const marks = await Promise.all(Array.from({ length: 16 }, () => tracker.begin(f.ws)));
    const ends: Array<Promise<Summary>> = [];
    for (let i = 0; i < marks.length; i++) {
      // Written while earlier ends' refreshes are queued or running: a shared refresh must still see it.
      sh(f.ws, `echo ${i} > c${i}.txt`);
      ends.push(tracker.end(marks[i]!).then(summary));
      if (i % 3 === 0) await new Promise((r) => setImmediate(r));
    }
    const seen = await Promise.all(ends);
    seen.forEach((changes, i) => expect(changes).toContainEqual([`c${i}.txt`, 'created', `${i}\n`]));
  });

  it('skips .git, node_modules and .gitignore patterns, also in directories a command makes', async () => {
    f.write('.gitignore', 'build/\n*.log\n');
    expect(
      await run(
        'mkdir -p build node_modules/p .git && echo b > build/o && echo l > a.log && ' +
          'echo p > node_modules/p/i && echo s > s.txt',
      ),
    ).toEqual([['s.txt', 'created', 's\n']]);
  });
});

describe('notification tracking falls back to a scan', () => {
  let f: Fixture;
  afterEach(() => f.cleanup());

  it('prepared ahead (terminal.open): a change before the first command is nobody’s, its own is seen', async () => {
    f = makeFixture();
    f.write('a.txt', 'a\n');
    const tracker = new WorkspaceTracker({ snapshotter: new WorkspaceSnapshotter({ blobs: f.blobs }) });
    try {
      await tracker.prepare(f.ws);
      expect(tracker.mode(f.ws)).toBe('watch');
      sh(f.ws, 'echo before > a.txt');
      const mark = await tracker.begin(f.ws);
      sh(f.ws, 'echo mine > b.txt');
      const diff = await tracker.end(mark);
      expect(diff.changes.map((c) => [c.path.slice(f.ws.length + 1), c.status, c.after])).toEqual([
        ['b.txt', 'created', 'mine\n'],
      ]);
    } finally {
      tracker.close();
    }
  });

  it('after too many notifications in one interval (overflowAt), still recording every change', async () => {
    f = makeFixture();
    f.write('old.txt', 'o\n');
    const tracker = new WorkspaceTracker({ snapshotter: new WorkspaceSnapshotter({ blobs: f.blobs }), overflowAt: 10 });
    try {
      const mark = await tracker.begin(f.ws);
      sh(f.ws, 'rm old.txt; for i in $(seq 1 50); do echo $i > n$i; done');
      const diff = await tracker.end(mark);
      expect(diff.changes.length).toBe(51);
      expect(diff.changes.find((c) => c.path.endsWith('old.txt'))?.status).toBe('deleted');
      expect(tracker.mode(f.ws)).toBe('watch');
    } finally {
      tracker.close();
    }
  });

  it('when the first scan is over the budget: snapshots around each command, as before notifications', async () => {
    f = makeFixture();
    for (let i = 0; i < 5; i++) f.write(`f${i}.txt`, `${i}\n`);
    const snapshotter = new WorkspaceSnapshotter({ blobs: f.blobs, budget: { maxFiles: 3 } });
    const tracker = new WorkspaceTracker({ snapshotter });
    try {
      const mark = await tracker.begin(f.ws);
      expect(tracker.mode(f.ws)).toBe('scan');
      sh(f.ws, 'echo changed > f0.txt');
      const diff = await tracker.end(mark);
      expect(diff.changes.map((c) => [c.path.slice(f.ws.length + 1), c.status, c.after])).toEqual([
        ['f0.txt', 'modified', 'changed\n'],
      ]);
    } finally {
      tracker.close();
    }
  });
});

/** Loop turns counted by a setImmediate chain: no clock, only the order in which the loop runs things. */
function countTurns(): { readonly turns: number; stop(): void } {
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turns() {
      return turns;
    },
    stop: () => {
      ticking = false;
    },
  };
}

describe('notification tracking under many commands at once', () => {
  it('holds the root for applies only: a begin during another refresh ends 2 loop turns later, not 4', async () => {
    const f = makeFixture();
    f.write('a.txt', 'a\n');
    const tracker = new WorkspaceTracker({ snapshotter: new WorkspaceSnapshotter({ blobs: f.blobs }) });
    try {
      await tracker.prepare(f.ws);
      const loop = countTurns();
      const first = tracker.begin(f.ws);
      // A few microtasks: the first refresh is under way (in its barrier), no loop turn has passed.
      for (let i = 0; i < 5; i++) await Promise.resolve();
      const calledAt = loop.turns;
      const second = await tracker.begin(f.ws);
      const waited = loop.turns - calledAt;
      loop.stop();
      tracker.discard(await first);
      tracker.discard(second);
      // Its own barrier (two turns) and an apply of nothing; queued behind the first one's barrier it was four.
      expect(waited).toBe(2);
    } finally {
      tracker.close();
      f.cleanup();
    }
  });

  // Issue 15: the exec's refresh runs beside its permission decision (refreshAhead), not after it.
  it('a begin after its refresh ahead opens its mark in no loop turn; a change seen since is nobody’s', async () => {
    const f = makeFixture();
    f.write('a.txt', 'a\n');
    const tracker = new WorkspaceTracker({ snapshotter: new WorkspaceSnapshotter({ blobs: f.blobs }) });
    try {
      await tracker.prepare(f.ws);
      const loop = countTurns();
      const ahead = tracker.refreshAhead(f.ws);
      await ahead;
      const calledAt = loop.turns;
      const mark = await tracker.begin(f.ws, ahead);
      expect(loop.turns - calledAt).toBe(0);
      sh(f.ws, 'echo mine > b.txt');
      expect((await tracker.end(mark)).changes.map((c) => [c.path.slice(f.ws.length + 1), c.status])).toEqual([
        ['b.txt', 'created'],
      ]);
      // A change made after the refresh ahead and notified before the begin is not the command's: the begin
      // applies it first (a barrier and an apply of its own).
      const second = tracker.refreshAhead(f.ws);
      await second;
      sh(f.ws, 'echo between > a.txt');
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      const since = loop.turns;
      const late = await tracker.begin(f.ws, second);
      expect(loop.turns - since).toBeGreaterThanOrEqual(2);
      loop.stop();
      sh(f.ws, 'echo own > c.txt');
      expect((await tracker.end(late)).changes.map((c) => [c.path.slice(f.ws.length + 1), c.status])).toEqual([
        ['c.txt', 'created'],
      ]);
    } finally {
      tracker.close();
      f.cleanup();
    }
  });
});

/** A snapshotter that counts the file states it is computing at once (the tracker's per-path work). */
class CountingSnapshotter extends WorkspaceSnapshotter {
  inFlight = 0;
  maxInFlight = 0;
  override async fileState(...args: Parameters<WorkspaceSnapshotter['fileState']>) {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await super.fileState(...args);
    } finally {
      this.inFlight--;
    }
  }
}

// Issue 15: a fleet's agents change files of one workspace all the time, and every exec there waits for an apply
// at its start and end; applied one path after another, each path's awaits took a turn of the busy loop.
describe('notification tracking applies the paths of one depth at once', () => {
  it('reads 20 files changed in one directory side by side, and sees each change, below a new one too', async () => {
    const f = makeFixture();
    for (let i = 0; i < 10; i++) f.write(`old${i}.txt`, `old ${i}\n`);
    const snapshotter = new CountingSnapshotter({ blobs: f.blobs });
    const tracker = new WorkspaceTracker({ snapshotter });
    try {
      await tracker.prepare(f.ws);
      snapshotter.maxInFlight = 0;
      const mark = await tracker.begin(f.ws);
      sh(
        f.ws,
        'for i in $(seq 0 9); do echo new $i > new$i.txt; echo changed $i > old$i.txt; done; ' +
          'mkdir -p sub/deep && echo below > sub/deep/x.txt && rm new3.txt',
      );
      const diff = await tracker.end(mark);
      expect(diff.reportedOnly).toEqual([]);
      const changes = diff.changes.map((c) => [c.path.slice(f.ws.length + 1), c.status, c.after]).sort();
      expect(changes).toEqual(
        [
          ...Array.from({ length: 10 }, (_, i) => [`old${i}.txt`, 'modified', `changed ${i}\n`]),
          ...Array.from({ length: 10 }, (_, i) => [`new${i}.txt`, 'created', `new ${i}\n`]).filter(
            ([p]) => p !== 'new3.txt',
          ),
          ['sub/deep/x.txt', 'created', 'below\n'],
        ].sort(),
      );
      // One after another (the code before) this was 1.
      expect(snapshotter.maxInFlight).toBeGreaterThan(1);
    } finally {
      tracker.close();
      f.cleanup();
    }
  });
});
