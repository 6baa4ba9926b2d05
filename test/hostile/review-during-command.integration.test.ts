/**
 * A command still running or just ending while a person's reject or another agent's edit writes the same file:
 * the writer's write is never taken for the command's change, and the command's change never escapes review.
 * Before: a reject of a file a command still changed took its change so far and rebased the command's marks, so
 * its next change was recorded from the canary and a second reject-all wrote the canary back; and a command that
 * ended right after an edit wrote (before the edit noted its content) recorded the edit as its own, so the
 * child's reject-all undid its parent's edit (the fourth review's probes d5 and d1). Real runtime, PTYs, files.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { ok } from '../support/replies.ts';
import { until } from '../support/until.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

describe('a writer and a command on one file at once', () => {
  for (const agent of ['main', 'kid']) {
    it(`a reject while ${agent}'s command still changes the file: a second reject-all restores the base`, async () => {
      rt = await startTestRuntime({ mode: 'embedded' });
      const file = join(rt.workspace, 'a.txt');
      writeFileSync(file, 'base\n');
      if (agent === 'kid') ok(await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' }));
      const { terminalId } = ok(await rt.call('terminal.open', {}, { agentId: agent })) as unknown as {
        terminalId: string;
      };
      ok(await rt.call('terminal.exec', { terminalId, command: 'true' }, { agentId: agent }));
      const command = 'echo CANARY >> a.txt; while [ ! -e go ]; do sleep 0.05; done; echo MORE >> a.txt; rm go';
      ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }, { agentId: agent }));
      await until('the canary', () => readFileSync(file, 'utf8').includes('CANARY'));
      await rt.call('review.reject', { paths: [file] }); // not found yet, or rejected: either way nothing escapes
      writeFileSync(join(rt.workspace, 'go'), '');
      await until('the command ended', () => !existsSync(join(rt!.workspace, 'go')));
      await until('its change in review', async () => {
        const files = (await rt!.call('review.list', {})) as unknown as { files?: Array<{ diff?: string }> };
        return (files.files ?? []).some((f) => f.diff?.includes('+MORE'));
      });
      expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
      expect((await rt.call('review.reject', {})).ok).toBe(true);
      expect(readFileSync(file, 'utf8')).toBe('base\n');
    }, 60_000);
  }

  it("a child's command ending right after its parent's write does not take the write for its own", async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
    // A big file: the parent's write is on disk a while before its edit is recorded (the diff runs after it).
    const lines = Array.from({ length: 24_000 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    const file = join(rt.workspace, 'big.ts');
    writeFileSync(file, `${lines.join('\n')}\n`);
    ok(await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' }));
    const { terminalId } = ok(await rt.call('terminal.open', {}, { agentId: 'kid' })) as unknown as {
      terminalId: string;
    };
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }, { agentId: 'kid' }));
    // Ends as soon as the parent's bytes are on disk.
    const command = 'until grep -q EDITMARK big.ts; do sleep 0.005; done; echo seen';
    const exec = rt.call(
      'terminal.exec',
      { terminalId, command, yieldMs: 30_000 },
      { agentId: 'kid', timeoutMs: 40_000 },
    );
    await sleep(400);
    const changed = `${lines.map((l, i) => (i % 3 === 0 ? `${l} EDITMARK` : l)).join('\n')}\n`;
    ok(await rt.call('file.write', { path: 'big.ts', content: changed }, { timeoutMs: 30_000 }));
    expect((await exec).ok).toBe(true);
    const kid = (await rt.call('review.list', {}, { agentId: 'kid' })) as unknown as { files?: unknown[] };
    expect(kid.files ?? []).toEqual([]);
    // The child's reject-all cannot undo its parent's write.
    expect((await rt.call('review.reject', {}, { agentId: 'kid' })).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('EDITMARK');
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
  }, 90_000);

  /** a.txt holds l1-l3; `command` runs (waiting for `go`); the agent edits l1 and the person rejects the edit. */
  async function editRejected(command: string) {
    rt = await startTestRuntime({ mode: 'embedded' });
    const file = join(rt.workspace, 'a.txt');
    writeFileSync(file, 'l1\nl2\nl3\n');
    const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    ok(await rt.call('terminal.exec', { terminalId, command: `${command}; touch done`, yieldMs: 100 }));
    await until('the command began', () => existsSync(`${file}.began`));
    ok(await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] }));
    ok(await rt.call('review.reject', { paths: [file] }));
    expect(readFileSync(file, 'utf8')).toBe('l1\nl2\nl3\n');
    writeFileSync(join(rt.workspace, 'go'), '');
    await until('the command ended', () => existsSync(join(rt!.workspace, 'done')));
    return file;
  }
  const wait = 'touch a.txt.began; while [ ! -e go ]; do sleep 0.05; done';
  const diffOf = async (name: string) =>
    ((await rt!.call('review.list', {})) as unknown as { files?: Array<{ path: string; diff: string }> }).files?.find(
      (f) => f.path.endsWith(`/${name}`),
    )?.diff ?? '';

  it('after a reject of the edit, the command writing the rejected content back is in review', async () => {
    const file = await editRejected(`${wait}; printf 'EDIT\\nl2\\nl3\\n' > a.txt`);
    expect(readFileSync(file, 'utf8')).toBe('EDIT\nl2\nl3\n');
    await until('the command’s change in review', async () => (await diffOf('a.txt')).includes('+EDIT'));
    expect(rt!.host.digest()).toBe((await replayLog(rt!.log, AGGREGATES)).digest);
    ok(await rt!.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe('l1\nl2\nl3\n');
  }, 60_000);

  it('after a reject of the edit, the command appending: a reject-all gives the base back, not the edit', async () => {
    const file = await editRejected(`${wait}; echo tail >> a.txt`);
    await until('the tail in review', async () => (await diffOf('a.txt')).includes('+tail'));
    expect(await diffOf('a.txt')).not.toContain('EDIT');
    ok(await rt!.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe('l1\nl2\nl3\n');
  }, 60_000);

  it('a canary before the edit, the edit rejected, the canary written back: in review, undone', async () => {
    const command = `sed -i 's/^l3$/CANARY/' a.txt; cp a.txt .keep; ${wait}; cat .keep > a.txt`;
    const file = await editRejected(command);
    expect(readFileSync(file, 'utf8')).toContain('CANARY');
    await until('the canary in review', async () => (await diffOf('a.txt')).includes('+CANARY'));
    expect(await diffOf('a.txt')).not.toContain('EDIT');
    ok(await rt!.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe('l1\nl2\nl3\n');
  }, 60_000);
});
