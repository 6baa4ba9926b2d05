/**
 * The bubblewrap arguments and the terminal environment, as data (issue 10: dropping `--unshare-ipc` or
 * `--die-with-parent` went unnoticed; issue 11: the sandbox must hide the host's secrets and keep the
 * workspace's git and skein files read-only). The live counterpart is sandbox-floor.integration.test.ts.
 */
import { agentEnv, GIT_PROTECTIONS, READLINE_PROTECTIONS, terminalEnv } from '../../../actors/terminal/pty-spawn.ts';
import { bwrapArgs, type SandboxHost, scratchDirs } from '../../../actors/terminal/sandbox-args.ts';
import { sandboxFloor } from '../../../infra/terminal/wiring.ts';

const WS = '/home/dev/proj';
const host: SandboxHost = {
  home: '/home/dev',
  homes: ['/home/dev', '/home/other', '/root'],
  exists: (p) =>
    [
      '/home/dev/.config',
      '/home/dev/.ssh',
      '/home/dev/.netrc',
      '/etc/shadow',
      `${WS}/.git`,
      `${WS}/.skein`,
      `${WS}/skein.config.json`,
      `${WS}/.skein/data`,
      '/run',
    ].includes(p),
  isLink: (p) => p === '/var/run',
  isDir: (p) => !['/home/dev/.netrc', '/etc/shadow', `${WS}/skein.config.json`].includes(p),
};
/** The terminal's scratch directory, and the descriptors bwrap reads its kernel settings from (sandbox-sysctls.ts). */
const S = '/data/sandbox/t1';
const INIT = {
  sysctls: [
    { fd: 4, path: '/proc/sys/kernel/shm_rmid_forced' },
    { fd: 5, path: '/proc/sys/user/max_inotify_instances' },
  ],
};
const args = (options?: { network?: boolean; hide?: string[] }) =>
  bwrapArgs(
    { workspace: WS, cwd: WS, scratch: S, ...(options ? { sandboxOptions: options } : {}) },
    '/tmp/rc',
    INIT,
    host,
  );

/** The argument list as mount steps: `--tmpfs /run` → "--tmpfs /run", `--bind a a` → "--bind a". */
function steps(list: string[]): string[] {
  const out: string[] = [];
  const arity: Record<string, number> = { '--ro-bind': 2, '--bind': 2, '--tmpfs': 1, '--remount-ro': 1, '--dev': 1 };
  arity['--proc'] = 1;
  arity['--chdir'] = 1;
  arity['--cap-drop'] = 1;
  arity['--file'] = 2;
  arity['--uid'] = 1;
  arity['--gid'] = 1;
  for (let i = 0; i < list.length; i++) {
    const a = list[i]!;
    if (a === '--') return [...out, a];
    const n = arity[a] ?? 0;
    out.push(n === 2 ? `${a} ${list[i + 1]} ${list[i + 2]}` : n === 1 ? `${a} ${list[i + 1]}` : a);
    i += n;
  }
  return out;
}

