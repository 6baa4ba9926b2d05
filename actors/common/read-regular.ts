/**
 * @module
 * Reads a regular file by path without following a symlink at its last component and without ever blocking:
 * opened `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`, checked on the descriptor (regular), read to its end. For callers
 * that found the file by an `lstat` (shell tracking's snapshots): between that look and the open, an agent can
 * swap the file for a symlink to a file outside the workspace (the open fails: ELOOP) or for a FIFO (opened
 * without waiting for a writer, then refused as not regular), so neither leaks outside content into the action
 * log nor stalls the host.
 *
 * A file up to `READ_HERE_MAX` is read on the event loop's thread (opened, checked and read in a few system
 * calls; through the thread pool each costs ~35 µs of CPU and a loop turn: stat-now.ts); a bigger one in the pool.
 */
import { closeSync, constants, fstatSync, openSync, readFile, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const READ_HERE_MAX = 256 * 1024;
/** How a file found by an `lstat` is opened for reading: never through a link, never waiting (a FIFO, a tty). */
export const READ_NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const readFd = promisify(readFile);

/** The whole content of the regular file at `path`; undefined when it is missing, not regular, or unreadable. */
export async function readRegularFile(path: string): Promise<Buffer | undefined> {
  let fd: number;
  try {
    fd = openSync(path, READ_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    return st.size < READ_HERE_MAX ? readFileSync(fd) : await readFd(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
