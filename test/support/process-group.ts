/**
 * Stopping a shell loop a test started with `detached: true`: the whole process group, so a command the
 * loop was running (a `mv` in a rename race) does not go on after the shell dies.
 */
import type { ChildProcess } from 'node:child_process';

export function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}
