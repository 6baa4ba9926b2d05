/**
 * The scratch guard's measuring thread opens a directory an agent closed (`chmod 000`) to its owner before listing
 * it, and only one inside the terminal's scratch: the agent can swap any directory on the walk's path for a
 * symlink, and the runtime must not change the mode of what that symlink names.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript (a worker thread's script), no declarations
import { openToOwner } from '../../../actors/terminal/scratch-measure-worker.mjs';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;

describe('opening a closed directory to its owner', () => {
  it('opens one inside the scratch', () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'skein-measure-')));
    const scratch = join(dir, 'scratch');
    mkdirSync(join(scratch, 'tmp', 'closed'), { recursive: true });
    chmodSync(join(scratch, 'tmp', 'closed'), 0o000);
    openToOwner(join(scratch, 'tmp', 'closed'), scratch);
    expect(mode(join(scratch, 'tmp', 'closed'))).toBe(0o700);
  });

  it('leaves what a symlink in its place names, and a directory outside the scratch, as they are', () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'skein-measure-')));
    const scratch = join(dir, 'scratch');
    const outside = join(dir, 'outside');
    mkdirSync(join(scratch, 'tmp'), { recursive: true });
    mkdirSync(join(outside, 'deep'), { recursive: true });
    chmodSync(join(outside, 'deep'), 0o000);
    chmodSync(outside, 0o000);
    // The last component a symlink: not followed.
    symlinkSync(outside, join(scratch, 'tmp', 'swapped'));
    openToOwner(join(scratch, 'tmp', 'swapped'), scratch);
    // A symlink earlier on the path: followed by the open, refused by the real-path check.
    symlinkSync(dir, join(scratch, 'tmp', 'up'));
    openToOwner(join(scratch, 'tmp', 'up', 'outside'), scratch);
    expect(mode(outside)).toBe(0o000);
    chmodSync(outside, 0o700);
    openToOwner(join(scratch, 'tmp', 'up', 'outside', 'deep'), scratch);
    expect(mode(join(outside, 'deep'))).toBe(0o000);
    chmodSync(join(outside, 'deep'), 0o700);
  });
});
