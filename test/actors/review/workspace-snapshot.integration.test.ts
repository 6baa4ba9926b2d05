import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import {
  SHELL_RECORDS_BYTES,
  type ShellRecords,
  WorkspaceSnapshotter,
  recordShellChanges,
} from '../../../actors/review/workspace-snapshot.ts';
import { ActionLogService } from '../../../actors/review/action-log.ts';
import { ActionLogShellRecorded } from '../../../schemas/review.ts';
import { compileIgnore, loadIgnore } from '../../../actors/review/workspace-snapshot-ignore.ts';
import { makeFixture, type Fixture } from '../../support/action-log-fs.ts';

const sh = (cwd: string, script: string) => execFileSync('/bin/sh', ['-c', script], { cwd });

/** A `store` for recordShellChanges: each batch checked against the carrier's schema, as the host would. */
function carriers() {
  const stored: ShellRecords[] = [];
  const store = async (batch: ShellRecords) => {
    ActionLogShellRecorded.data.parse({ agentId: 'kid', command: 'c', ...batch });
    stored.push(batch);
  };
  return { stored, store, records: () => stored.flatMap((b) => b.records) };
}

describe('workspace snapshots of shell side effects', () => {
  let f: Fixture;
  beforeEach(() => {
    f = makeFixture();
  });
  afterEach(() => f.cleanup());

  it(
    'detects what a command created, modified and deleted; records ' +
      'it tagged with the command; reject restores the workspace',
    async () => {
      f.write('src/a.ts', 'export const a = 1;\n');
      f.write('src/b.ts', 'export const b = 2;\n');
      f.write('README.md', '# hi\n');
      chmodSync(f.p('src/b.ts'), 0o750);
      const initial = f.tree();
      const snapper = new WorkspaceSnapshotter({ blobs: f.blobs });
      const before = await snapper.snapshot(f.ws);
      const command = "sed -i 's/1/42/' src/a.ts && rm src/b.ts && mkdir -p gen && echo made > gen/out.txt";
      sh(f.ws, command);
      const after = await snapper.snapshot(f.ws);
      const diff = await snapper.diff(before, after);
      expect(diff).toEqual({
        changes: [
          { path: f.p('gen/out.txt'), status: 'created', before: null, after: 'made\n' },
          {
            path: f.p('src/a.ts'),
            status: 'modified',
            before: 'export const a = 1;\n',
            after: 'export const a = 42;\n',
            beforeMode: statSync(f.p('src/a.ts')).mode & 0o777,
          },
          { path: f.p('src/b.ts'), status: 'deleted', before: 'export const b = 2;\n', after: null, beforeMode: 0o750 },
        ],
        reportedOnly: [],
      });
      const c = carriers();
      expect(
        await recordShellChanges(
          f.service,
          { agentId: 'kid', ancestors: ['root'], command, terminalId: 't-1' },
          diff,
          c.store,
        ),
      ).toBe(3);
      // One append for the whole command: 3 files × 2 logs (the agent's and its parent's).
      expect(c.stored.map((b) => [b.files, b.records.length])).toEqual([[3, 6]]);
      expect(f.facts).toEqual([]);
      const recorded = c
        .records()
        .filter((x) => x.type === 'action-log.change.recorded' && x.data.logAgentId === 'root');
      expect(recorded.map((x) => (x.data as { source: unknown }).source)).toEqual(
        Array(3).fill({ kind: 'shell', command, terminalId: 't-1' }),
      );
      expect((await f.service.list('root')).files.map((x) => [x.path, x.status, x.agents])).toEqual([
        [f.p('gen/out.txt'), 'created', ['kid']],
        [f.p('src/a.ts'), 'modified', ['kid']],
        [f.p('src/b.ts'), 'deleted', ['kid']],
      ]);
      const reply = await f.service.reject('root');
      expect(reply).toMatchObject({ deleted: [f.p('gen/out.txt')], conflicts: [], kept: [] });
      expect(f.tree()).toEqual(initial); // (the emptied directory gen/ stays)
      expect(statSync(f.p('src/b.ts')).mode & 0o777).toBe(0o750); // deleted, back with its mode
    },
  );

  it("splits a big command's records over appends under the size cap, never one file's, and they replay", async () => {
    // No time budget to hit: storing 600 files' blobs (each fsync'd) passed the default 3 s on a loaded machine,
    // and the walk stopped there (as it should); this test is about the records, not the budget.
    const snapper = new WorkspaceSnapshotter({ blobs: f.blobs, budget: { maxMs: 600_000 } });
    const before = await snapper.snapshot(f.ws);
    const files = 600;
    sh(
      f.ws,
      `mkdir -p gen && for i in $(seq 1 ${files}); do echo "line $i" > gen/file-with-a-longer-name-$i.txt; done`,
    );
    const after = await snapper.snapshot(f.ws);
    expect(after.complete).toBe(true);
    const diff = await snapper.diff(before, after);
    expect(diff.changes).toHaveLength(files);
    const c = carriers();
    const who = { agentId: 'kid', ancestors: ['mid', 'root'], command: 'for i in …', terminalId: 't-1' };
    expect(await recordShellChanges(f.service, who, diff, c.store)).toBe(files);
    expect(c.stored.length).toBeGreaterThan(1);
    for (const b of c.stored) {
      // Each file's three records (kid, mid, root) in the same carrier, and every carrier within the cap.
      expect(b.records.length).toBe(b.files * 3);
      expect(JSON.stringify(b.records).length).toBeLessThanOrEqual(SHELL_RECORDS_BYTES);
    }
    expect(c.stored.reduce((n, b) => n + b.files, 0)).toBe(files);
    // A host restarted from the log folds the carried records alone to the same logs.
    const restored = new ActionLogService({ blobs: f.blobs, emit: async () => undefined });
    restored.restore(c.records());
    for (const id of ['kid', 'mid', 'root']) {
      expect(restored.state(id)).toEqual(f.service.state(id));
      expect(Object.keys(restored.state(id).files)).toHaveLength(files);
    }
  });

  it('skips .git, node_modules, .skein and .gitignore patterns, and reports huge and binary files only', async () => {
    f.write('.gitignore', 'dist/\n*.log\n/build\n');
    for (const d of ['.git', 'node_modules/x', '.skein', 'dist', 'build', 'sub/dist']) f.write(`${d}/f.txt`, 'x\n');
    f.write('keep.txt', 'k\n');
    f.write('big.txt', 'a'.repeat(2000));
    writeFileSync(f.p('blob.bin'), Buffer.from([0xff, 0xfe, 0x00, 0x81]));
    const snapper = new WorkspaceSnapshotter({ blobs: f.blobs, budget: { maxFileBytes: 1000 } });
    const before = await snapper.snapshot(f.ws);
    expect(Object.keys(before.files)).toEqual(['.gitignore', 'big.txt', 'blob.bin', 'keep.txt']);
    expect(before.files['big.txt']).toMatchObject({ hash: null, why: 'too-large' });
    expect(before.files['blob.bin']).toMatchObject({ hash: null, why: 'binary' });
    sh(
      f.ws,
      'echo more >> big.txt; printf "\\001\\377" >> blob.bin; ' +
        'echo y > dist/f.txt; echo z > app.log; echo k2 > keep.txt',
    );
    const diff = await snapper.diff(before, await snapper.snapshot(f.ws));
    expect(diff.changes.map((c) => [c.path, c.status])).toEqual([[f.p('keep.txt'), 'modified']]);
    expect(diff.reportedOnly).toEqual([
      { path: f.p('big.txt'), status: 'modified', reason: expect.stringContaining('maxFileBytes') },
      { path: f.p('blob.bin'), status: 'modified', reason: expect.stringContaining('not UTF-8') },
    ]);
  });

  it('does not read unchanged files again', async () => {
    for (let i = 0; i < 20; i++) f.write(`d/f${i}.txt`, `file ${i}\n`);
    const snapper = new WorkspaceSnapshotter({ blobs: f.blobs });
    const first = await snapper.snapshot(f.ws);
    expect(first.readBytes).toBeGreaterThan(0);
    f.write('d/f3.txt', 'changed\n');
    const second = await snapper.snapshot(f.ws);
    expect(second.readBytes).toBe('changed\n'.length);
    expect((await snapper.diff(first, second)).changes.map((c) => c.path)).toEqual([f.p('d/f3.txt')]);
  });

  it('stops at the file budget and reports paths it could not classify', async () => {
    mkdirSync(f.p('a'));
    for (const n of ['a/1', 'a/2', 'b/3', 'b/4']) f.write(n, `${n}\n`);
    const snapper = new WorkspaceSnapshotter({ blobs: f.blobs, budget: { maxFiles: 3 } });
    const before = await snapper.snapshot(f.ws);
    expect(before).toMatchObject({ complete: false, stoppedBy: 'maxFiles', doneDirs: ['a'] });
    sh(f.ws, 'rm b/4; echo new > a/new');
    const diff = await snapper.diff(before, await snapper.snapshot(f.ws));
    expect(Object.keys(before.files)).toEqual(['a/1', 'a/2', 'b/3']);
    // a/ was walked whole both times: a/new is a creation. The second walk stopped before b/3: unknown,
    // not "deleted". b/4 was never seen by either walk.
    expect(diff).toEqual({
      changes: [{ path: f.p('a/new'), status: 'created', before: null, after: 'new\n' }],
      reportedOnly: [
        { path: f.p('b/3'), status: 'unknown', reason: 'not reached by the snapshot after the command (budget)' },
      ],
    });
  });
});

