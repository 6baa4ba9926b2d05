/**
 * The sandbox's kernel settings written by a real bubblewrap (sandbox-sysctls.ts, sandbox-args.ts), from the files
 * and descriptors the launcher opens (pty-spawn.ts), always in new user and IPC namespaces so that no write can
 * reach the host's own limits: the command starts with them set, no capability and a read-only /proc/sys; a
 * setting bwrap cannot write runs nothing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LaunchFile, launcher, sandboxFiles, which } from '../../../actors/terminal/pty-spawn.ts';
import { bwrapArgs, realSandboxHost, type SandboxFds, scratchDirs } from '../../../actors/terminal/sandbox-args.ts';
import { makeScratch } from '../../../actors/terminal/sandbox-scratch.ts';
import { NR } from '../../support/syscalls.ts';

const bwrap = which('bwrap');
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Who runs bwrap: this process's user, and, when that is root, also an unprivileged one (`nobody`, by `setpriv`
 * after the launcher opened the files). bwrap works differently for the two: for an unprivileged user it needs
 * a second user namespace to give the shell that user's uid, which a runtime run as root never shows (two
 * designs of these settings broke every sandbox of a runtime not run as root, and no test run as root saw it).
 */
const RUNNERS = process.getuid?.() === 0 && which('setpriv') ? ['this user', 'nobody'] : ['this user'];
const NOBODY = 65_534;

/** A sandbox as a terminal gets it (the launcher, then bwrap with its mount plan) running `sh -c command`. */
function inSandbox(
  command: string | ((rcDir: string) => string),
  options: { as?: string; plan?: (rcDir: string) => { files: LaunchFile[]; fds: SandboxFds } } = {},
) {
  dir = mkdtempSync(join(tmpdir(), 'skein-sysctls-'));
  const [ws, rcDir, scratch] = ['ws', 'rc', 'scratch'].map((name) => join(dir, name)) as [string, string, string];
  mkdirSync(ws);
  mkdirSync(rcDir);
  // nobody's home is not root's: the hidden home directories of this process's HOME stay out of it.
  const host = { ...realSandboxHost(), ...(options.as === 'nobody' ? { home: '/nonexistent' } : {}) };
  makeScratch('t1', scratch, scratchDirs(scratch, ws, host));
  const limits = { inotifyInstances: 3, inotifyWatches: 2048 };
  const { files, fds } = options.plan?.(rcDir) ?? sandboxFiles(rcDir, limits, undefined);
  let drop: string[] = [];
  if (options.as === 'nobody') {
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
    chmodSync(dir, 0o755);
    drop = [which('setpriv')!, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--'];
  }
  const argv = [
    ...launcher([], files),
    ...drop,
    bwrap!,
    ...bwrapArgs({ workspace: ws, cwd: ws, scratch }, rcDir, fds, host),
  ];
  const script = typeof command === 'string' ? command : command(rcDir);
  return spawnSync(argv[0]!, [...argv.slice(1), 'sh', '-c', script], { encoding: 'utf8' });
}

describe.skipIf(!bwrap)('the sandbox kernel settings, written by bubblewrap', () => {
  it.each(RUNNERS)(
    'run by %s: are set before the command runs, which has no capability and cannot raise them',
    (as) => {
      // The shell's own user namespace is below the one bwrap wrote the inotify maxima into: what it shows is
      // its own (no maximum), what holds it is counted, as in the perl loop (3 instances, then EMFILE).
      const count = `my $n = 0; while ($n < 50) { last if syscall(${NR.init}, 0) < 0; $n++ } print "$n\\n"`;
      const r = inSandbox(
        [
          'cat /proc/sys/kernel/shm_rmid_forced',
          `perl -e '${count}'`,
          'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status',
          'ls /proc/self/fd | tr "\\n" " "; echo',
          'echo 999 > /proc/sys/user/max_inotify_instances 2>/dev/null || echo refused',
          'echo 0 > /proc/sys/kernel/shm_rmid_forced 2>/dev/null || echo refused',
          'echo 1 > /proc/sys/kernel/printk_ratelimit 2>/dev/null || echo refused',
          'unshare -U true 2>/dev/null || echo refused',
          `perl -e 'print syscall(${NR.unshare}, 0x10000000) < 0 ? "refused: $!\\n" : "made one\\n"'`,
          'id -u',
        ].join('; '),
        { as },
      );
      expect(r.status, r.stderr).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines.slice(0, 2)).toEqual(['1', '3']);
      for (const line of lines.slice(2, 7)) expect(line).toMatch(/:\s+0000000000000000$/);
      // The descriptors bwrap read from (4-6) are closed (3 is `ls`'s own directory).
      const open = lines[7]!.trim().split(' ').map(Number);
      expect(open).toEqual(expect.arrayContaining([0, 1, 2]));
      expect(open.filter((fd) => fd >= 4 && fd <= 9)).toEqual([]);
      // Read-only /proc/sys (a host-wide sysctl as much as the sandbox's own), and no user namespace inside.
      expect(lines.slice(8, 12)).toEqual(['refused', 'refused', 'refused', 'refused']);
      expect(lines[12]).toMatch(/^refused: (No space left on device|Operation not permitted)/);
      // The shell has the uid of who ran bwrap.
      expect(lines[13]).toBe(String(as === 'nobody' ? NOBODY : process.getuid?.()));
    },
  );

  it('a setting bubblewrap cannot write runs nothing, and bubblewrap says which', () => {
    const marker = 'the command ran';
    const plan = (rcDir: string) => {
      const path = join(rcDir, 'value');
      writeFileSync(path, '1\n');
      return { files: [{ fd: 4, path }], fds: { sysctls: [{ fd: 4, path: '/proc/sys/kernel/no_such_setting' }] } };
    };
    const r = inSandbox(`echo '${marker}'`, { plan });
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain(marker);
    expect(r.stderr).toContain('/proc/sys/kernel/no_such_setting');
  });

  it('holds one file per setting in the rc directory, which the sandbox reads but cannot change', () => {
    const r = inSandbox(
      (rc) => `cat ${rc}/sysctl-max_inotify_watches; (echo 5 > ${rc}/sysctl-max_inotify_watches) 2>&-`,
    );
    expect(r.status, r.stderr).not.toBe(0);
    expect(r.stdout).toBe('2048\n');
    expect(readFileSync(join(dir, 'rc', 'sysctl-max_inotify_watches'), 'utf8')).toBe('2048\n');
  });
});
