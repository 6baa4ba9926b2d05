/**
 * A shell command's file changes whose `action-log.shell.recorded` the log refuses (a full disk, the broker down)
 * are kept and recorded again until the log takes them, as an edit's are (`infra/review/unrecorded.ts`). Before,
 * such a change stayed on disk and never reached review: it could not be rejected. A real runtime, real PTYs and
 * its real JSONL log; only the log's first answer of that type is a refusal, nothing stored.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppendRequest, EventLog } from '../../infra/transport/event-log.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { overLog } from '../support/fact-writer.ts';
import { until } from '../support/until.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Refuses the first `times` appends of `type` outright: nothing stored. */
function refuses(type: string, times = 1) {
  const seen = { refused: 0 };
  const wrap = (log: EventLog): EventLog =>
    overLog(log, {
      async append(request: AppendRequest) {
        if (request.fact.type === type && seen.refused < times) {
          seen.refused++;
          throw new Error('refused: nothing stored');
        }
        return log.append(request);
      },
    });
  return { wrap, seen };
}

/**
 * Refuses every append of `types` while `down` is set (after `slowMs`: a broker timing out); while `slowStoreMs`
 * is set and not down, stores them that much later (a broker coming back).
 */
function down(...types: string[]) {
  const state = { down: false, refused: 0, slowMs: 0, slowStoreMs: 0 };
  const wrap = (log: EventLog): EventLog =>
    overLog(log, {
      async append(request: AppendRequest) {
        if (state.down && types.includes(request.fact.type)) {
          state.refused++;
          if (state.slowMs > 0) await sleep(state.slowMs);
          throw new Error('refused: nothing stored');
        }
        if (state.slowStoreMs > 0 && types.includes(request.fact.type)) await sleep(state.slowStoreMs);
        return log.append(request);
      },
    });
  return Object.assign(state, { wrap });
}

const NO_RETRY = { log: { appendRetries: 0 } } as never;

/** A runtime whose log refuses `types` while `log.down`, a.txt holding `base`, and a terminal open. */
async function refusing(...types: string[]) {
  const log = down(...types);
  const runtime = await startTestRuntime({ mode: 'embedded', wrapLog: log.wrap, flags: NO_RETRY });
  rt = runtime; // disposed after the test
  const file = join(runtime.workspace, 'a.txt');
  writeFileSync(file, 'base\n');
  const { terminalId } = (await runtime.call('terminal.open', {})) as unknown as { terminalId: string };
  return { log, file, terminalId, runtime };
}

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

const listing = async () => {
  const reply = await rt!.call('review.list', {});
  const files = (reply as unknown as { files?: Array<{ path: string; diff?: string }> }).files ?? [];
  return files.map((f) => ({ path: f.path.split('/').pop(), diff: f.diff }));
};

