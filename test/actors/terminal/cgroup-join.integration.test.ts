/**
 * The wrapper a terminal's shell starts under when per-agent limits are on (pty-spawn.ts `cgroupJoin`): a POSIX
 * sh that writes its own pid to each `cgroup.procs` it is given, then becomes the terminal's command line with the
 * same pid and the same arguments. Plain files stand in for the cgroup files here: what is checked is the pid
 * written, the arguments passed on, and that a failed write runs nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cgroupJoin } from '../../../actors/terminal/pty-spawn.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the wrapper over `files`, then `sh -c 'echo $$ "$@"' x <args>`: its pid and the arguments it got. */
function run(files: string[], args: string[]) {
  const [file, ...rest] = cgroupJoin(files);
  return spawnSync(file!, [...rest, 'sh', '-c', 'echo $$ "$@"', 'x', ...args], { encoding: 'utf8' });
}

describe('cgroupJoin: the shell joins every cgroup before it runs', () => {
  it.each([1, 2, 3])('%i file(s): each gets the pid that then runs, and the arguments pass through', (n) => {
    dir = mkdtempSync(join(tmpdir(), 'skein-cgroup-join-'));
    const files = Array.from({ length: n }, (_, i) => join(dir, `procs-${i}`));
    for (const f of files) writeFileSync(f, '');
    const r = run(files, ['a b', '$0', '--']);
    expect(r.status).toBe(0);
    const [pid, ...args] = r.stdout.trim().split(' ');
    for (const f of files) expect(readFileSync(f, 'utf8').trim()).toBe(pid);
    expect(args.join(' ')).toBe('a b $0 --');
  });

  it('a write that fails (no such directory) runs nothing', () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-cgroup-join-'));
    const ok = join(dir, 'procs-0');
    writeFileSync(ok, '');
    const marker = join(dir, 'ran');
    const [file, ...rest] = cgroupJoin([ok, join(dir, 'gone', 'cgroup.procs')]);
    const r = spawnSync(file!, [...rest, 'touch', marker], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
