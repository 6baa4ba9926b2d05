/**
 * The project policy watcher while its workspace root moves (the `hostile/root-swap` flake): the file is read
 * from the root skein pinned, so a root swapped for a symlink out, or renamed away, is neither read through
 * (a policy planted outside is never loaded, a missing root never reads as a deleted file) nor given up on (an
 * edit made meanwhile is read once the root is back); and a `.skein` removed and made again within one
 * debounce, which on ext4 gets the freed inode number back, is watched again.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PolicyFileRead, watchPolicyFiles } from '../../../actors/permission/policy-watch.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';

const NOT_READ = 'policy file not read; the policy in force holds';

function setup() {
  const tmp = tempDir('skein-policy-root-');
  const root = join(tmp.path, 'ws');
  const file = join(root, '.skein', 'policy.json');
  mkdirSync(join(root, '.skein'), { recursive: true });
  writeFileSync(file, JSON.stringify({ default: 'deny' }));
  const seen: PolicyFileRead[] = [];
  const { logger, lines } = memoryLogger('warn');
  const watch = watchPolicyFiles(
    [{ layer: 'project', path: file, root }],
    async (_layer, _path, read) => {
      seen.push(read);
    },
    logger,
    50,
  );
  /** Waits until the watcher read `mode` (after an edit, so it is armed). */
  const sees = (mode: string) =>
    expect.poll(() => JSON.stringify(seen.at(-1)), { timeout: 5_000 }).toContain(`"default":"${mode}"`);
  /** Waits until a settled change met the root away: read (the old code) or not read (logged). */
  const settledAway = (n: number, warned: number) =>
    expect
      .poll(() => seen.length > n || lines.filter((l) => l.msg === NOT_READ).length > warned, { timeout: 5_000 })
      .toBe(true);
  const notReadCount = () => lines.filter((l) => l.msg === NOT_READ).length;
  return {
    tmp,
    root,
    file,
    seen,
    sees,
    settledAway,
    notReadCount,
    dispose() {
      watch.close();
      tmp.dispose();
    },
  };
}

describe('watchPolicyFiles with a workspace root', () => {
  it('never reads the policy through a root swapped for a symlink out, and reads the real one once back', async () => {
    const t = setup();
    try {
      writeFileSync(t.file, JSON.stringify({ default: 'deny', tools: {} }));
      await t.sees('deny');
      // A policy planted outside, where the root's name will point.
      const outside = join(t.tmp.path, 'outside');
      mkdirSync(join(outside, '.skein'), { recursive: true });
      writeFileSync(join(outside, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
      const n = t.seen.length;
      const warned = t.notReadCount();
      const kept = `${t.root}-kept`;
      renameSync(t.root, kept);
      symlinkSync(outside, t.root);
      // The real directory changes while the root is the symlink: a settled change meets the swap.
      writeFileSync(join(kept, '.skein', 'policy.json'), JSON.stringify({ default: 'confirm' }));
      await t.settledAway(n, warned);
      expect(t.seen.slice(n)).toEqual([]);
      unlinkSync(t.root);
      renameSync(kept, t.root);
      await t.sees('confirm');
      expect(JSON.stringify(t.seen)).not.toContain('allow');
    } finally {
      t.dispose();
    }
  });

  it('keeps the policy while the root is renamed away, and reads an edit made meanwhile once it is back', async () => {
    const t = setup();
    try {
      writeFileSync(t.file, JSON.stringify({ default: 'deny', tools: {} }));
      await t.sees('deny');
      const n = t.seen.length;
      const warned = t.notReadCount();
      const away = `${t.root}-away`;
      renameSync(t.root, away);
      writeFileSync(join(away, '.skein', 'policy.json'), JSON.stringify({ default: 'confirm' }));
      await t.settledAway(n, warned);
      // Not "the file was deleted" (an empty layer would drop the project's rules).
      expect(t.seen.slice(n)).toEqual([]);
      renameSync(away, t.root);
      await t.sees('confirm');
      // And it is watched where it is again.
      writeFileSync(t.file, JSON.stringify({ default: 'allow' }));
      await t.sees('allow');
    } finally {
      t.dispose();
    }
  });

  it('watches again a .skein removed and made again within one debounce (same inode number or not)', async () => {
    const t = setup();
    try {
      writeFileSync(t.file, JSON.stringify({ default: 'deny', tools: {} }));
      await t.sees('deny');
      rmSync(join(t.root, '.skein'), { recursive: true });
      mkdirSync(join(t.root, '.skein'));
      writeFileSync(t.file, JSON.stringify({ default: 'confirm' }));
      await t.sees('confirm');
      writeFileSync(t.file, JSON.stringify({ default: 'allow' }));
      await t.sees('allow');
    } finally {
      t.dispose();
    }
  });
});
