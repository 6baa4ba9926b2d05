/**
 * Reviews while a command keeps appending to the file (every 20 ms), the log storing the command's records late (a
 * slow broker) or not. A review writes what it restored, keeping what the disk held that the log did not (the
 * command's lines so far); the command's marks then start from what the log holds, so those lines stay the
 * command's, and a final reject-all gives the base. A first fix (2543f6e: take the running change, rebase to the
 * bytes written) left the lines written between its take and its read on disk and out of review (a review's
 * probe); before that the rejected edit itself came back. Also reviews of two agents, and an undo-reject, while
 * commands run. Real runtime, PTYs, files.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppendRequest, EventLog } from '../../infra/transport/event-log.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { overLog } from '../support/fact-writer.ts';
import { ok } from '../support/replies.ts';
import { until } from '../support/until.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

/** Stores `action-log.shell.recorded` `slow.ms` late (a slow broker). */
function slowShell() {
  const slow = { ms: 0 };
  const wrap = (log: EventLog): EventLog =>
    overLog(log, {
      async append(request: AppendRequest) {
        if (slow.ms > 0 && request.fact.type === 'action-log.shell.recorded') await sleep(slow.ms);
        return log.append(request);
      },
    });
  return { slow, wrap };
}

describe('review during a command that keeps appending', () => {
  for (const how of ['paths', 'all'] as const) {
    for (const slowMs of [0, 300]) {
      it(`reject (${how}, log ${slowMs} ms late) as the command appends: a last reject-all: the base`, async () => {
        const s = slowShell();
        rt = await startTestRuntime({ mode: 'embedded', wrapLog: s.wrap });
        const file = join(rt.workspace, 'a.txt');
        writeFileSync(file, 'l1\nl2\nl3\n');
        const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
        ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
        ok(await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] }));
        const command = 'touch began; while [ ! -e stop ]; do date +C%s%N >> a.txt; sleep 0.02; done; touch done';
        ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
        await until('began', () => existsSync(join(rt!.workspace, 'began')));
        await sleep(200);
        s.slow.ms = slowMs;
        const r = await rt.call('review.reject', how === 'paths' ? { paths: [file] } : {});
        s.slow.ms = 0;
        await sleep(200);
        writeFileSync(join(rt.workspace, 'stop'), '');
        await until('done', () => existsSync(join(rt!.workspace, 'done')));
        await sleep(1500);
        expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
        const list = (await rt.call('review.list', {})) as unknown as {
          files?: Array<{ path: string; diff?: string }>;
        };
        const a = list.files?.find((f) => f.path === file);
        ok(await rt.call('review.reject', {}));
        const left = readFileSync(file, 'utf8');
        expect({ first: r.ok, left, diff: a?.diff?.slice(0, 300) }).toMatchObject({ left: 'l1\nl2\nl3\n' });
      }, 60_000);
    }
  }

  // The edit is applied again over each append it meets between its read and its rename; a command appending every
  // 20 ms while each try waits 300 ms on the log wins every time: the edit is then a conflict, nothing written
  // (until 8 December it was written over the lines appended in between, which were lost).
  it('an edit (slow log 300 ms) while the command appends: a final reject-all gives the base', async () => {
    const s = slowShell();
    rt = await startTestRuntime({ mode: 'embedded', wrapLog: s.wrap });
    const file = join(rt.workspace, 'a.txt');
    writeFileSync(file, 'l1\nl2\nl3\n');
    const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    const command = 'touch began; while [ ! -e stop ]; do date +C%s%N >> a.txt; sleep 0.02; done; touch done';
    ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
    await until('began', () => existsSync(join(rt!.workspace, 'began')));
    await sleep(200);
    s.slow.ms = 300;
    const edit = await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] });
    s.slow.ms = 0;
    const refused = edit as { ok: boolean; error?: { code: string } };
    if (!refused.ok) expect(readFileSync(file, 'utf8')).not.toContain('EDIT');
    expect(refused.ok || refused.error?.code === 'conflict').toBe(true);
    await sleep(200);
    writeFileSync(join(rt.workspace, 'stop'), '');
    await until('done', () => existsSync(join(rt!.workspace, 'done')));
    await sleep(1500);
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    ok(await rt.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe('l1\nl2\nl3\n');
  }, 60_000);
});

describe('reviews of two agents while commands run', () => {
  it("kid rejects its own edit while main's command appends; then main's reject-all gives the base", async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
    const file = join(rt.workspace, 'a.txt');
    writeFileSync(file, 'l1\nl2\nl3\n');
    ok(await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' }));
    const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    ok(
      await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'KID\n' }] }, { agentId: 'kid' }),
    );
    const command =
      'echo CANARY >> a.txt; touch began; while [ ! -e go ]; do sleep 0.05; done; echo MORE >> a.txt; touch done';
    ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
    await until('began', () => existsSync(join(rt!.workspace, 'began')));
    const kr = await rt.call('review.reject', {}, { agentId: 'kid' });
    const kidAfter = readFileSync(file, 'utf8');
    const undo = await rt.call('review.undo-reject', {}, { agentId: 'kid' });
    const afterUndo = readFileSync(file, 'utf8');
    writeFileSync(join(rt.workspace, 'go'), '');
    await until('done', () => existsSync(join(rt!.workspace, 'done')));
    await sleep(1000);
    expect({ kid: kr.ok, undo: undo.ok }).toEqual({ kid: true, undo: true });
    expect(kidAfter).not.toContain('KID');
    expect(afterUndo).toContain('KID');
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    ok(await rt.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe('l1\nl2\nl3\n');
  }, 60_000);

  it('undo-reject while the command appends; then reject-all gives the base', async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
    const file = join(rt.workspace, 'a.txt');
    writeFileSync(file, 'l1\nl2\nl3\n');
    const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    ok(await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] }));
    const command =
      'touch began; while [ ! -e go ]; do sleep 0.05; done; echo CANARY >> a.txt; ' +
      'while [ ! -e go2 ]; do sleep 0.05; done; echo MORE >> a.txt; touch done';
    ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
    await until('began', () => existsSync(join(rt!.workspace, 'began')));
    ok(await rt.call('review.reject', {}));
    writeFileSync(join(rt.workspace, 'go'), '');
    await until('canary', () => readFileSync(file, 'utf8').includes('CANARY'));
    const undo = await rt.call('review.undo-reject', {});
    const afterUndo = readFileSync(file, 'utf8');
    writeFileSync(join(rt.workspace, 'go2'), '');
    await until('done', () => existsSync(join(rt!.workspace, 'done')));
    await sleep(1000);
    expect(undo.ok).toBe(true);
    expect(afterUndo).toContain('EDIT');
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    ok(await rt.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe('l1\nl2\nl3\n');
  }, 60_000);
});