describe('bwrapArgs', () => {
  it('isolates IPC, PIDs, network, UTS, drops capabilities and dies with its parent', () => {
    const s = steps(args());
    const flags = ['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--die-with-parent'];
    for (const flag of [...flags, '--disable-userns']) {
      expect(s).toContain(flag);
    }
    expect(s).toContain('--cap-drop ALL');
    expect(s).toContain('--as-pid-1');
    expect(s.at(-1)).toBe('--');
    expect(s.some((a) => a.startsWith('--cap-add'))).toBe(false);
    expect(s).toContain(`--chdir ${WS}`);
  });

  it('loads the seccomp filter from the descriptor it is given, after every mount and before the command', () => {
    const list = bwrapArgs({ workspace: WS, cwd: WS, scratch: S }, '/tmp/rc', { ...INIT, seccomp: 9 }, host);
    const at = list.indexOf('--seccomp');
    expect(list[at + 1]).toBe('9');
    expect(at).toBeGreaterThan(list.lastIndexOf('--bind'));
    expect(at).toBeLessThan(list.indexOf('--'));
    expect(args()).not.toContain('--seccomp');
  });

  it('is exactly this mount plan (order matters: hide, then bind the workspace, then protect)', () => {
    expect(steps(args({ hide: ['/home/dev/proj/.skein/data', '/nonexistent'] }))).toEqual([
      '--ro-bind / /',
      '--dev /dev',
      `--bind ${S}/shm /dev/shm`,
      '--remount-ro /dev',
      '--proc /proc',
      '--file 4 /proc/sys/kernel/shm_rmid_forced',
      '--file 5 /proc/sys/user/max_inotify_instances',
      '--ro-bind /proc/sys /proc/sys',
      `--bind ${S}/tmp /tmp`,
      '--ro-bind /tmp/rc /tmp/rc',
      '--tmpfs /run',
      '--remount-ro /run',
      '--tmpfs /home/other',
      '--remount-ro /home/other',
      '--tmpfs /root',
      '--remount-ro /root',
      `--bind ${S}/home/.config /home/dev/.config`,
      `--bind ${S}/home/.ssh /home/dev/.ssh`,
      '--ro-bind /dev/null /home/dev/.netrc',
      '--ro-bind /dev/null /etc/shadow',
      `--bind ${WS} ${WS}`,
      `--ro-bind ${WS}/.git ${WS}/.git`,
      `--ro-bind ${WS}/.skein ${WS}/.skein`,
      `--ro-bind ${WS}/skein.config.json ${WS}/skein.config.json`,
      `--tmpfs ${WS}/.gitmodules`,
      `--remount-ro ${WS}/.gitmodules`,
      `--tmpfs ${WS}/.skein/data`,
      `--remount-ro ${WS}/.skein/data`,
      '--unshare-user',
      '--disable-userns',
      '--unshare-pid',
      '--as-pid-1',
      '--unshare-net',
      '--unshare-ipc',
      '--unshare-uts',
      '--cap-drop ALL',
      '--die-with-parent',
      `--chdir ${WS}`,
      '--',
    ]);
  });

  it('writes nowhere but the workspace and its scratch directory: no writable tmpfs', () => {
    // A tmpfs's pages and inodes stay charged to the agent's memory cgroup with no process holding them: the OOM
    // killer then picks another agent's process. Every tmpfs is read-only; what is writable is on disk.
    const list = args({ hide: ['/home/dev/proj/.skein/data'] });
    const s = steps(list);
    const tmpfs = s.filter((a) => a.startsWith('--tmpfs ')).map((a) => a.slice('--tmpfs '.length));
    for (const path of tmpfs) expect(s, path).toContain(`--remount-ro ${path}`);
    expect(s).toContain('--remount-ro /dev');
    const writable = s.filter((a) => a.startsWith('--bind ')).map((a) => a.split(' ')[1]!);
    expect(writable.filter((src) => src !== WS && !src.startsWith(`${S}/`))).toEqual([]);
    expect(scratchDirs(S, WS, host)).toEqual({
      '/tmp': `${S}/tmp`,
      '/dev/shm': `${S}/shm`,
      '/home/dev/.config': `${S}/home/.config`,
      '/home/dev/.ssh': `${S}/home/.ssh`,
    });
  });

  it('writes the kernel settings into the new /proc, then makes /proc/sys read-only, before anything runs', () => {
    const s = steps(args());
    const proc = s.indexOf('--proc /proc');
    expect(s.slice(proc + 1, proc + 4)).toEqual([
      '--file 4 /proc/sys/kernel/shm_rmid_forced',
      '--file 5 /proc/sys/user/max_inotify_instances',
      '--ro-bind /proc/sys /proc/sys',
    ]);
    // Nothing between bwrap and the command: the command line follows `--` as it is.
    expect(args().at(-1)).toBe('--');
  });

  it("gives the shell the runtime's uid and gid when it starts below its agent's user namespace", () => {
    const ids = { uid: 1000, gid: 1001 };
    const s = steps(bwrapArgs({ workspace: WS, cwd: WS, scratch: S, ids }, '/tmp/rc', INIT, host));
    const at = s.indexOf('--disable-userns');
    expect(s.slice(at, at + 5)).toEqual([
      '--disable-userns',
      '--unshare-pid',
      '--as-pid-1',
      '--uid 1000',
      '--gid 1001',
    ]);
    expect(steps(args()).some((a) => a.startsWith('--uid') || a.startsWith('--gid'))).toBe(false);
  });

  it('covers a protected path that does not exist with an empty read-only directory, so none can be made there', () => {
    // The security review: `.skein` missing at open, `mkdir -p .skein && printf … > .skein/policy.json` widened
    // the policy. Any of the four names may be missing; each must exist read-only inside.
    const bare: SandboxHost = {
      home: '/home/dev',
      homes: [],
      exists: () => false,
      isLink: () => false,
      isDir: () => true,
    };
    const s = steps(bwrapArgs({ workspace: WS, cwd: WS, scratch: S }, '/tmp/rc', INIT, bare));
    const after = s.slice(s.indexOf(`--bind ${WS} ${WS}`) + 1, s.indexOf('--unshare-user'));
    expect(after).toEqual(
      ['.git', '.skein', 'skein.config.json', '.gitmodules'].flatMap((n) => [
        `--tmpfs ${WS}/${n}`,
        `--remount-ro ${WS}/${n}`,
      ]),
    );
  });

  it('refuses a protected path that is a symlink, which a command could replace (even a dangling one)', () => {
    const linked: SandboxHost = { ...host, isLink: (p) => p === `${WS}/.git` || p === '/var/run' };
    expect(() => bwrapArgs({ workspace: WS, cwd: WS, scratch: S }, '/tmp/rc', INIT, linked)).toThrow(
      expect.objectContaining({
        code: 'invalid_state',
        message: expect.stringContaining(`'${WS}/.git' is a symbolic`),
      }),
    );
  });

  it('keeps the network only when the operator allows it', () => {
    expect(args({ network: true })).not.toContain('--unshare-net');
    expect(args({ network: false })).toContain('--unshare-net');
  });

  it('never hides a home that holds the workspace', () => {
    const s = steps(
      bwrapArgs({ workspace: '/home/other/ws', cwd: '/home/other/ws', scratch: S }, '/tmp/rc', INIT, host),
    );
    expect(s).not.toContain('--tmpfs /home/other');
    expect(s).toContain('--bind /home/other/ws /home/other/ws');
  });
});

