/**
 * Issue 11, hole 6: the symlink race. A real shell loop in the workspace keeps renaming `race` between a
 * real directory and a symlink to a directory outside, while 1,000 `file.write`s and 1,000 `file.read`s of
 * `race/…` run live over NATS. Canaries: a file created outside, the outside secret in a reply, a skein temp
 * file left anywhere. On the old path-based code `x.txt` appeared outside after a few hundred writes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFact } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startNetworkedRuntime, type TestRuntime } from '../support/runtime.ts';
import { killGroup } from '../support/process-group.ts';

const SECRET = `CANARY-RACE-SECRET-${process.pid}`;
const ROUNDS = 1000;
const PARALLEL = 8;

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    out.push(p);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(root);
  return out;
}

describe('symlink race against the file tools (live over NATS, real shell loop)', () => {
  let rt: TestRuntime;
  let outside: string;
  let swapper: ChildProcess;
  let asks: { unsubscribe(): void } | undefined;
  let asked = 0;

  beforeAll(async () => {
    rt = await startNetworkedRuntime();
    outside = join(rt.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), `${SECRET}\n`);
    mkdirSync(join(rt.workspace, 'race_dir'));
    writeFileSync(join(rt.workspace, 'race_dir', 'secret.txt'), 'inside\n');
    // The loop renames (atomic) so `race` is, in turn: the real directory, missing, the symlink, missing.
    // `file.write` creates missing parents, so a write that lands while `race` is missing makes a real `race`
    // directory inside the workspace (legitimate); each round removes it and restores the link it may have
    // displaced, so the swap never jams.
    const link = `ln -s ${JSON.stringify(outside)} race_link`;
    const loop =
      `${link}; while :; do rm -rf race; [ -L race_link ] || { rm -rf race_link; ${link}; }; ` +
      'mv -T race_dir race; mv -T race race_dir; mv -T race_link race; mv -T race race_link; done';
    swapper = spawn('sh', ['-c', loop], { cwd: rt.workspace, stdio: 'ignore', detached: true });
    // The racer is a sub-agent: when the gate sees `race` as a symlink out, it asks the parent, who denies.
    ok(await rt.call('agent.spawn', { label: 'racer', agentId: 'racer' }));
    asks = rt.bus.subscribe('skein.ask.main.>', (msg) => {
      const fact = decodeFact(msg.subject, msg.data);
      const requestId = (fact.data as { requestId: string }).requestId;
      asked++;
      void rt.call('permission.decide', { requestId, decision: 'deny_once' });
    });
    await rt.bus.flush();
  }, 30_000);
  afterAll(async () => {
    asks?.unsubscribe();
    if (swapper && swapper.exitCode === null && swapper.signalCode === null) {
      killGroup(swapper);
      await new Promise((r) => swapper.once('exit', r));
    }
    await rt?.dispose();
  });

  it(`${ROUNDS} writes and ${ROUNDS} reads never create or read a file outside, and leave no temp file`, async () => {
    let wrote = 0;
    let read = 0;
    const leaks: string[] = [];
    for (let i = 0; i < ROUNDS; i += PARALLEL) {
      const batch = Array.from({ length: Math.min(PARALLEL, ROUNDS - i) }, async (_, k) => {
        const w = await rt.call(
          'file.write',
          { path: 'race/x.txt', content: `write ${i + k}\n` },
          { agentId: 'racer' },
        );
        if (w.ok) wrote++;
        // Half the reads aim at the outside secret's name, half at the file the writes leave in whatever
        // directory `race` was: both must never return the outside content.
        const target = (i + k) % 2 === 0 ? 'race/secret.txt' : 'race/x.txt';
        const r = await rt.call('file.read', { path: target }, { agentId: 'racer' });
        if (r.ok) read++;
        if (JSON.stringify(r).includes(SECRET)) leaks.push(`read ${i + k}`);
        if (existsSync(join(outside, 'x.txt'))) leaks.push(`x.txt outside after write ${i + k}`);
      });
      await Promise.all(batch);
    }
    const exited = new Promise((r) => swapper.once('exit', r));
    killGroup(swapper);
    await exited;
    expect(leaks).toEqual([]);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(files(rt.dir).filter((p) => /\.skein-.*\.tmp$/.test(p))).toEqual([]);
    // The race was real: some calls hit the directory and went through.
    expect(wrote).toBeGreaterThan(0);
    expect(read).toBeGreaterThan(0);
    console.log(
      `race: ${wrote}/${ROUNDS} writes and ${read}/${ROUNDS} reads went through, ` +
        `${asked} asked the parent (denied), 0 escaped`,
    );
  }, 240_000);
});
