/**
 * The sandbox from the inside, with real bubblewrap and real PTYs (issue 10's "assert the sandbox from the
 * inside", issue 11 holes 10, 12 and 13): IPC is separate, the shell dies with its parent, host sockets
 * under /run, other homes, ~/.config, /etc/shadow and the data dir are hidden, the workspace's .git,
 * .skein and skein.config.json are read-only, there is no network, and a planted bare repository or
 * fsmonitor never runs under `git status`.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { which } from '../../../actors/terminal/pty-spawn.ts';
import { bwrapArgs, realSandboxHost, scratchDirs } from '../../../actors/terminal/sandbox-args.ts';
import { makeScratch } from '../../../actors/terminal/sandbox-scratch.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

const A = 'a1';

describe('sandbox floor, live', () => {
  let h: ReturnType<typeof terminalHarness>;
  let secretDir: string;
  let terminalId: string;
  let server: Server;
  let port = 0;
  const run = async (command: string) => h.manager.exec(A, { terminalId, command, timeoutMs: 10_000 });

  beforeAll(async () => {
    server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    secretDir = mkdtempSync(join(tmpdir(), 'skein-data-'));
    writeFileSync(join(secretDir, 'events.jsonl'), 'SECRET-EVENTS\n');
    h = terminalHarness({ closeGraceMs: 300, sandbox: true, sandboxHide: [secretDir] });
    execFileSync('git', ['init', '-q', h.workspace]);
    mkdirSync(join(h.workspace, '.git', 'hooks'), { recursive: true });
    mkdirSync(join(h.workspace, '.skein'), { recursive: true });
    writeFileSync(join(h.workspace, '.skein', 'policy.json'), '{"default":"deny"}');
    writeFileSync(join(h.workspace, 'skein.config.json'), '{}');
    const o = await h.open(A);
    expect(o.sandbox).toBe(true);
    terminalId = o.terminalId;
  });
  afterAll(async () => {
    await h?.dispose();
    rmSync(secretDir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('has its own IPC namespace', async () => {
    const r = await run('readlink /proc/self/ns/ipc');
    expect(r.exitCode).toBe(0);
    expect(r.output.trim()).toMatch(/^ipc:\[\d+\]$/);
    expect(r.output.trim()).not.toBe(readlinkSync('/proc/self/ns/ipc'));
  });

  it('hides host daemons under /run and /var/run', async () => {
    expect(readdirSync('/run').length).toBeGreaterThan(0); // the control: the host's /run has entries
    const r = await run('ls -A /run /var/run | grep -v "^/\\|^$" | wc -l');
    expect(r.output.trim()).toBe('0');
  });

  it('cannot read /etc/shadow, ~/.config or other homes', async () => {
    expect(readFileSync('/etc/shadow', 'utf8')).toContain('root:'); // the control: the host file has entries
    const shadow = await run('cat /etc/shadow');
    expect(shadow.output).not.toContain('root:');
    const r = await run('ls -A ~/.config 2>/dev/null | wc -l; cat /home/*/* /home/*/.* 2>/dev/null | wc -c');
    expect(r.output.trim().split('\n')).toEqual(['0', '0']);
  });

  it('never sees the data dir', async () => {
    const r = await run(`cat ${secretDir}/events.jsonl; ls -A ${secretDir} | wc -l`);
    expect(r.output).not.toContain('SECRET-EVENTS');
    expect(r.output.trim().split('\n').at(-1)).toBe('0');
  });

  it.each([
    ['a git hook', 'echo "touch /tmp/pwned" > .git/hooks/post-checkout', '.git/hooks/post-checkout'],
    ['git config', 'git config core.fsmonitor "touch /tmp/pwned"', null],
    ['the project policy', 'echo "{\\"default\\":\\"allow\\"}" > .skein/policy.json', null],
    ['a new .skein file', 'echo {} > .skein/config.json', '.skein/config.json'],
    ['skein.config.json', 'echo "{\\"x\\":1}" > skein.config.json', null],
    ['removing .git', 'rm -rf .git', null],
  ])('cannot persist through %s', async (_what, command, created) => {
    const r = await run(command);
    expect(r.exitCode).not.toBe(0);
    expect(r.output).toMatch(/Read-only file system|could not lock|Permission denied/);
    if (created) expect(existsSync(join(h.workspace, created))).toBe(false);
    expect(readFileSync(join(h.workspace, '.skein', 'policy.json'), 'utf8')).toBe('{"default":"deny"}');
    expect(readFileSync(join(h.workspace, 'skein.config.json'), 'utf8')).toBe('{}');
    expect(readFileSync(join(h.workspace, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
  });

  it('has no network', async () => {
    const r = await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`);
    expect(r.exitCode).not.toBe(0);
    expect(r.output).not.toContain('hello');
  });

  it('never runs a planted bare repository fsmonitor under git status (hole 13)', async () => {
    const canary = join(h.workspace, 'pwned-bare');
    const plant = [
      'mkdir -p evil/objects evil/refs',
      'echo "ref: refs/heads/main" > evil/HEAD',
      `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n' > evil/config`,
      `printf '\\tfsmonitor = "touch ${canary}"\\n' >> evil/config`,
    ].join(' && ');
    expect((await run(plant)).exitCode).toBe(0);
    const status = await run('cd evil && git status; cd ..');
    expect(status.output).toMatch(/safe\.bareRepository/);
    expect(existsSync(canary)).toBe(false);
  });

  it('kills the shell when its parent dies (--die-with-parent)', async () => {
    const bwrap = which('bwrap')!;
    const mark = `${4000 + Math.floor(Math.random() * 1000)}.${process.pid}`;
    const ws = mkdtempSync(join(tmpdir(), 'skein-dwp-'));
    const scratch = join(ws, '.scratch');
    makeScratch('dwp', scratch, scratchDirs(scratch, ws, realSandboxHost()));
    const args = bwrapArgs({ workspace: ws, cwd: ws, scratch }, ws, { sysctls: [] });
    const quoted = [bwrap, ...args, 'sleep', mark].map((a) => `'${a}'`).join(' ');
    // A parent shell runs bwrap in the background; killing the parent must take the sandbox down.
    const parent = spawn('sh', ['-c', `${quoted} & wait`], { stdio: 'ignore' });
    const sleeping = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .some((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8') === `sleep\0${mark}\0`;
          } catch {
            return false;
          }
        });
    try {
      for (let i = 0; i < 100 && !sleeping(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(sleeping()).toBe(true);
      process.kill(parent.pid!, 'SIGKILL');
      for (let i = 0; i < 100 && sleeping(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(sleeping()).toBe(false);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
