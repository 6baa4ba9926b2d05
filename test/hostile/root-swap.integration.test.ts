/**
 * The workspace root itself swapped (issue 13, the cached root): the confined walk keeps each root's real
 * path and an open descriptor of it (`actors/common/root-cache.ts`). An agent's shell that renames the root
 * away and puts a symlink to a directory outside in its place must not get skein to read or write there;
 * the root deleted and made again at the same place is used again. A real shell loop swaps the root while
 * reads run. Before the cache every walk took `realpath(root)` afresh, so a swapped-in symlink was followed
 * and the outside secret was read. The project policy file is read from the pinned root too: a reload that
 * settles while the root is swapped keeps the project's policy (before, it dropped it: the CI flake in which
 * no read was served).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFact } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { killGroup } from '../support/process-group.ts';

const SECRET = `CANARY-ROOT-SECRET-${process.pid}`;

describe('the workspace root swapped under the file tools', () => {
  let rt: TestRuntime;
  let outside: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ mode: 'embedded', logLevel: 'warn' });
    outside = join(rt.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), `${SECRET}\n`);
    writeFileSync(join(rt.workspace, 'secret.txt'), 'inside\n');
  }, 30_000);
  afterAll(async () => rt?.dispose());

  const read = async () => rt.call('file.read', { path: 'secret.txt' });

  it('refuses a root replaced by a symlink out, naming both places, and serves it again once put back', async () => {
    expect(await read()).toMatchObject({ ok: true, content: expect.stringContaining('inside') });
    const kept = `${rt.workspace}-kept`;
    renameSync(rt.workspace, kept);
    symlinkSync(outside, rt.workspace);
    try {
      const refused = await read();
      expect(refused).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
      expect(JSON.stringify(refused)).not.toContain(SECRET);
      expect(JSON.stringify(refused)).toContain(`now resolves to '${outside}'`);
      const write = await rt.call('file.write', { path: 'planted.txt', content: 'x\n' });
      expect(write).toMatchObject({ ok: false });
      expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    } finally {
      unlinkSync(rt.workspace);
      renameSync(kept, rt.workspace);
    }
    expect(await read()).toMatchObject({ ok: true, content: expect.stringContaining('inside') });
  });

  it('uses a root deleted and made again at the same place, not the deleted directory', async () => {
    expect(await read()).toMatchObject({ ok: true });
    rmSync(rt.workspace, { recursive: true });
    mkdirSync(join(rt.workspace, '.skein'), { recursive: true });
    writeFileSync(join(rt.workspace, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    writeFileSync(join(rt.workspace, 'secret.txt'), 'made again\n');
    expect(await read()).toMatchObject({ ok: true, content: expect.stringContaining('made again') });
    expect(await rt.call('file.write', { path: 'new.txt', content: 'new\n' })).toMatchObject({ ok: true });
    expect(existsSync(join(rt.workspace, 'new.txt'))).toBe(true);
  });

  it('never reads outside while a shell loop swaps the root for a symlink out and back', async () => {
    // The reader is a sub-agent: when the gate sees the path outside (the root is the symlink), it asks the
    // parent, who denies; the walk is what must refuse when the ask is passed or not made.
    ok(await rt.call('agent.spawn', { label: 'racer', agentId: 'racer' }));
    const asks = rt.bus.subscribe('skein.ask.main.>', (msg) => {
      const fact = decodeFact(msg.subject, msg.data);
      const requestId = (fact.data as { requestId: string }).requestId;
      void rt.call('permission.decide', { requestId, decision: 'deny_once' });
    });
    await rt.bus.flush();
    const dir = rt.dir;
    const ws = rt.workspace.slice(dir.length + 1);
    // The root is back in place for 200 ms of each round (the other three states last one mv each), and for a
    // whole second every fifth round: a read needs the root whole for its entire walk. Without a pause none
    // landed on a loaded machine (CI); with 20 ms none landed in 40 s on a quiet one, the old code too. With
    // 200 ms alone, about one run in twenty beside test/architecture (load ~20) served none of ~25,000 reads
    // in 40 s while the loop kept its pace; no trace of the root cache showed a refusal once the root was
    // back (55 traced runs, none failing). The quiet second tells a timing window from a root that stays
    // refused, and the read after the loop must be served. Those runs were the policy watcher, not the cache: test
    // 2's reload settled while the root was the symlink, the file read through the root's name was absent, the
    // project layer was dropped (every read then asked, and was denied) and the watch moved to the directory
    // outside. The file is now read from the pinned root (policy-watch.ts); the last test holds that moment still.
    const loop =
      `ln -s ${JSON.stringify(outside)} ws_link; i=0; while :; do ` +
      `mv -T ${ws} ws_real; mv -T ws_link ${ws}; mv -T ${ws} ws_link; mv -T ws_real ${ws}; ` +
      `i=$((i + 1)); if [ $((i % 5)) -eq 0 ]; then sleep 1; else sleep 0.2; fi; done`;
    const swapper: ChildProcess = spawn('sh', ['-c', loop], { cwd: dir, stdio: 'ignore', detached: true });
    let served = 0;
    let refused = 0;
    const leaks: string[] = [];
    const reasons = new Map<string, number>();
    // At least 400 reads, and on until both outcomes were seen 10 times (a loaded machine may need more
    // rounds for a read to land whole), within 40 s.
    const until = performance.now() + 40_000;
    try {
      for (let i = 0; i < 400 || ((served < 10 || refused < 10) && performance.now() < until); i += 8) {
        const replies = await Promise.all(
          Array.from({ length: 8 }, () => rt.call('file.read', { path: 'secret.txt' }, { agentId: 'racer' })),
        );
        for (const reply of replies) {
          if (JSON.stringify(reply).includes(SECRET)) leaks.push(JSON.stringify(reply).slice(0, 200));
          if (reply.ok) served++;
          else {
            refused++;
            const why = JSON.stringify(reply).slice(0, 160);
            reasons.set(why, (reasons.get(why) ?? 0) + 1);
          }
        }
      }
    } finally {
      asks.unsubscribe();
      killGroup(swapper);
      await new Promise((r) => swapper.once('exit', r));
      // Put the workspace back whichever step the loop was killed at.
      if (!existsSync(join(rt.workspace, '.skein')) && existsSync(join(dir, 'ws_real'))) {
        rmSync(rt.workspace, { force: true });
        renameSync(join(dir, 'ws_real'), rt.workspace);
      }
    }
    expect(leaks).toEqual([]);
    // Both sides were exercised: reads landed while the root was in place, and reads met it swapped.
    // Why reads were refused, by message, printed when one side was never seen (CI once had 0 served in 40 s).
    const why = JSON.stringify([...reasons].slice(0, 8));
    expect(served, why).toBeGreaterThan(0);
    expect(refused, why).toBeGreaterThan(0);
    // Once the loop is gone and the root back, the racer's reads are served again.
    const after = await rt.call('file.read', { path: 'secret.txt' }, { agentId: 'racer' });
    expect(after).toMatchObject({ ok: true, content: 'made again\n' });
  }, 90_000);

  it('keeps the project policy when a change settles with the root swapped out, and follows it back', async () => {
    // The CI flake, held still: a debounced reload settled while the loop had the root swapped for the symlink.
    // Read through the root's name, the file was absent there, the project layer was dropped (every read then
    // asked, and the parent denied) and the watch moved to the directory outside, never to come back.
    ok(await rt.call('agent.spawn', { label: 'settler', agentId: 'settler' }));
    const asks = rt.bus.subscribe('skein.ask.main.>', (msg) => {
      const requestId = (decodeFact(msg.subject, msg.data).data as { requestId: string }).requestId;
      void rt.call('permission.decide', { requestId, decision: 'deny_once' });
    });
    await rt.bus.flush();
    const read = () => rt.call('file.read', { path: 'secret.txt' }, { agentId: 'settler' });
    const policy = join(rt.workspace, '.skein', 'policy.json');
    const reloads = async (after: number) => {
      const out: unknown[] = [];
      await rt.log.scan({ stream: 'events', fromSeq: after + 1 }, (f) => {
        if (f.type === 'policy.changed' && (f.data as { layer?: string }).layer === 'project') out.push(f.data);
      });
      return out;
    };
    const notRead = () => rt.logs.filter((l) => l.msg === 'policy file not read; the policy in force holds').length;
    try {
      expect(await read()).toMatchObject({ ok: true, content: 'made again\n' });
      const seq = await rt.log.lastSeq('events');
      const warned = notRead();
      const kept = `${rt.workspace}-kept`;
      renameSync(rt.workspace, kept);
      symlinkSync(outside, rt.workspace);
      try {
        // An edit of the real file (the same policy) while the root's name points outside.
        writeFileSync(join(kept, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
        // Settled: left unread with a warning, or (before) read through the name and applied.
        await expect
          .poll(async () => notRead() > warned || (await reloads(seq)).length > 0, { timeout: 10_000 })
          .toBe(true);
      } finally {
        unlinkSync(rt.workspace);
        renameSync(kept, rt.workspace);
      }
      expect(await reloads(seq)).toEqual([]);
      expect(await read()).toMatchObject({ ok: true, content: 'made again\n' });
      // Watched where it is again: an edit there decides the next read.
      writeFileSync(
        policy,
        JSON.stringify({ default: 'allow', tools: { read_file: { always_deny: [{ pattern: 'secret' }] } } }),
      );
      await expect.poll(async () => (await reloads(seq)).length, { timeout: 10_000 }).toBeGreaterThan(0);
      expect(await read()).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    } finally {
      asks.unsubscribe();
    }
  }, 60_000);
});
