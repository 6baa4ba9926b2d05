/**
 * @module
 * The empty directories left on the host where a sandbox covers a protected workspace path that did not exist
 * (pty-spawn.ts `bwrapArgs`): bwrap makes each mount point through the writable workspace bind, so it stays on the
 * host after the sandbox ends. One registry per process records which open terminals rely on each; the last one
 * to end removes it, only while it is still an empty directory.
 *
 * Never earlier: removing or renaming a mount point from another mount namespace detaches the mounts on it in
 * every namespace, so a placeholder removed while a sandbox still covers it would let that sandbox create the
 * path after all.
 */
import { rmdirSync } from 'node:fs';

/** Placeholder path → the terminals whose sandbox covers it. */
const holders = new Map<string, Set<string>>();

/**
 * Records that `terminalId`'s sandbox covers `paths` that are placeholders: those missing now (bwrap makes them)
 * and those an open sandbox made earlier. Called in the same turn as the mount plan is computed.
 */
export function holdPlaceholders(terminalId: string, paths: readonly string[], missing: (path: string) => boolean) {
  for (const path of paths) {
    const ids = holders.get(path) ?? (missing(path) ? new Set<string>() : undefined);
    if (!ids) continue;
    ids.add(terminalId);
    holders.set(path, ids);
  }
}

/**
 * Called once `terminalId`'s sandbox can no longer act (its shell exited or was killed, or it never started):
 * removes each placeholder no other open terminal covers, unless something was put in it meanwhile (the host
 * persisting a learned rule into `.skein/`, a person's file).
 */
export function releasePlaceholders(terminalId: string): void {
  for (const [path, ids] of holders) {
    if (!ids.delete(terminalId) || ids.size > 0) continue;
    holders.delete(path);
    try {
      rmdirSync(path);
    } catch {
      // Not an empty directory any more (or already gone): not a placeholder to remove.
    }
  }
}