describe('snapshot ignore rules', () => {
  it('matches names, globs, dir-only and anchored patterns', () => {
    const m = compileIgnore(['# comment', 'dist/', '*.log', '/build', 'docs/**/tmp', '!keep.log', '']);
    expect([
      m('dist', true),
      m('dist', false),
      m('a/dist', true),
      m('x.log', false),
      m('a/b/x.log', false),
      m('build', true),
      m('a/build', true),
      m('docs/tmp', true),
      m('docs/a/b/tmp', true),
      m('docsxtmp', true),
      m('node_modules', true),
      m('src/.git', true),
      m('src/index.ts', false),
    ]).toEqual([true, false, true, true, true, true, false, true, true, false, true, true, false]);
  });

  it('follows git: ! negation, [abc] classes and ? wildcards', () => {
    const m = compileIgnore(['*.log', '!keep.log', 'build/', '!build/', 'tmp[0-9]', 'cache-[ab].txt', 'x?.bin']);
    expect([
      m('x.log', false),
      m('keep.log', false),
      m('a/keep.log', false),
      m('build', true),
      m('tmp1', true),
      m('tmpx', true),
      m('cache-a.txt', false),
      m('cache-c.txt', false),
      m('x1.bin', false),
      m('x12.bin', false),
    ]).toEqual([true, false, false, false, true, false, true, false, true, false]);
  });

  it('applies a nested .gitignore below its directory, where it may re-include what the root excluded', async () => {
    const f = makeFixture();
    onTestFinished(() => f.cleanup());
    f.write('.gitignore', '*.gen.ts\nsecret/\n');
    f.write('pkg/.gitignore', '!keep.gen.ts\nlocal.txt\n');
    f.write('pkg/keep.gen.ts', 'k\n');
    f.write('pkg/drop.gen.ts', 'd\n');
    f.write('pkg/local.txt', 'l\n');
    f.write('local.txt', 'root\n');
    f.write('other/local.txt', 'o\n');
    f.write('secret/canary.txt', 'CANARY-IGNORED\n');
    const matcher = await loadIgnore(f.ws);
    await matcher.enter('pkg');
    expect(matcher.ignores('pkg/keep.gen.ts', false)).toBe(false);
    expect(matcher.ignores('pkg/drop.gen.ts', false)).toBe(true);
    expect(matcher.ignores('pkg/local.txt', false)).toBe(true);
    expect(matcher.ignores('local.txt', false)).toBe(false);
    expect(matcher.ignores('other/local.txt', false)).toBe(false);
    // Through a whole snapshot: the walk reads the nested file itself.
    const snap = await new WorkspaceSnapshotter({ blobs: f.blobs }).snapshot(f.ws);
    expect(Object.keys(snap.files).sort()).toEqual([
      '.gitignore',
      'local.txt',
      'other/local.txt',
      'pkg/.gitignore',
      'pkg/keep.gen.ts',
    ]);
    expect(JSON.stringify(snap)).not.toContain('canary');
  });
});
