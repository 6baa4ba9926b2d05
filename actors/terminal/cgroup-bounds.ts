/**
 * @module
 * The files of a per-agent cgroup bound (agent-cgroups.ts): what a memory bound writes, and writing a bound's
 * files in order; the steps that make a terminal's cgroups, and running them here.
 */
import { join } from 'node:path';
import { makeDirsSync } from './cgroup-dirs.mjs';
import { memoryBoundBytes, type MemoryBound } from '../../machines/terminal/cgroup-v1.ts';
import { shownBytes } from '../../machines/terminal/limit-hints.ts';

/** One file of a bound; a file the kernel lacks is skipped when `optional`. */
export type BoundFile = { file: string; value: string; optional?: boolean };

/**
 * One step of making a terminal's cgroups: a directory, or a bound's file (skipped when `optional` and the kernel
 * lacks it). Plain data: the shell helper's process runs them too (pty-zygote-child.mjs).
 */
export type DirOp = { mkdir: string } | { write: string; value: string; optional?: boolean | undefined };
/** Runs steps in order, and batches in the order given; at the first failure removes what it made and rejects. */
export type DirMaker = (ops: readonly DirOp[]) => Promise<void>;

/** `DirMaker` in this process, synchronously in the call. */
export const makeDirsHere: DirMaker = (ops) => {
  try {
    makeDirsSync(ops);
    return Promise.resolve();
  } catch (err) {
    return Promise.reject(err);
  }
};

/** Writes a bound's files in order; a file the kernel lacks is skipped when `optional`. */
export function writeBound(dir: string, bound: readonly BoundFile[]): void {
  makeDirsSync(boundOps(dir, bound));
}

/** The steps that write a bound's files into the cgroup `dir`. */
export function boundOps(dir: string, bound: readonly BoundFile[]): DirOp[] {
  return bound.map((b) => ({ write: join(dir, b.file), value: b.value, optional: b.optional }));
}

/**
 * A memory bound's files and how a hint shows it, or undefined for none. Swap counts too where the kernel
 * accounts it (memsw: memory plus swap; written after, as it must not be lower).
 */
export function memoryBound(
  setting: MemoryBound,
  available: number,
): { bound: BoundFile[]; shown: string } | undefined {
  const bytes = memoryBoundBytes(setting, available);
  if (bytes <= 0) return undefined;
  const value = String(bytes);
  return {
    bound: [
      { file: 'memory.limit_in_bytes', value },
      { file: 'memory.memsw.limit_in_bytes', value, optional: true },
    ],
    shown: typeof setting === 'string' ? `${setting}: ${shownBytes(bytes)}` : shownBytes(bytes),
  };
}
