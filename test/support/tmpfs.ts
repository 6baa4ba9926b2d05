/**
 * @module
 * A small tmpfs for disk-full tests (`mount -t tmpfs -o size=…`). Needs root (CI runs as root); when the
 * mount fails the caller skips with the printed reason, never silently.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Tmpfs = {
  path: string;
  /** Fills the disk until fewer than `leaveBytes` are free; returns the filler's path. */
  fill(leaveBytes?: number): string;
  /** Removes every filler: space returns. */
  free(): void;
  dispose(): void;
};

export function mountTmpfs(sizeBytes: number): Tmpfs | string {
  const path = mkdtempSync(join(tmpdir(), 'skein-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (err) {
    rmSync(path, { recursive: true, force: true });
    return `cannot mount a tmpfs (${String((err as Error).message).split('\n')[0]}): needs root`;
  }
  const fillers: string[] = [];
  return {
    path,
    fill(leaveBytes = 0) {
      const filler = join(path, `filler-${fillers.length}`);
      fillers.push(filler);
      const { bavail, bsize } = statfsSync(path);
      const size = Math.max(0, bavail * bsize - leaveBytes);
      try {
        writeFileSync(filler, Buffer.alloc(size, 0x78));
      } catch {
        // Full before `size`: that is the point.
      }
      return filler;
    },
    free() {
      for (const filler of fillers.splice(0)) rmSync(filler, { force: true });
    },
    dispose() {
      try {
        execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      } catch {
        // Already unmounted.
      }
      rmSync(path, { recursive: true, force: true });
    },
  };
}