describe('terminal environment', () => {
  it('starts readline with no init file, whatever env the agent gives (no HOME/.inputrc key bindings)', () => {
    const env = terminalEnv({ terminalId: 't1', agentId: 'a1', shellPath: '/bin/bash' });
    expect(env['INPUTRC']).toBe('/dev/null');
    expect(agentEnv({ env: { INPUTRC: './keys', HOME: '/ws', LANG: 'C' } })).toEqual({ HOME: '/ws', LANG: 'C' });
    expect(READLINE_PROTECTIONS).toEqual({ INPUTRC: '/dev/null' });
  });

  it('runs git with bare-repository discovery off, no fsmonitor and no hooks, whatever env the agent gives', () => {
    const env = terminalEnv({ terminalId: 't1', agentId: 'a1', shellPath: '/bin/bash' });
    expect(env).toMatchObject(GIT_PROTECTIONS);
    // The agent's env reaches the shell over the terminal's, never over the protections.
    const given = { GIT_CONFIG_COUNT: '0', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'touch /tmp/x' };
    expect(agentEnv({ env: { ...given, PAGER: 'less' } })).toEqual({ PAGER: 'less' });
    expect(GIT_PROTECTIONS).toEqual({
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_0: 'safe.bareRepository',
      GIT_CONFIG_VALUE_0: 'explicit',
      GIT_CONFIG_KEY_1: 'core.fsmonitor',
      GIT_CONFIG_VALUE_1: 'false',
      GIT_CONFIG_KEY_2: 'core.hooksPath',
      GIT_CONFIG_VALUE_2: '/dev/null',
    });
  });
});

