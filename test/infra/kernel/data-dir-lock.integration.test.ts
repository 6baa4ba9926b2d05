/**
 * One runtime per data dir (review "bad day", race2.sh): two `skein up` started at the same moment on one data
 * dir both ran, both appended sequence 1, the second unlinked the first one's socket, and the next start refused
 * the log as not the one the host sealed. Now the second is refused before it opens anything, naming the data
 * dir and the pid that holds it; a holder that was SIGKILLed does not block the next start.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type LongRunning } from '../../support/cli.ts';
import { startTestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('the data dir lock', () => {
  const temp = tempDir('skein-lock-');
  const running: LongRunning[] = [];
  afterAll(async () => {
    for (const up of running) {
      if (up.child.exitCode === null && up.child.signalCode === null) up.child.kill('SIGKILL');
      await up.exited;
    }
    temp.dispose();
  });

  /** A workspace with an allow-all policy and a data dir beside it, both under `name`. */
  function dirs(name: string): { data: string; workspace: string } {
    const workspace = join(temp.path, name, 'ws');
    mkdirSync(join(workspace, '.skein'), { recursive: true });
    writeFileSync(join(workspace, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    return { data: join(temp.path, name, 'data'), workspace };
  }

  function up(data: string, workspace: string): LongRunning {
    const started = startCli(['up', '--embedded', '--data', data, '--workspace', workspace]);
    running.push(started);
    return started;
  }

  /** The first of `both` to exit (within 30 s: before the fix, both ran) and the other. */
  async function oneRefused(both: LongRunning[]): Promise<{ winner: LongRunning; loser: LongRunning }> {
    const loser = await Promise.race([
      ...both.map((u) => u.exited.then(() => u)),
      new Promise<undefined>((resolve) => setTimeout(resolve, 30_000)),
    ]);
    expect(loser, `neither was refused:\n${both.map((u) => u.stderr()).join('\n')}`).toBeDefined();
    return { winner: both.find((u) => u !== loser)!, loser: loser! };
  }

  /** Sequences of the log's lines. */
  const seqs = (data: string) =>
    readFileSync(join(data, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { seq: number }).seq);

  it('lets one of two `skein up` started at once serve, and refuses the other at once, naming the holder', async () => {
    const { data, workspace } = dirs('race');
    const { winner, loser } = await oneRefused([up(data, workspace), up(data, workspace)]);
    expect(await loser.exited).toBe(1);
    expect(loser.stderr()).toContain(
      `data dir ${data} is in use by another skein runtime (pid ${winner.child.pid}, since `,
    );
    expect(loser.stderr()).toMatch(/stop it first \(Ctrl-C where it runs, or kill \d+\), or pass another --data/);
    expect(loser.stdout()).not.toContain('mode embedded');
    await winner.waitFor(/mode embedded/);
    const ping = await runCli(['call', 'runtime.ping', '{}', '--data', data]);
    expect(ping.code, ping.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(data, 'lock'), 'utf8'))).toMatchObject({ pid: winner.child.pid });

    winner.child.kill('SIGTERM');
    expect(await winner.exited).toBe(0);
    expect(existsSync(join(data, 'lock'))).toBe(false);
    // One host wrote the log: sequence 1 (the root agent) once, and the next start opens it.
    expect(seqs(data)[0]).toBe(1);
    expect(new Set(seqs(data)).size).toBe(seqs(data).length);
    const again = up(data, workspace);
    await again.waitFor(/mode embedded/);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 90_000);

  it('takes over the lock of a `skein up` that was SIGKILLed', async () => {
    const { data, workspace } = dirs('killed');
    const first = up(data, workspace);
    await first.waitFor(/mode embedded/);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(JSON.parse(readFileSync(join(data, 'lock'), 'utf8'))).toMatchObject({ pid: first.child.pid });

    const next = up(data, workspace);
    await next.waitFor(/mode embedded/);
    expect(JSON.parse(readFileSync(join(data, 'lock'), 'utf8'))).toMatchObject({ pid: next.child.pid });
    const ping = await runCli(['call', 'runtime.ping', '{}', '--data', data]);
    expect(ping.code, ping.stderr).toBe(0);
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
  }, 90_000);

  it('lets one of two `skein up` at once take over a lock a dead process left, and refuses the other', async () => {
    const { data, workspace } = dirs('stale-race');
    mkdirSync(data, { recursive: true, mode: 0o700 });
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(join(data, 'lock'), JSON.stringify({ pid: dead, start: 1, host: hostname(), at: 'long ago' }));
    const { winner, loser } = await oneRefused([up(data, workspace), up(data, workspace)]);
    expect(loser.stderr()).toContain(`is in use by another skein runtime (pid ${winner.child.pid}, since `);
    await winner.waitFor(/mode embedded/);
    winner.child.kill('SIGTERM');
    expect(await winner.exited).toBe(0);
    expect(readdirSync(data).filter((n) => n.startsWith('lock'))).toEqual([]);
  }, 90_000);

  it('refuses a second runtime in the same process while the first holds the data dir', async () => {
    const dir = join(temp.path, 'in-process');
    const results = await Promise.allSettled([
      startTestRuntime({ mode: 'embedded', dir }),
      startTestRuntime({ mode: 'embedded', dir }),
    ]);
    const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    expect(started).toHaveLength(1);
    expect(refused).toEqual([
      expect.stringContaining(`data dir ${join(dir, 'data')} is in use by another skein runtime (pid ${process.pid}`),
    ]);
    await started[0]!.stop();
    const again = await startTestRuntime({ mode: 'embedded', dir });
    await again.stop();
  }, 60_000);
});
