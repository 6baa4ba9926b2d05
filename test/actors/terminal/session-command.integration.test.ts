/**
 * The command line the shell helper starts a shell with (session-command.ts), run as the helper runs it: in a new
 * session (`detached`) with a fresh PTY's slave on descriptors 0-2, the master read here. What is checked: the
 * slave becomes the session's controlling terminal even for a command that would not take it itself (a plain sh,
 * where bash -i would), the line settings are in place before the command runs, and a launcher's script (the
 * cgroup join) runs in the same process: one pid from the helper's child to the command, no sh in between.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tty from 'node:tty';
import { afterEach, describe, expect, it } from 'vitest';
import { launcher, which } from '../../../actors/terminal/pty-spawn.ts';
import { LINE_SETTINGS, sessionCommand } from '../../../actors/terminal/session-command.ts';

type Native = { open: (cols: number, rows: number) => { master: number; slave: number; pty: string } };
const require = createRequire(import.meta.url);
const native = createRequire(require.resolve('@lydell/node-pty'))(
  `@lydell/node-pty-${process.platform}-${process.arch}/pty.node`,
) as Native;

const SH = which('sh')!;
const STTY = which('stty');

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `argv(slave path)` as the helper does and collects what it writes to the terminal until it exits. */
async function runOnPty(
  argv: (tty: string) => string[],
): Promise<{ output: string; pid: number; code: number | null; argv: string[] }> {
  const opened = native.open(80, 24);
  closeSync(opened.slave);
  const command = argv(opened.pty);
  const fd = openSync(opened.pty, 'r+');
  let child: ChildProcess;
  try {
    child = spawn(command[0]!, command.slice(1), { stdio: [fd, fd, fd], detached: true });
  } finally {
    closeSync(fd);
  }
  const master = new tty.ReadStream(opened.master);
  let output = '';
  master.on('data', (d: Buffer) => {
    output += d.toString('utf8');
  });
  // The master reads EIO once the last holder of the slave is gone and all it wrote was read: the end of the
  // output, however slow the machine (a fixed 100 ms could cut it).
  const drained = new Promise<void>((resolve) => {
    master.once('error', () => resolve());
    master.once('end', () => resolve());
  });
  master.on('error', () => undefined);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  await Promise.race([drained, new Promise((r) => setTimeout(r, 10_000))]);
  master.destroy();
  return { output: output.replace(/\r/g, ''), pid: child.pid!, code, argv: command };
}

describe('sessionCommand: one sh makes the session, its terminal and line settings, then becomes the command', () => {
  it('the slave is the controlling terminal of a plain sh, which would not take one itself', async () => {
    const r = await runOnPty((t) => sessionCommand(SH, t, STTY, SH, ['-c', 'ps -o tty= -p $$; ps -o sid= -p $$']));
    expect(r.code).toBe(0);
    const [ttyName, sid] = r.output
      .trim()
      .split('\n')
      .map((l) => l.trim());
    expect(ttyName).toMatch(/^pts\/\d+$/);
    expect(Number(sid)).toBe(r.pid);
  });

  it.skipIf(!STTY)('the line settings are in place when the command starts', async () => {
    const r = await runOnPty((t) => sessionCommand(SH, t, STTY, SH, ['-c', 'stty -a']));
    expect(r.code).toBe(0);
    for (const flag of LINE_SETTINGS.filter((w) => /^[a-z]+$/.test(w) && !w.startsWith('eol'))) {
      expect(r.output).toMatch(new RegExp(`(^|\\s)${flag}(\\s|$)`));
    }
  });

  it("a launcher's script runs in the same sh: the pid it writes is the helper child's and the command's", async () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-session-'));
    const procs = [join(dir, 'procs-0'), join(dir, 'procs-1')];
    for (const f of procs) writeFileSync(f, '');
    const [file, ...args] = launcher(procs, []);
    const r = await runOnPty((t) =>
      sessionCommand(SH, t, STTY, file!, [...args, SH, '-c', 'echo "$$ $*"', 'x', 'a b', '$1']),
    );
    // One sh: the launcher's script is inside this one's, not a second `sh -c` on its command line.
    expect(r.argv.filter((a) => a === '-c')).toHaveLength(2);
    expect(r.argv.slice(0, 2)).toEqual([SH, '-c']);
    expect(r.code).toBe(0);
    expect(r.output.trim()).toBe(`${r.pid} a b $1`);
    for (const f of procs) expect(readFileSync(f, 'utf8').trim()).toBe(String(r.pid));
  });

  it("a launcher's cgroup write that fails, merged into this sh, runs nothing", async () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-session-'));
    const ok = join(dir, 'procs-0');
    writeFileSync(ok, '');
    const canary = join(dir, 'CANARY-ran');
    const [file, ...args] = launcher([ok, join(dir, 'gone', 'cgroup.procs')], []);
    const r = await runOnPty((t) => sessionCommand(SH, t, STTY, file!, [...args, SH, '-c', `touch ${canary}`]));
    expect(r.code).not.toBe(0);
    expect(() => readFileSync(canary)).toThrow();
  });

  it('a slave that cannot be opened runs nothing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-session-'));
    const marker = join(dir, 'ran');
    const argv = sessionCommand(SH, join(dir, 'no-such-tty'), STTY, SH, ['-c', `touch ${marker}`]);
    const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', detached: true });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(() => readFileSync(marker)).toThrow();
  });
});