describe('sandboxFloor (the operator decides, the agent cannot lower it)', () => {
  const on = { sandbox: true, sandboxOffFor: ['trusted'] };
  it('refuses sandbox: false from an agent, naming the config keys', () => {
    expect(() => sandboxFloor(on, 'a1', false)).toThrow(/domains\.terminal\.sandbox.*sandboxOffFor/);
  });
  it('sandboxes by default and honours an explicit true', () => {
    expect(sandboxFloor(on, 'a1', undefined)).toBe(true);
    expect(sandboxFloor(on, 'a1', true)).toBe(true);
    expect(sandboxFloor({ sandbox: false, sandboxOffFor: [] }, 'a1', true)).toBe(true);
  });
  it('lets the operator turn it off globally or for one agent', () => {
    expect(sandboxFloor({ sandbox: false, sandboxOffFor: [] }, 'a1', undefined)).toBe(false);
    expect(sandboxFloor({ sandbox: false, sandboxOffFor: [] }, 'a1', false)).toBe(false);
    expect(sandboxFloor(on, 'trusted', undefined)).toBe(false);
    expect(sandboxFloor(on, 'trusted', false)).toBe(false);
  });
});

describe('bwrapArgs at its edges', () => {
  it('keeps a workspace under another home or a hidden entry visible, and hides only what it can', () => {
    const ws = '/home/dev/.config/proj';
    const edgeHost: SandboxHost = {
      home: '/home/dev',
      homes: ['/home/dev', '/home/dev/.config', '/home/other'],
      exists: (p) => ['/home/dev/.config', '/home/dev/.ssh', '/etc/hosts', '/srv/data', 'rel/x'].includes(p),
      isLink: () => false,
      isDir: (p) => !['/etc/hosts'].includes(p),
    };
    const s = steps(
      bwrapArgs(
        {
          workspace: ws,
          cwd: ws,
          scratch: S,
          sandboxOptions: { network: true, hide: ['rel/x', '/etc/hosts', '/srv/data', '/gone'] },
        },
        '/tmp/rc',
        INIT,
        edgeHost,
      ),
    );
    // The home that holds the workspace, and the hidden entry that holds it, are not covered.
    expect(s.join('\n')).not.toMatch(/ \/home\/dev\/\.config$/m);
    expect(s).toContain('--tmpfs /home/other');
    expect(s).toContain(`--bind ${S}/home/.ssh /home/dev/.ssh`);
    // Operator-hidden paths: a directory becomes an empty read-only tmpfs, a file /dev/null; relative or
    // missing paths are skipped, never bound.
    expect(s).toContain('--ro-bind /dev/null /etc/hosts');
    expect(s).toContain('--tmpfs /srv/data');
    expect(s).toContain('--remount-ro /srv/data');
    expect(s.join(' ')).not.toMatch(/rel\/x|\/gone/);
    // network allowed by the operator: no --unshare-net, the rest of the isolation stays.
    expect(s).not.toContain('--unshare-net');
    expect(s).toContain('--unshare-ipc');
    // /var/run that is a real directory (not the usual symlink to /run) is emptied too.
    expect(s).toContain('--tmpfs /run');
    expect(s).toContain('--tmpfs /var/run');
  });
});

describe('bwrapArgs and the homes', () => {
  it("leaves the user's own home and non-directories alone, and empties every other home", () => {
    const homesHost: SandboxHost = {
      home: '/home/dev',
      homes: ['/home/dev', '/home/other', '/home/notes.txt', '/root'],
      exists: () => false,
      isLink: () => false,
      isDir: (p) => p !== '/home/notes.txt',
    };
    const s = steps(bwrapArgs({ workspace: '/srv/ws', cwd: '/srv/ws', scratch: S }, '/tmp/rc', INIT, homesHost));
    expect(s.filter((a) => a.startsWith('--tmpfs /home') || a === '--tmpfs /root')).toEqual([
      '--tmpfs /home/other',
      '--tmpfs /root',
    ]);
  });
});
