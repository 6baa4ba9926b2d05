/**
 * `removeTree`'s descriptors are one budget for the whole runtime, live on real directories: a chain nested past
 * PATH_MAX is walked through descriptors of its directories, and a process that built such chains in many
 * terminals at once held 512 descriptors per removal when the bound was per walk (32 × 512 with 32 terminals).
 * What another removal holds counts; a walk refused a descriptor leaves the chain for the next pass and leaks none.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTree, WALK_FDS, WalkDescriptors } from '../../../actors/terminal/cgroup-files.ts';

const NAME = 'd'.repeat(250);

/** A chain `depth` directories deep under a new temp dir, made relative to each level (its path passes PATH_MAX). */
function deepChain(depth: number): string {
  const root = mkdtempSync(join(tmpdir(), 'skein-walk-'));
  const top = join(root, 'chain');
  mkdirSync(top);
  const cwd = process.cwd();
  try {
    process.chdir(top);
    for (let i = 0; i < depth; i++) {
      mkdirSync(NAME);
      process.chdir(NAME);
    }
  } finally {
    process.chdir(cwd);
  }
  return top;
}

const openFds = () => readdirSync('/proc/self/fd').length;

describe('removeTree: one descriptor budget for all removals', () => {
  const made: string[] = [];
  afterEach(() => {
    // GNU rm walks by descriptors: Node's rmSync fails past PATH_MAX.
    for (const dir of made.splice(0)) execFileSync('rm', ['-rf', join(dir, '..')]);
  });

  // 40 levels of 251 characters: ~10,000 characters of path, a descriptor for each ~2,048 of them.
  const chain = () => {
    const dir = deepChain(40);
    made.push(dir);
    return dir;
  };

  it('removes a chain past PATH_MAX when the budget has room, and gives every descriptor back', async () => {
    const dir = chain();
    const budget = new WalkDescriptors(8);
    const before = openFds();
    await removeTree(dir, undefined, undefined, budget);
    expect(existsSync(dir)).toBe(false);
    expect(budget.held).toBe(0);
    expect(openFds()).toBe(before);
  });

  it('leaves the chain, names the budget and leaks nothing when other removals hold the descriptors', async () => {
    const dir = chain();
    const budget = new WalkDescriptors(8);
    expect(budget.take(7)).toBe(true); // another removal's descriptors
    const before = openFds();
    await expect(removeTree(dir, undefined, undefined, budget)).rejects.toThrow(
      /hold 8 of the 8 they share; the next pass tries again/,
    );
    expect(existsSync(dir)).toBe(true);
    expect(budget.held).toBe(7);
    expect(openFds()).toBe(before);
    // The other removal ends: the next pass removes it.
    budget.give(7);
    await removeTree(dir, undefined, undefined, budget);
    expect(existsSync(dir)).toBe(false);
    expect(budget.held).toBe(0);
  });

  it('is the default for every removal: one process-wide budget of 512', async () => {
    const dir = chain();
    expect(WALK_FDS.max).toBe(512);
    expect(WALK_FDS.take(WALK_FDS.max - WALK_FDS.held)).toBe(true);
    try {
      await expect(removeTree(dir)).rejects.toThrow(/of the 512 they share/);
      expect(existsSync(dir)).toBe(true);
    } finally {
      WALK_FDS.give(WALK_FDS.max);
    }
    await removeTree(dir);
    expect(existsSync(dir)).toBe(false);
  });
});