describe('a shell change the log refused to record', () => {
  it('is recorded again until the log takes it, then can be rejected; live equals a replay', async () => {
    const dir = tempDir('skein-shell-unrecorded-');
    try {
      const refusal = refuses('action-log.shell.recorded', 2);
      rt = await startTestRuntime({
        mode: 'embedded',
        dir: dir.path,
        wrapLog: refusal.wrap,
        flags: NO_RETRY,
        logLevel: 'info',
      });
      writeFileSync(join(rt.workspace, 'a.txt'), 'base\n');
      const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
      const exec = await rt.call('terminal.exec', { terminalId, command: 'echo CANARY > a.txt; echo made > s.txt' });
      expect(refusal.seen.refused).toBeGreaterThanOrEqual(1);
      // The agent is told the command ran (not to run it again) and its changes are not recorded yet.
      expect(exec).toMatchObject({
        ok: false,
        error: { retryable: false, details: { ran: true, status: 'exited', exitCode: 0, terminalId } },
      });
      const message = exec.ok ? '' : exec.error.message;
      expect(message).toContain('The command ran');
      expect(message).toContain('a.txt');
      expect(message).not.toContain('retry');
      await until(
        'both changes in review',
        async () =>
          (await listing())
            .map((f) => f.path)
            .sort()
            .join() === 'a.txt,s.txt',
      );
      expect(refusal.seen.refused).toBe(2);
      expect(rt.logs.some((l) => String(l['msg']).includes('recorded in the action log after all'))).toBe(true);
      expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
      const live = await listing();
      await rt.dispose();
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path });
      expect(await listing()).toEqual(live);
      // Reviewable: a reject restores the file the command overwrote.
      expect((await rt.call('review.reject', {})).ok).toBe(true);
      expect(readFileSync(join(rt.workspace, 'a.txt'), 'utf8')).toBe('base\n');
    } finally {
      dir.dispose();
    }
  }, 60_000);

  it('a command that ended after its exec replied: its changes reach review too', async () => {
    const refusal = refuses('action-log.shell.recorded', 1);
    rt = await startTestRuntime({ mode: 'embedded', wrapLog: refusal.wrap, flags: NO_RETRY });
    const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    const command = 'sleep 0.5; echo late > late.txt';
    expect(await rt.call('terminal.exec', { terminalId, command, yieldMs: 50 })).toMatchObject({
      ok: true,
      status: 'running',
    });
    await until('the refusal', () => refusal.seen.refused === 1);
    await until('late.txt in review', async () => (await listing()).some((f) => f.path === 'late.txt'));
    expect((await rt.call('review.reject', {})).ok).toBe(true);
    await until('late.txt deleted by the reject', () => !existsSync(join(rt!.workspace, 'late.txt')));
  }, 60_000);

  it('a later write of the file records the waiting change first: a reject restores the base', async () => {
    const dir = tempDir('skein-shell-later-write-');
    try {
      const refusal = refuses('action-log.shell.recorded', 1);
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path, wrapLog: refusal.wrap, flags: NO_RETRY });
      const file = join(rt.workspace, 'a.txt');
      writeFileSync(file, 'base\n');
      const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
      expect((await rt.call('terminal.exec', { terminalId, command: 'echo CANARY > a.txt' })).ok).toBe(false);
      // Before the retry (500 ms on): the agent writes the file again. The waiting change is recorded first, so
      // the log's base stays what it was before the command (before, the write started from CANARY).
      expect((await rt.call('file.write', { path: 'a.txt', content: 'EDIT\n' })).ok).toBe(true);
      const live = await listing();
      expect(live.map((f) => f.path)).toEqual(['a.txt']);
      expect(live[0]!.diff).toContain('-base');
      expect(live[0]!.diff).toContain('+EDIT');
      expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
      await rt.dispose();
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path });
      expect(await listing()).toEqual(live);
      expect((await rt.call('review.reject', {})).ok).toBe(true);
      expect(readFileSync(file, 'utf8')).toBe('base\n');
    } finally {
      dir.dispose();
    }
  }, 60_000);

  it('while the log refuses: later changes of the file wait behind, a write is refused unwritten', async () => {
    const { log, file, terminalId, runtime } = await refusing('action-log.shell.recorded');
    rt = runtime;
    log.down = true;
    expect((await rt.call('terminal.exec', { terminalId, command: "printf 'CANARY\\n' > a.txt" })).ok).toBe(false);
    expect((await rt.call('terminal.exec', { terminalId, command: 'echo more >> a.txt' })).ok).toBe(false);
    const write = await rt.call('file.write', { path: 'a.txt', content: 'EDIT\n' });
    expect(write).toMatchObject({ ok: false, error: { code: 'unavailable', retryable: true } });
    expect(write.ok ? '' : write.error.message).toContain('earlier changes to');
    expect(readFileSync(file, 'utf8')).toBe('CANARY\nmore\n');
    // review.list names them (not in any log yet), to the agent and its ancestors, not to a child.
    const waiting = async (agentId?: string) =>
      ((await rt!.call('review.list', {}, agentId ? { agentId } : {})) as unknown as { waiting?: unknown }).waiting;
    expect(await waiting()).toEqual([{ path: file, agentId: expect.any(String), changes: 2 }]);
    expect((await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' })).ok).toBe(true);
    expect(await waiting('kid')).toBeUndefined();
    // A review is refused too while it cannot see them (it would decide without them).
    const refused = await rt.call('review.reject', {});
    expect(refused).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(readFileSync(file, 'utf8')).toBe('CANARY\nmore\n');
    log.down = false;
    await until('a.txt in review', async () => (await listing()).some((f) => f.path === 'a.txt'));
    expect(await waiting()).toBeUndefined();
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    expect((await rt.call('review.reject', {})).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('base\n');
  }, 60_000);

  it('a reject made before the retry records the waiting changes first, and rejects them', async () => {
    const log = down('action-log.shell.recorded');
    rt = await startTestRuntime({ mode: 'embedded', wrapLog: log.wrap, flags: NO_RETRY });
    const file = join(rt.workspace, 'a.txt');
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect(
      (await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'line 1\n', newText: 'LINE 1\n' }] })).ok,
    ).toBe(true);
    const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    log.down = true;
    const command = "sed -i 's/line 12/CANARY/' a.txt; echo CANARY > b.txt";
    expect((await rt.call('terminal.exec', { terminalId, command })).ok).toBe(false);
    log.down = false;
    // At once, before the queue's own retry: the reject records them first, then rejects everything.
    expect((await rt.call('review.reject', {})).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(`${lines.join('\n')}\n`);
    expect(existsSync(join(rt.workspace, 'b.txt'))).toBe(false);
    expect(await listing()).toEqual([]);
  }, 60_000);

  it("an edit's change waiting to be recorded goes before a later command's change of the file", async () => {
    const { log, file, terminalId, runtime } = await refusing('edit.applied', 'action-log.change.recorded');
    rt = runtime;
    log.down = true;
    const write = await rt.call('file.write', { path: 'a.txt', content: 'CANARY\n' });
    expect(write.ok ? '' : write.error.message).toContain('was written, but the edit could not be recorded');
    log.down = false;
    // Before the queue's retry: the command's record first records the edit's change, then its own.
    expect(await rt.call('terminal.exec', { terminalId, command: 'echo more >> a.txt' })).toMatchObject({ ok: true });
    const live = await listing();
    expect(live.map((f) => f.path)).toEqual(['a.txt']);
    expect(live[0]!.diff).toContain('-base');
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    expect((await rt.call('review.reject', {})).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('base\n');
  }, 60_000);

  it("a command's change made while a refused write flushes the file's waiting one still reaches review", async () => {
    const { log, file, terminalId, runtime } = await refusing('action-log.shell.recorded');
    rt = runtime;
    log.down = true;
    expect((await rt.call('terminal.exec', { terminalId, command: 'echo ONE > a.txt' })).ok).toBe(false);
    await until("the queue's first retry", () => log.refused >= 2);
    log.slowMs = 2_500;
    // The write holds a.txt's lock while its flush of ONE is refused slowly; the command ends meanwhile. Shell
    // tracking took any holder of the lock for an edit that records the change itself, and dropped CANARY.
    const write = rt.call('file.write', { path: 'a.txt', content: 'EDIT\n' }, { timeoutMs: 20_000 });
    await sleep(300);
    await rt.call('terminal.exec', { terminalId, command: 'echo CANARY >> a.txt' });
    expect((await write).ok).toBe(false);
    log.down = false;
    await until('a.txt in review', async () => (await listing()).some((f) => f.diff?.includes('+CANARY')), 20_000);
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    expect((await rt.call('review.reject', {})).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('base\n');
  }, 60_000);

  for (const writer of ['file.write', 'review.reject'] as const) {
    it(`a command ending while a ${writer} flushes the file is recorded before the writer acts`, async () => {
      const { log, file, terminalId, runtime } = await refusing('action-log.shell.recorded');
      rt = runtime;
      log.down = true;
      expect((await rt.call('terminal.exec', { terminalId, command: 'echo ONE > a.txt' })).ok).toBe(false);
      await until("the queue's first retry", () => log.refused >= 2);
      log.down = false;
      log.slowStoreMs = 2_000;
      // The writer holds a.txt's lock while ONE is stored (slowly); the command ends meanwhile and waits for it.
      // Its change was recorded after the writer's, which had started from a disk holding it.
      const acting =
        writer === 'file.write'
          ? rt.call('file.write', { path: 'a.txt', content: 'EDIT\n' }, { timeoutMs: 20_000 })
          : rt.call('review.reject', { paths: [file] }, { timeoutMs: 20_000 });
      await sleep(300);
      expect(
        (await rt.call('terminal.exec', { terminalId, command: 'echo CANARY >> a.txt' }, { timeoutMs: 20_000 })).ok,
      ).toBe(true);
      expect((await acting).ok).toBe(true);
      log.slowStoreMs = 0;
      expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
      expect((await rt.call('review.reject', {})).ok).toBe(true);
      expect(readFileSync(file, 'utf8')).toBe('base\n');
    }, 60_000);
  }
});
