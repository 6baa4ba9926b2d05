/**
 * A review whose append failed in doubt (it timed out, and the log stored it after all) is finished while the
 * runtime serves, once the fact writer's re-read finds the fact: the files the log says were rejected are
 * restored, and review.list stops showing the change. Before, the log said "rejected" while the disk and
 * review.list kept the agent's change until the next start (a gap the durability review left open). A real runtime
 * and its real JSONL log; only the first answer of one append is lost, as a stalled broker loses it.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppendRequest, EventLog } from '../../infra/transport/event-log.ts';
import { until } from '../support/until.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { tempDir } from '../support/temp-dir.ts';
import { overLog } from '../support/fact-writer.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';

/**
 * Stores the first append of `type` (once `armed`), then answers it with a timeout (`slowMs` later); `refuse`: the
 * first append of that type after arming fails outright, nothing stored.
 */
function losesFirstAnswer(type: string, refuse?: string, slowMs = 0) {
  const lost = { done: false, armed: true, refused: false };
  const wrap = (log: EventLog): EventLog =>
    overLog(log, {
      async append(request: AppendRequest) {
        if (lost.armed && request.fact.type === refuse && !lost.refused) {
          lost.refused = true;
          throw new Error('refused: nothing stored');
        }
        const result = await log.append(request);
        if (lost.armed && request.fact.type === type && !lost.done) {
          lost.done = true;
          // Answered late: appends queued behind it on its subject meanwhile run once it fails.
          if (slowMs > 0) await sleep(slowMs);
          throw new Error('TimeoutError: timeout');
        }
        return result;
      },
    });
  return { wrap, lost };
}

/** The writer's own retry would find the stored fact (a duplicate) and succeed: the doubt must reach the review. */
const NO_RETRY = { log: { appendRetries: 0 } } as never;

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

const files = (reply: { ok: boolean } & Record<string, unknown>) =>
  (reply['files'] as Array<{ path: string }> | undefined)?.map((f) => f.path.split('/').pop()) ?? [];

