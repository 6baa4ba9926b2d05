/**
 * @module
 * The file an edit acts on: the agent's path resolved through the confined walk, the file read in that same
 * walk (decoded for an edit's matcher; a write's old bytes go to the diff thread), and how the path is shown to
 * the agent (relative to its workspace root when inside it).
 */
import { relativeInside } from '../../machines/common/confine.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { EditTarget } from './edit-commit.ts';
import { decodeFile, realRoots, resolveAndRead } from './file-io.ts';

/** How a path is shown to an agent: relative to its first workspace root holding it, else absolute. */
export async function displayOf(roots: readonly string[], abs: string): Promise<string> {
  for (const root of await realRoots(roots)) {
    const rel = relativeInside(root, abs);
    if (rel !== undefined && rel !== '.') return rel;
  }
  return abs;
}

/**
 * Resolves and reads `given` for an edit or a whole-file write: a directory is refused, a missing file is
 * refused for an edit and is a new file for a write (whose missing parents are created when it is written).
 */
export async function resolveTarget(
  roots: readonly string[],
  given: string,
  mode: 'edit' | 'write',
  limits: { maxFileBytes: number; inspect?: Parameters<typeof decodeFile>[2] },
  expected?: string,
): Promise<EditTarget> {
  // `dir/` names a directory, existing or not (the walk drops its empty last part: a write made a file `dir`).
  const namesDirectory = /\/\.?$/.test(given);
  // A whole-file write may create its parents (an agent without a shell `mkdir` could never make one): not
  // here, where a streamed write is not yet judged, but when it is written, on the way to this path only.
  // One walk resolves and reads: the file is opened from the directory the walk reached.
  const resolved = namesDirectory
    ? undefined
    : await resolveAndRead(roots, given, limits.maxFileBytes, mode === 'write' ? 'plan' : false);
  if (!resolved || resolved.isDirectory) {
    const what = mode === 'write' ? "Can't write to file: path is a directory" : "Can't edit file: path is a directory";
    throw new RuntimeError(ErrorCode.InvalidMessage, `${what}: ${JSON.stringify(given)}. Give the path of a file.`);
  }
  if (expected !== undefined && resolved.path !== expected) {
    // Judged as one file, found as another: a directory on the way changed since the gate resolved the path.
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `${JSON.stringify(given)} now leads to ${JSON.stringify(resolved.path)}, not to ${JSON.stringify(expected)} ` +
        'as when it was judged (a directory on the way changed); nothing was done. Check the path and call again.',
    );
  }
  const display = await displayOf(roots, resolved.path);
  if (!resolved.file) {
    if (mode === 'edit')
      throw new RuntimeError(
        ErrorCode.NotFound,
        `Can't edit file: path not found: ${JSON.stringify(given)}. ` +
          `Check the path, or create the file with write_file.`,
      );
    return { path: resolved.path, display, file: undefined, given };
  }
  // A whole-file write needs the old text only for its diff, made from the bytes on the diff thread: the
  // old file's decode and hash run there too (an edit needs the text here, for the matcher).
  const inspect = mode === 'write' ? limits.inspect : undefined;
  return { path: resolved.path, display, file: await decodeFile(resolved.file, given, inspect), given };
}
