/**
 * The wrapper a terminal's command line starts under when per-agent limits or the sandbox are on (pty-spawn.ts
 * `launcher`): a POSIX sh that writes its own pid to each `cgroup.procs` it is given, opens the files bwrap reads
 * (its seccomp filter, the sandbox's kernel settings) on their descriptors, then becomes the command line with
 * the same pid and the same arguments. Plain files stand in for the cgroup files here: what is checked is the
 * pid written, the descriptors the command holds, the arguments passed on, and that a failed step runs nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { launcher } from '../../../actors/terminal/pty-spawn.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `n` empty stand-ins for cgroup.procs files. */
function procsFiles(n: number): string[] {
  dir = mkdtempSync(join(tmpdir(), 'skein-launcher-'));
  const files = Array.from({ length: n }, (_, i) => join(dir, `procs-${i}`));
  for (const f of files) writeFileSync(f, '');
  return files;
}

/** Runs the launcher, then `sh -c <script> x <args>`. */
function run(procs: string[], files: Array<{ fd: number; path: string }>, script: string, args: string[] = []) {
  const [file, ...rest] = launcher(procs, files);
  return spawnSync(file!, [...rest, 'sh', '-c', script, 'x', ...args], { encoding: 'utf8' });
}

describe('launcher: the command line joins every cgroup and holds its descriptors before it runs', () => {
  it.each([1, 2, 3])('%i cgroup file(s): each gets the pid that then runs, and the arguments pass through', (n) => {
    const procs = procsFiles(n);
    const r = run(procs, [], 'echo $$ "$@"', ['a b', '$0', '--']);
    expect(r.status, r.stderr).toBe(0);
    const [pid, ...args] = r.stdout.trim().split(' ');
    for (const f of procs) expect(readFileSync(f, 'utf8').trim()).toBe(pid);
    expect(args.join(' ')).toBe('a b $0 --');
  });

  it('opens each file on its descriptor, with or without cgroups, and the arguments still pass through', () => {
    const procs = procsFiles(2);
    const files = [4, 5, 9].map((fd) => ({ fd, path: join(dir, `value-${fd}`) }));
    for (const { fd, path } of files) writeFileSync(path, `value of ${fd}\n`);
    for (const joined of [procs, []]) {
      const r = run(joined, files, 'cat <&4; cat <&5; cat <&9; echo "$@"', ['$1', 'b c']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe('value of 4\nvalue of 5\nvalue of 9\n$1 b c\n');
    }
  });

  it('a cgroup write that fails (no such directory) runs nothing', () => {
    const [ok] = procsFiles(1);
    const marker = join(dir, 'ran');
    const r = run([ok!, join(dir, 'gone', 'cgroup.procs')], [], `touch ${marker}`);
    expect(r.status).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
  });

  it('a file that cannot be opened runs nothing', () => {
    const procs = procsFiles(1);
    const marker = join(dir, 'ran');
    const r = run(procs, [{ fd: 4, path: join(dir, 'missing') }], `touch ${marker}`);
    expect(r.status).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
