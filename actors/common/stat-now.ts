/**
 * @module
 * File metadata looked up on the event loop's own thread: `lstat`/`stat` of paths inside the workspace roots
 * and the data dir, where the confined walk, the root check, the blob store and shell tracking ask it
 * thousands of times a minute under a fleet.
 *
 * Why not `fs/promises`: a metadata call is one system call of ~1 µs on a local file system, but through
 * libuv's thread pool it costs ~35 µs of CPU (the hand-off to a pool thread and back; `npm run bench --
 * machine` measures it) and, on a busy host, a turn of the event loop before the caller goes on: a file.edit
 * awaited a dozen of them. What stays in the pool: fsyncs, a `file.read`'s copy of the bytes, contents over
 * 256 KiB, and creating a file or directory (a new inode can cost 0.4-0.8 ms of kernel CPU on a busy ext4;
 * atomic-write.ts). A path an
 * agent names outside the workspace (the gate's `realpath`) is not looked up here either: only places skein
 * chose, on the file systems it works on, so a stalled mount elsewhere cannot stall the loop.
 */
import { type BigIntStats, lstatSync, type Stats, statSync } from 'node:fs';

/** `lstat(path)`, or undefined when it fails for any reason (missing, unreadable, a component not a directory). */
export function lstatNow(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** `lstat(path)` with nanosecond fields, or undefined when it fails for any reason. */
export function lstatBigNow(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** `stat(path)` (symlinks followed) with nanosecond fields, or undefined when it fails for any reason. */
export function statBigNow(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** `stat(path)` (symlinks followed), or undefined when it fails for any reason. */
export function statNow(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
