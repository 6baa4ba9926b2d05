import type { DirOp } from './cgroup-bounds.ts';

/** Runs a terminal's cgroup steps in order; at the first failure removes the directories they made and throws. */
export declare function makeDirsSync(ops: readonly DirOp[]): void;
