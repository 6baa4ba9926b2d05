/**
 * The sandbox's init script run by a real sh inside bubblewrap (sandbox-init.ts), always in new user and IPC
 * namespaces so that no write can reach the host's own limits: with the capabilities bwrap gives it, it sets the
 * limits and becomes the command with none left; without them, it runs nothing and says why.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { which } from '../../../actors/terminal/pty-spawn.ts';
import { INIT_CAPABILITIES, INIT_FAILED, initScript } from '../../../machines/terminal/sandbox-init.ts';

const bwrap = which('bwrap');
const programs = { setpriv: which('setpriv') ?? '', mount: which('mount') ?? '' };
const limits = { inotifyInstances: 3, inotifyWatches: 2048 };

/** bwrap (new user, IPC and PID namespaces) runs the init, which runs `command`. */
function inSandbox(capabilities: readonly string[], command: string) {
  const caps = capabilities.flatMap((c) => ['--cap-add', c]);
  const args = ['--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--unshare-user', '--unshare-ipc'];
  args.push('--unshare-pid', '--cap-drop', 'ALL', ...caps, '--', 'sh', '-c', initScript(limits, programs));
  return spawnSync(bwrap!, [...args, 'init', 'sh', '-c', command], { encoding: 'utf8' });
}

describe.skipIf(!bwrap || !programs.setpriv || !programs.mount)('the sandbox init in bubblewrap', () => {
  it('sets the limits, then the command runs with no capability and cannot raise them', () => {
    const r = inSandbox(
      INIT_CAPABILITIES,
      [
        'cat /proc/sys/kernel/shm_rmid_forced /proc/sys/user/max_inotify_instances /proc/sys/user/max_inotify_watches',
        'grep -E "^Cap(Eff|Prm|Bnd|Amb)" /proc/self/status',
        'echo 999 > /proc/sys/user/max_inotify_instances 2>/dev/null || echo refused',
        'echo 0 > /proc/sys/kernel/shm_rmid_forced 2>/dev/null || echo refused',
        'echo 1 > /proc/sys/kernel/sysrq 2>/dev/null || echo refused',
        'unshare -U true 2>/dev/null || echo refused',
      ].join('; '),
    );
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual(['1', '3', '2048']);
    for (const line of lines.slice(3, 7)) expect(line).toMatch(/:\s+0000000000000000$/);
    // Read-only /proc/sys (a host-wide sysctl as much as the sandbox's own), and no user namespace inside.
    expect(lines.slice(7)).toEqual(['refused', 'refused', 'refused', 'refused']);
  });

  it('without the capabilities to set them, runs nothing and says why', () => {
    const r = inSandbox([], 'echo ran');
    expect(r.status).toBe(126);
    expect(r.stderr).toContain(INIT_FAILED);
    expect(r.stdout).not.toContain('ran');
  });
});
