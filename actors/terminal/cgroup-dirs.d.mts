import type { DirOp } from './cgroup-bounds.ts';

/** Runs a terminal's cgroup steps in order; at the first failure removes the directories they made and throws. */
export declare function makeDirsSync(ops: readonly DirOp[]): void;

/** Removes the directories the steps make, if they are there (before running them again elsewhere). */
export declare function unmakeDirsSync(ops: readonly DirOp[]): void;