describe('a review in doubt', () => {
  it('a reject stored after its append timed out restores the files while serving', async () => {
    const doubt = losesFirstAnswer('review.rejected');
    rt = await startTestRuntime({ mode: 'embedded', wrapLog: doubt.wrap, logLevel: 'info', flags: NO_RETRY });
    const file = join(rt.workspace, 'a.txt');
    const created = join(rt.workspace, 'new.txt');
    writeFileSync(file, 'base\n');
    expect((await rt.call('file.write', { path: 'a.txt', content: 'AGENT\n' })).ok).toBe(true);
    expect((await rt.call('file.write', { path: 'new.txt', content: 'made by the agent\n' })).ok).toBe(true);
    expect(files(await rt.call('review.list', {})).sort()).toEqual(['a.txt', 'new.txt']);

    const rejected = await rt.call('review.reject', {});
    // The caller is told the reject failed (it cannot know yet whether it happened)...
    expect(doubt.lost.done).toBe(true);
    expect(rejected.ok).toBe(false);
    // ...and once the writer's re-read finds the fact in the log, the disk and the listing agree with it.
    await until('the file restored', () => readFileSync(file, 'utf8') === 'base\n');
    await until('the created file deleted', () => !existsSync(created));
    await until('review.list empty', async () => files(await rt!.call('review.list', {})).length === 0);
    expect(rt.logs.some((l) => String(l['msg']).includes('is finished'))).toBe(true);
    const journal = join(rt.dir, 'data', 'review-journal');
    expect(existsSync(journal) ? readdirSync(journal) : []).toEqual([]);

    // The undo works on it as on any reject (the created file made again): live state and log agree.
    const undo = await rt.call('review.undo-reject', {});
    expect(undo).toMatchObject({ ok: true, reapplied: [file, created], notRestorable: [] });
    expect(readFileSync(file, 'utf8')).toBe('AGENT\n');
    expect(readFileSync(created, 'utf8')).toBe('made by the agent\n');
  }, 30_000);

  it('an accept stored after its append timed out leaves review.list while serving', async () => {
    const doubt = losesFirstAnswer('review.accepted');
    rt = await startTestRuntime({ mode: 'embedded', wrapLog: doubt.wrap, flags: NO_RETRY });
    writeFileSync(join(rt.workspace, 'b.txt'), 'base\n');
    expect((await rt.call('file.write', { path: 'b.txt', content: 'AGENT\n' })).ok).toBe(true);
    const accepted = await rt.call('review.accept', {});
    expect(doubt.lost.done).toBe(true);
    expect(accepted.ok).toBe(false);
    await until('review.list empty', async () => files(await rt!.call('review.list', {})).length === 0);
    expect(readFileSync(join(rt.workspace, 'b.txt'), 'utf8')).toBe('AGENT\n');
  }, 30_000);

  /** The listing live, then after a restart over the same data (a replay of the log): they must agree. */
  const liveThenReplayed = async (dir: string) => {
    const listing = async () => {
      const reply = await rt!.call('review.list', {});
      const files = (reply as unknown as { files: Array<{ path: string; diff?: string }> }).files;
      return files.map((f) => ({ path: f.path, diff: f.diff }));
    };
    const live = await listing();
    // The host's own aggregates too: the late fact folded in the log's order, before the records that follow it.
    expect(rt!.host.digest()).toBe((await replayLog(rt!.log, AGGREGATES)).digest);
    await rt!.dispose();
    rt = await startTestRuntime({ mode: 'embedded', dir });
    return { live, replayed: await listing() };
  };

  it('a reject stored behind later writes of its file never undoes them; live state equals a replay', async () => {
    const dir = tempDir('skein-doubt-later-');
    try {
      const doubt = losesFirstAnswer('review.rejected');
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path, wrapLog: doubt.wrap, flags: NO_RETRY });
      const file = join(rt.workspace, 'a.txt');
      writeFileSync(file, 'base\n');
      expect((await rt.call('file.write', { path: 'a.txt', content: 'AGENT\n' })).ok).toBe(true);
      expect((await rt.call('review.reject', {})).ok).toBe(false);
      // The agent writes again, then back: acknowledged, and the disk holds the reject's "before" again.
      expect((await rt.call('file.write', { path: 'a.txt', content: 'AGENT2\n' })).ok).toBe(true);
      expect((await rt.call('file.write', { path: 'a.txt', content: 'AGENT\n' })).ok).toBe(true);
      await sleep(2_500); // the writer's re-read (500 ms) has found the reject by now
      expect(readFileSync(file, 'utf8')).toBe('AGENT\n');
      const { live, replayed } = await liveThenReplayed(dir.path);
      expect(readFileSync(file, 'utf8')).toBe('AGENT\n');
      expect(live.map((f) => f.path)).toEqual([file]);
      expect(live).toEqual(replayed);
    } finally {
      dir.dispose();
    }
  }, 30_000);

  it("a change's record stored after its append timed out is recorded once: live and replay agree", async () => {
    const dir = tempDir('skein-doubt-record-');
    try {
      // edit.applied refused outright, so the edit wiring records the change itself; that record's answer is lost.
      const doubt = losesFirstAnswer('action-log.change.recorded', 'edit.applied');
      doubt.lost.armed = false;
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path, wrapLog: doubt.wrap, flags: NO_RETRY });
      const file = join(rt.workspace, 'a.txt');
      writeFileSync(file, 'one\ntwo\nthree\n');
      expect((await rt.call('file.write', { path: 'a.txt', content: 'one\nTWO\nthree\n' })).ok).toBe(true);
      doubt.lost.armed = true;
      await rt.call('file.write', { path: 'a.txt', content: 'one\ntwo\nthree\n' });
      await sleep(3_000);
      expect(doubt.lost).toMatchObject({ refused: true, done: true });
      const { live, replayed } = await liveThenReplayed(dir.path);
      // The file is back to its base: nothing to review, before and after a restart.
      expect(live).toEqual([]);
      expect(replayed).toEqual([]);
    } finally {
      dir.dispose();
    }
  }, 30_000);

  it("a shell change recorded while a reject's append hangs, then fails in doubt: nothing stalls", async () => {
    const dir = tempDir('skein-doubt-shell-');
    try {
      // The shell's record carries into the root's own action log, the subject in doubt: queued behind the
      // reject, it ran into a lock of its own subject and never came out (the second review's probe).
      const doubt = losesFirstAnswer('review.rejected', undefined, 1_500);
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path, wrapLog: doubt.wrap, flags: NO_RETRY });
      const a = join(rt.workspace, 'a.txt');
      writeFileSync(a, 'base\n');
      const opened = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
      const terminalId = opened.terminalId;
      expect((await rt.call('terminal.exec', { terminalId, command: 'true' })).ok).toBe(true);
      expect((await rt.call('file.write', { path: 'a.txt', content: 'AGENT\n' })).ok).toBe(true);
      const rejected = rt.call('review.reject', {});
      await sleep(100);
      const exec = rt.call('terminal.exec', { terminalId, command: 'echo X > b.txt' }, { timeoutMs: 12_000 });
      expect((await rejected).ok).toBe(false);
      expect(await exec).toMatchObject({ ok: true, exitCode: 0 });
      await until('the reject finished', () => readFileSync(a, 'utf8') === 'base\n');
      expect((await rt.call('file.write', { path: 'c.txt', content: 'later\n' })).ok).toBe(true);
      const { live, replayed } = await liveThenReplayed(dir.path);
      expect(live.map((f) => f.path.split('/').pop()).sort()).toEqual(['b.txt', 'c.txt']);
      expect(live).toEqual(replayed);
    } finally {
      dir.dispose();
    }
  }, 40_000);
});
