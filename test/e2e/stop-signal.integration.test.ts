/**
 * Stopping `skein up` the way a person does: Ctrl-C in its terminal (SIGINT to the whole foreground process
 * group) or a supervisor that signals the group (`timeout` sends SIGTERM to it). Only skein may act on it: it
 * drains (every open terminal closed, its `terminal.closed` appended) and stops its own broker last. Before,
 * the private nats-server sat in skein's group and died of the same signal at the start of the drain: the
 * drain's appends failed, the log kept the terminals open, and skein logged an error and restarted the broker.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, runCli, startCli, type LongRunning } from '../support/cli.ts';

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

describe.each([
  ['private', 'SIGINT'],
  ['private', 'SIGTERM'],
  ['embedded', 'SIGINT'],
] as const)('skein up --%s, %s to its process group', (mode, signal) => {
  let dir = '';
  let up: LongRunning | undefined;

  afterEach(() => {
    if (up?.child.pid && up.child.exitCode === null) process.kill(-up.child.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('drains into the log: every open terminal is closed there, and no broker is restarted or left', async () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-stop-'));
    const data = join(dir, 'data');
    const workspace = join(dir, 'ws');
    mkdirSync(workspace);
    up = startCli(['up', `--${mode}`, '--data', data, '--workspace', workspace], {
      ownGroup: true,
      env: cleanEnv(),
    });
    await up.waitFor(new RegExp(`mode ${mode}`));
    const opened: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['call', 'terminal.open', '{}', '--data', data]);
      expect(r.code, r.stderr).toBe(0);
      opened.push((JSON.parse(r.stdout) as { terminalId: string }).terminalId);
    }
    if (mode === 'private') expect(brokersOf(data)).toHaveLength(1);

    process.kill(-up.child.pid!, signal);
    expect(await up.exited).toBe(0);
    expect(up.stderr() + up.stdout()).not.toMatch(/died; restarting|unreachable|not appended/);
    expect(brokersOf(data)).toEqual([]);

    const replayed = await runCli(['replay', '--data', data]);
    expect(replayed.code, replayed.stderr).toBe(0);
    for (const terminalId of opened) expect(replayed.stdout).toMatch(new RegExp(`terminal\\.closed ${terminalId}`));
  });
});
