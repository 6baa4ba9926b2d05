import { rmSync, unlinkSync } from 'node:fs';
import { initialTransition, transition } from 'xstate';
import { actionLogAggregate } from '../../../machines/review/action-log.ts';
import { join } from 'node:path';
import { ActionLogService } from '../../../actors/review/action-log.ts';
import { BlobMissingError, BlobStore } from '../../../actors/review/blob-store.ts';
import { NotFoundError } from '../../../schemas/errors.ts';
import { ReviewAccept, ReviewList, ReviewReject, ReviewUndoReject } from '../../../schemas/review.ts';
import { makeFixture, type Fixture } from '../../support/action-log-fs.ts';
import { editedPairArb, fcSeed } from '../../support/action-log-text.ts';
import fc from 'fast-check';

const seed = fcSeed();
const TEN = `${Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;

/** Agent `agentId` (under `ancestors`) changes a real file and records it, as the edit wiring will. */
async function agentWrites(f: Fixture, agentId: string, ancestors: string[], rel: string, after: string | null) {
  const before = f.read(rel);
  if (after === null) unlinkSync(f.p(rel));
  else f.write(rel, after);
  return f.service.recordChange({
    agentId,
    ancestors,
    path: f.p(rel),
    before,
    after,
    source: { kind: after === null ? 'shell' : 'edit' },
  });
}

describe('ActionLogService on real files', () => {
  let f: Fixture;
  beforeEach(() => {
    f = makeFixture();
  });
  afterEach(() => f.cleanup());

  async function threeLevelScenario() {
    f.write('src/mod.ts', TEN);
    f.write('docs/old.md', '# old\n');
    f.write('untouched.txt', 'same\n');
    const initial = f.tree();
    await agentWrites(f, 'leaf', ['mid', 'root'], 'src/mod.ts', TEN.replace('line 2\n', 'line two\n'));
    await agentWrites(f, 'leaf', ['mid', 'root'], 'src/new.ts', 'export const x = 1;\n');
    await agentWrites(f, 'mid', ['root'], 'docs/old.md', null);
    await agentWrites(f, 'root', [], 'src/mod.ts', f.read('src/mod.ts')!.replace('line 12\n', 'line twelve\n'));
    return initial;
  }

  it(
    'the root reviews its whole tree; reject-all restores the ' +
      "workspace byte-identically and undo brings the agents' versions back",
    async () => {
      const initial = await threeLevelScenario();
      const agentVersions = f.tree();
      const list = ReviewList.reply.parse(await f.service.list('root'));
      expect(list.files.map((x) => [x.path, x.status, x.agents, x.hunks.length])).toEqual([
        [f.p('src/mod.ts'), 'modified', ['leaf', 'root'], 2],
        [f.p('src/new.ts'), 'created', ['leaf'], 1],
        [f.p('docs/old.md'), 'deleted', ['mid'], 1],
      ]);
      expect(list.files[0]!.diff).toContain('-line 2\n+line two\n');
      expect((await f.service.list('mid')).files.map((x) => x.path)).toEqual([
        f.p('src/mod.ts'),
        f.p('src/new.ts'),
        f.p('docs/old.md'),
      ]);
      expect((await f.service.list('leaf')).files.map((x) => x.agents)).toEqual([['leaf'], ['leaf']]);
      expect(f.facts.filter((x) => x.type === 'action-log.change.recorded').map((x) => x.agentId)).toEqual([
        'leaf',
        'mid',
        'root',
        'leaf',
        'mid',
        'root',
        'mid',
        'root',
        'root',
      ]);

      f.facts.length = 0;
      const rejected = ReviewReject.reply.parse(await f.service.reject('root'));
      expect(rejected).toEqual({
        restored: [f.p('src/mod.ts'), f.p('docs/old.md')],
        deleted: [f.p('src/new.ts')],
        kept: [],
        conflicts: [],
        undoAvailable: true,
      });
      expect(f.tree()).toEqual(initial);
      expect(f.facts.map((x) => [x.type, x.agentId])).toEqual([
        ['review.rejected', 'root'],
        ['action-log.files.updated', 'mid'],
        ['action-log.files.updated', 'leaf'],
      ]);
      for (const id of ['root', 'mid', 'leaf']) expect((await f.service.list(id)).files).toEqual([]);

      const undone = ReviewUndoReject.reply.parse(await f.service.undoReject('root'));
      expect(undone).toEqual({
        reapplied: [f.p('src/mod.ts'), f.p('src/new.ts'), f.p('docs/old.md')],
        conflicts: [],
        notRestorable: [],
      });
      expect(f.tree()).toEqual(agentVersions);
      expect((await f.service.list('root')).files.map((x) => [x.path, x.status])).toEqual([
        [f.p('src/mod.ts'), 'modified'],
        [f.p('src/new.ts'), 'created'],
        [f.p('docs/old.md'), 'deleted'],
      ]);
      await expect(f.service.undoReject('root')).rejects.toThrow("Agent 'root' has no reject-all to undo");
    },
  );

  it("accept at an ancestor is reflected in the descendants' logs", async () => {
    await threeLevelScenario();
    const reply = ReviewAccept.reply.parse(await f.service.accept('mid', { paths: [f.p('src/new.ts')] }));
    expect(reply).toEqual({ accepted: [{ path: f.p('src/new.ts'), hunkIds: [expect.any(String)], remaining: 0 }] });
    expect((await f.service.list('leaf')).files.map((x) => x.path)).toEqual([f.p('src/mod.ts')]);
    expect((await f.service.list('root')).files.map((x) => x.path)).toContain(f.p('src/new.ts'));
    await f.service.accept('root');
    for (const id of ['root', 'mid', 'leaf']) expect((await f.service.list(id)).files).toEqual([]);
    expect(f.read('src/new.ts')).toBe('export const x = 1;\n');
  });

  it('accepts and rejects single hunks', async () => {
    f.write('a.txt', TEN);
    await agentWrites(f, 'kid', ['root'], 'a.txt', TEN.replace('line 1\n', 'ONE\n').replace('line 12\n', 'TWELVE\n'));
    const [h1, h2] = (await f.service.list('root')).files[0]!.hunks;
    await f.service.accept('root', { hunkIds: [h1!.id] });
    expect((await f.service.reject('root', { hunkIds: [h2!.id] })).restored).toEqual([f.p('a.txt')]);
    expect(f.read('a.txt')).toBe(TEN.replace('line 1\n', 'ONE\n'));
    for (const id of ['root', 'kid']) expect((await f.service.list(id)).files).toEqual([]);
  });

  it('preserves a concurrent on-disk change and reports the hunk that no longer applies', async () => {
    f.write('a.txt', TEN);
    await agentWrites(f, 'kid', ['root'], 'a.txt', TEN.replace('line 1\n', 'ONE\n').replace('line 12\n', 'TWELVE\n'));
    const [h1] = (await f.service.list('root')).files[0]!.hunks;
    f.write('a.txt', f.read('a.txt')!.replace('line 2\n', 'user was here\n'));
    const reply = await f.service.reject('root');
    expect(reply.conflicts).toEqual([
      { path: f.p('a.txt'), hunkIds: [h1!.id], reason: expect.stringContaining('changed on disk') },
    ]);
    expect(f.read('a.txt')).toBe(TEN.replace('line 1\n', 'ONE\n').replace('line 2\n', 'user was here\n'));
  });

  it('refuses unknown paths and hunk ids, and a missing base, writing nothing', async () => {
    await threeLevelScenario();
    const before = f.tree();
    await expect(f.service.reject('root', { paths: [f.p('nope.txt')] })).rejects.toThrow(NotFoundError);
    await expect(f.service.accept('root', { hunkIds: ['h0000'] })).rejects.toThrow(
      "Hunk id 'h0000' is not in the action log of agent 'root'",
    );
    const base = (await f.service.list('root')).files[0]!.baseHash!;
    rmSync(f.blobs.pathOf(base));
    // A restarted host (fresh store, no cache) rebuilt from the facts finds the base gone.
    const emitted: unknown[] = [];
    const restarted = new ActionLogService({
      blobs: new BlobStore(f.blobs.dir),
      emit: async (x) => void emitted.push(x),
    });
    restarted.restore(f.facts as never);
    const err = await restarted.reject('root').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobMissingError);
    expect((err as Error).message).toBe(
      `Content '${base}' (base of '${f.p('src/mod.ts')}' in the ` +
        `action log of 'root') is missing from the blob store at ` +
        `'${f.blobs.dir}'; nothing was written. Restore the data dir ` +
        `from a backup, or accept the change to drop it from review.`,
    );
    expect(f.tree()).toEqual(before);
    expect(emitted).toEqual([]);
    await expect(restarted.reject('root', { paths: [f.p('src/new.ts')] })).resolves.toMatchObject({
      deleted: [f.p('src/new.ts')],
    });
    await expect(
      f.service.recordChange({
        agentId: 'a',
        ancestors: [],
        path: 'rel.txt',
        before: null,
        after: 'x',
        source: { kind: 'write' },
      }),
    ).rejects.toThrow("Path 'rel.txt' is not absolute");
  });

  it('records by hash when the contents are already in the store, and refuses unknown hashes', async () => {
    f.write('a.txt', 'new\n');
    const beforeHash = await f.blobs.put('old\n');
    const resultHash = await f.blobs.put('new\n');
    const who = { agentId: 'kid', ancestors: ['root'], path: f.p('a.txt'), source: { kind: 'edit' as const } };
    const missing = 'f'.repeat(64);
    await expect(f.service.recordChangeByHash({ ...who, beforeHash: missing, resultHash })).rejects.toThrow(
      BlobMissingError,
    );
    expect(f.facts).toEqual([]);
    expect(await f.service.recordChangeByHash({ ...who, beforeHash, resultHash, changeId: 'chg-x' })).toEqual({
      changeId: 'chg-x',
    });
    expect(f.facts.map((x) => [x.agentId, (x.data as { baseHash: string }).baseHash])).toEqual([
      ['kid', beforeHash],
      ['root', beforeHash],
    ]);
    await f.service.reject('root');
    expect(f.read('a.txt')).toBe('old\n');
  });

  it('serializes a reject with an edit that holds the path lock', async () => {
    f.write('a.txt', 'base\n');
    await agentWrites(f, 'kid', ['root'], 'a.txt', 'first\n');
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const edit = f.service.lock.withLock([f.p('a.txt')], async () => {
      await gate;
      f.write('a.txt', 'second\n');
      await f.service.recordChange(
        {
          agentId: 'kid',
          ancestors: ['root'],
          path: f.p('a.txt'),
          before: 'first\n',
          after: 'second\n',
          source: { kind: 'edit' },
        },
        { lockHeld: true },
      );
    });
    let rejectDone = false;
    const reject = f.service.reject('root').then((r) => ((rejectDone = true), r));
    await new Promise((r) => setImmediate(r));
    expect(rejectDone).toBe(false);
    expect(f.service.lock.isLocked(f.p('a.txt'))).toBe(true);
    open();
    await edit;
    expect(await reject).toMatchObject({ restored: [f.p('a.txt')], conflicts: [] });
    expect(f.read('a.txt')).toBe('base\n');
  });

  it('folding the emitted facts through the aggregate machine (replay) gives the live state of every log', async () => {
    await threeLevelScenario();
    await f.service.accept('root', { paths: [f.p('docs/old.md')] });
    f.write('src/mod.ts', f.read('src/mod.ts')!.replace('line 6\n', 'user edit\n'));
    await f.service.reject('mid');
    await agentWrites(f, 'leaf', ['mid', 'root'], 'src/late.ts', 'late\n');
    for (const id of ['root', 'mid', 'leaf']) {
      let [snap] = initialTransition(actionLogAggregate);
      for (const fact of f.facts.filter((x) => x.agentId === id)) [snap] = transition(actionLogAggregate, snap, fact);
      expect(snap.context).toEqual(f.service.state(id));
    }
    expect(Object.keys(f.service.state('root').files)).toEqual([f.p('src/mod.ts'), f.p('src/late.ts')]);
  });

  it('rebuilds the same logs from its facts', async () => {
    await threeLevelScenario();
    await f.service.reject('root', { paths: [f.p('src/new.ts')] });
    const copy = new ActionLogService({ blobs: f.blobs, emit: async () => {} });
    copy.restore(f.facts as never);
    for (const id of ['root', 'mid', 'leaf']) expect(await copy.list(id)).toEqual(await f.service.list(id));
    await copy.accept('root');
    expect((await copy.list('leaf')).files).toEqual([]);
  });

  it(`random texts and edits on real files: reject restores the bytes, undo the agent's (seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(editedPairArb, fc.boolean(), async ({ base, current }, crlf) => {
        const g = makeFixture();
        try {
          const [b, c] = crlf ? [base.replace(/\n/g, '\r\n'), current.replace(/\n/g, '\r\n')] : [base, current];
          g.write('f.txt', b);
          await agentWrites(g, 'kid', ['root'], 'f.txt', c);
          if (b === c) return;
          await g.service.reject('root');
          expect(g.read('f.txt')).toBe(b);
          expect(await g.service.undoReject('root')).toEqual({
            reapplied: [g.p('f.txt')],
            conflicts: [],
            notRestorable: [],
          });
          expect(g.read('f.txt')).toBe(c);
        } finally {
          g.cleanup();
        }
      }),
      { seed, numRuns: 25 },
    );
  });

  it('keeps the file mode when restoring', async () => {
    f.write('run.sh', '#!/bin/sh\necho hi\n');
    const { chmodSync, statSync } = await import('node:fs');
    chmodSync(f.p('run.sh'), 0o755);
    await agentWrites(f, 'root', [], 'run.sh', '#!/bin/sh\necho bye\n');
    await f.service.reject('root');
    expect(statSync(f.p('run.sh')).mode & 0o777).toBe(0o755);
    expect(f.read('run.sh')).toBe('#!/bin/sh\necho hi\n');
    expect(join(f.ws, 'run.sh')).toBe(f.p('run.sh'));
  });
});
