/**
 * Reviews while a command writes the file: a review does not take what a running command changed so far. With
 * `seen` (the console, `skein accept -i`) it was refused as a conflict at every try while the command wrote (the
 * log's content moved at each take), and an accept of a named path accepted the command's change unseen (2543f6e,
 * a review's probes). Real runtime, PTYs, files.
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

type Listing = { files?: Array<{ path: string; currentHash: string | null; diff?: string }> };

async function setup() {
  rt = await startTestRuntime({ mode: 'embedded' });
  const file = join(rt.workspace, 'a.txt');
  writeFileSync(file, 'l1\nl2\nl3\n');
  const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
  ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
  ok(await rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] }));
  return { file, terminalId };
}

describe('seen while a command keeps writing the file', () => {
  for (const kind of ['review.accept', 'review.reject'] as const) {
    it(`${kind} with seen from a fresh listing goes through while a command keeps appending`, async () => {
      const { file, terminalId } = await setup();
      const command = 'touch began; while [ ! -e stop ]; do date +C%s%N >> a.txt; sleep 0.05; done; touch done';
      ok(await rt!.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
      await until('began', () => existsSync(join(rt!.workspace, 'began')));
      await sleep(200);
      const outcomes: string[] = [];
      for (let i = 0; i < 5; i++) {
        const list = (await rt!.call('review.list', {})) as unknown as Listing;
        const seen = Object.fromEntries((list.files ?? []).map((f) => [f.path, f.currentHash]));
        const r = await rt!.call(kind, { seen });
        outcomes.push(r.ok ? 'ok' : ((r as unknown as { error: { code: string } }).error.code ?? 'err'));
        if (r.ok) break;
        await sleep(100);
      }
      writeFileSync(join(rt!.workspace, 'stop'), '');
      await until('done', () => existsSync(join(rt!.workspace, 'done')));
      expect(outcomes).toContain('ok');
      expect(rt!.host.digest()).toBe((await replayLog(rt!.log, AGGREGATES)).digest);
      expect(readFileSync(file, 'utf8')).toContain('C');
    }, 60_000);
  }

  it('an accept of a named path leaves what a running command wrote after the listing in review', async () => {
    const { file, terminalId } = await setup();
    const list = (await rt!.call('review.list', {})) as unknown as Listing;
    expect(list.files?.[0]?.diff).toContain('+EDIT');
    const command = 'echo CANARY >> a.txt; touch began; while [ ! -e stop ]; do sleep 0.05; done; touch done';
    ok(await rt!.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
    await until('began', () => existsSync(join(rt!.workspace, 'began')));
    const accepted = ok(await rt!.call('review.accept', { paths: [file] }));
    writeFileSync(join(rt!.workspace, 'stop'), '');
    await until('done', () => existsSync(join(rt!.workspace, 'done')));
    await sleep(1000);
    const after = (await rt!.call('review.list', {})) as unknown as Listing;
    expect(accepted['accepted']).toMatchObject([{ path: file }]);
    expect(readFileSync(file, 'utf8')).toContain('CANARY');
    // The canary was never listed: it is still in review.
    expect((after.files ?? []).some((f) => f.diff?.includes('+CANARY'))).toBe(true);
  }, 60_000);
});
