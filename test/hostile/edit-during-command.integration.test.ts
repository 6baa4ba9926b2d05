/**
 * An agent edits a file while its own command, still running, has changed it. The edit's record started from a
 * disk holding the command's change, so the planner folded that into the log's base as made outside, and the
 * command's end then credited the whole file to the edit: after reject-all the command's canary stayed on disk
 * (a review's probe; an agent can do it on purpose: run a command with a short yield, then edit). Now what the
 * running command changed at the path is recorded as the command's before the edit writes. Real runtime, real
 * PTY, real files; the command waits on a file the test creates, not on a sleep.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { until } from '../support/until.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

const listing = async () => {
  const reply = (await rt!.call('review.list', {})) as unknown as { files?: Array<{ path: string; diff?: string }> };
  return (reply.files ?? []).map((f) => ({ path: f.path.split('/').pop(), diff: f.diff ?? '' }));
};

describe("an edit while the same agent's command runs", () => {
  it("records the command's change first: a reject-all restores the file, canary gone", async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
    const file = join(rt.workspace, 'a.txt');
    const base = 'l1\nl2\nl3\nl4\nl5\nl6\n';
    writeFileSync(file, base);
    const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    expect((await rt.call('terminal.exec', { terminalId, command: 'true' })).ok).toBe(true);
    // Changes the file, waits for `go`, then changes it again.
    const command = "sed -i 's/^l6$/CANARY/' a.txt; while [ ! -e go ]; do sleep 0.05; done; echo tail >> a.txt";
    expect(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 })).toMatchObject({
      ok: true,
      status: 'running',
    });
    await until('the command changed the file', () => readFileSync(file, 'utf8').includes('CANARY'));
    const edit = await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] });
    expect(edit.ok).toBe(true);
    writeFileSync(join(rt.workspace, 'go'), '');
    await until('the command ended', () => readFileSync(file, 'utf8').endsWith('tail\n'));
    await until('its last change in review', async () =>
      (await listing()).some((f) => f.path === 'a.txt' && f.diff.includes('+tail')),
    );
    const diff = (await listing()).find((f) => f.path === 'a.txt')!.diff;
    // Against the base: the command's lines and the edit's are all the agent's.
    expect(diff).toContain('-l6');
    expect(diff).toContain('+CANARY');
    expect(diff).toContain('-l1');
    expect(diff).toContain('+EDIT');
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    expect((await rt.call('review.reject', { paths: [file] })).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(base);
    expect(existsSync(file)).toBe(true);
  }, 60_000);

  it("a sub-agent's running command changed the file its parent edits: the change is the child's", async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
    const spawned = await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' });
    expect(spawned.ok).toBe(true);
    const { terminalId } = (await rt.call('terminal.open', {}, { agentId: 'kid' })) as unknown as {
      terminalId: string;
    };
    const kidDir = (
      (await rt.call('terminal.exec', { terminalId, command: 'pwd' }, { agentId: 'kid' })) as never as {
        output: string;
      }
    ).output.trim();
    const file = join(kidDir, 'a.txt');
    const base = 'l1\nl2\nl3\n';
    writeFileSync(file, base);
    const command = "sed -i 's/^l3$/CANARY/' a.txt; while [ ! -e go ]; do sleep 0.05; done";
    expect(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }, { agentId: 'kid' })).toMatchObject({
      ok: true,
      status: 'running',
    });
    await until('the command changed the file', () => readFileSync(file, 'utf8').includes('CANARY'));
    const edit = await rt.call('file.edit', { path: file, edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] });
    expect(edit.ok).toBe(true);
    writeFileSync(join(kidDir, 'go'), '');
    const kids = async () =>
      ((await rt!.call('review.list', {}, { agentId: 'kid' })) as unknown as { files?: Array<{ diff?: string }> })
        .files ?? [];
    await until("the child's change in its own log", async () =>
      (await kids()).some((f) => f.diff?.includes('+CANARY')),
    );
    expect((await kids()).every((f) => !f.diff?.includes('+EDIT'))).toBe(true);
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    expect((await rt.call('review.reject', { paths: [file] })).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(base);
  }, 60_000);

  it('the command writes its own content back over the edit: review shows the disk, canary undone', async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
    const file = join(rt.workspace, 'a.txt');
    const base = 'l1\nl2\nl3\n';
    writeFileSync(file, base);
    const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    // Writes the canary, keeps a copy, waits for `go` (the edit made meanwhile), then puts its copy back.
    const command =
      "sed -i 's/^l3$/CANARY/' a.txt; cp a.txt .keep; while [ ! -e go ]; do sleep 0.05; done; cat .keep > a.txt";
    expect(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 })).toMatchObject({ status: 'running' });
    await until('the command changed the file', () => readFileSync(file, 'utf8').includes('CANARY'));
    const edit = await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] });
    expect(edit.ok).toBe(true);
    writeFileSync(join(rt.workspace, 'go'), '');
    await until('the command put its copy back', () => !readFileSync(file, 'utf8').includes('EDIT'));
    await until('review shows the disk: the edit overwritten', async () =>
      (await listing()).some((f) => f.path === 'a.txt' && !f.diff.includes('+EDIT')),
    );
    const diff = (await listing()).find((f) => f.path === 'a.txt')!.diff;
    expect(diff).toContain('+CANARY');
    expect(diff).not.toContain('EDIT');
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    expect((await rt.call('review.reject', { paths: [file] })).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(base);
  }, 60_000);
});
