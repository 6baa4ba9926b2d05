/**
 * Stopping `skein up` the way a person does: Ctrl-C in its terminal (SIGINT to the whole foreground process
 * group) or a supervisor that signals the group (`timeout` sends SIGTERM to it). Only skein may act on it: it
 * drains (every open terminal closed, its `terminal.closed` appended) and stops its own broker last. Before,
 * the private nats-server sat in skein's group and died of the same signal at the start of the drain: the
 * drain's appends failed, the log kept the terminals open, and skein logged an error and restarted the broker.
 * A hangup (the window running skein closed, an SSH session dropped) drains the same; before, SIGHUP's default
 * action ended skein on the spot. So did Ctrl-C while skein started, its broker left running.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty } from '@lydell/node-pty';
import { isAlive } from '../../infra/transport/nats-server.ts';
import { cleanEnv, runCli, SKEIN_BIN, startCli, type LongRunning } from '../support/cli.ts';

/** Pids of live nats-server processes whose command line names `storeOf`. */
function brokersOf(storeOf: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes('nats-server') && cmd.includes(storeOf)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

type Run = { dir: string; data: string; workspace: string; up?: LongRunning };
let run: Run | undefined;

/** A temp dir holding one `skein up`'s data dir and its empty workspace; removed after the test. */
function newRun(prefix: string): Run {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  run = { dir, data: join(dir, 'data'), workspace };
  return run;
}

/** `skein up --<mode>` leading a process group of its own, as a command started from a shell does. */
function upInOwnGroup(r: Run, mode: 'private' | 'embedded'): LongRunning {
  r.up = startCli(['up', `--${mode}`, '--data', r.data, '--workspace', r.workspace], {
    ownGroup: true,
    env: cleanEnv(),
  });
  return r.up;
}

afterEach(() => {
  if (!run) return;
  const { dir, up } = run;
  run = undefined;
  if (up?.child.pid && up.child.exitCode === null) process.kill(-up.child.pid, 'SIGKILL');
  for (const broker of brokersOf(dir)) process.kill(broker, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Two terminals opened through the `skein up` serving `data`; returns their ids. */
async function openTwo(data: string): Promise<string[]> {
  const opened: string[] = [];
  for (let i = 0; i < 2; i++) {
    const r = await runCli(['call', 'terminal.open', '{}', '--data', data]);
    expect(r.code, r.stderr).toBe(0);
    opened.push((JSON.parse(r.stdout) as { terminalId: string }).terminalId);
  }
  return opened;
}

/** Every opened terminal's `terminal.closed` is in the log. */
async function expectClosedInLog(data: string, opened: string[]): Promise<void> {
  const replayed = await runCli(['replay', '--data', data]);
  expect(replayed.code, replayed.stderr).toBe(0);
  for (const terminalId of opened) expect(replayed.stdout).toMatch(new RegExp(`terminal\\.closed ${terminalId}`));
}

describe.each([
  ['private', 'SIGINT'],
  ['private', 'SIGTERM'],
  ['embedded', 'SIGINT'],
] as const)('skein up --%s, %s to its process group', (mode, signal) => {
  it('drains into the log: every open terminal is closed there, and no broker is restarted or left', async () => {
    const r = newRun('skein-stop-');
    const { data } = r;
    const up = upInOwnGroup(r, mode);
    await up.waitFor(new RegExp(`mode ${mode}`));
    const opened = await openTwo(data);
    if (mode === 'private') expect(brokersOf(data)).toHaveLength(1);

    process.kill(-up.child.pid!, signal);
    expect(await up.exited).toBe(0);
    expect(up.stderr() + up.stdout()).not.toMatch(/died; restarting|unreachable|not appended/);
    expect(brokersOf(data)).toEqual([]);

    await expectClosedInLog(data, opened);
  });
});

describe('skein up --private in a terminal that hangs up', () => {
  it('drains into the log as for SIGTERM, and leaves no broker', async () => {
    const { data, workspace } = newRun('skein-hup-');
    const pty = spawnPty(process.execPath, [SKEIN_BIN, 'up', '--private', '--data', data, '--workspace', workspace], {
      cols: 120,
      rows: 40,
      env: cleanEnv() as Record<string, string>,
    });
    let out = '';
    pty.onData((d) => (out += d));
    const pid = pty.pid;
    try {
      await vi.waitFor(() => expect(out).toMatch(/mode private/), { timeout: 60_000, interval: 50 });
      const opened = await openTwo(data);
      // Closing the master is the hangup: the kernel sends SIGHUP, and writes to the terminal fail from then on.
      // (UnixTerminal's destroy() closes it; IPty's typings only offer kill(), a signal without the hangup.)
      (pty as typeof pty & { destroy(): void }).destroy();
      await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 30_000, interval: 50 });
      expect(brokersOf(data)).toEqual([]);
      await expectClosedInLog(data, opened);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('skein up --private, Ctrl-C while it starts', () => {
  it('starts, then drains and stops its broker: none is left running', async () => {
    const r = newRun('skein-stop-early-');
    const { data } = r;
    const up = upInOwnGroup(r, 'private');
    // As soon as its broker runs, before it serves.
    await vi.waitFor(() => expect(brokersOf(data)).toHaveLength(1), { timeout: 60_000, interval: 5 });
    const serving = /mode private/.test(up.stdout());
    process.kill(-up.child.pid!, 'SIGINT');
    expect(await up.exited).toBe(0);
    expect(brokersOf(data)).toEqual([]);
    if (!serving) expect(up.stderr()).toMatch(/stop asked while starting/);
  });
});
