/**
 * The runtime stops while an agent's command is still running. Its terminals are closed first and the command's
 * file changes recorded while the log still takes them; the watchers stop after. Before, the watchers stopped
 * first, and the command's end then read every file it had touched as deleted: after a restart, review said
 * a.txt was deleted while the disk held the canary (and an accept of that would have accepted a deletion). The
 * queue of records the log refused closes after that (its last try): closed first, it dropped the command's record
 * refused once at the stop (a review's probe). Real runtime, real PTY, real files, the same data dir across the
 * restart.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { AppendRequest, EventLog } from '../../infra/transport/event-log.ts';
import { overLog } from '../support/fact-writer.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

let rt: TestRuntime | undefined;
const dir = tempDir('skein-stop-command-');
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
  dir.dispose();
});

type Listing = { files: Array<{ path: string; status: string; diff: string }> };

it('a command running at a stop: after a restart review shows its change as the disk holds it', async () => {
  rt = await startTestRuntime({ mode: 'embedded', dir: dir.path });
  const file = join(rt.workspace, 'a.txt');
  writeFileSync(file, 'base\n');
  writeFileSync(join(rt.workspace, 'b.txt'), 'b\n');
  const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
  const command = 'echo CANARY > a.txt; rm b.txt; echo made > c.txt; sleep 100';
  expect(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 })).toMatchObject({ status: 'running' });
  await until('the command wrote', () => readFileSync(file, 'utf8').includes('CANARY'));
  await rt.dispose();
  rt = await startTestRuntime({ mode: 'embedded', dir: dir.path });
  const list = (await rt.call('review.list', {})) as unknown as Listing;
  expect(list.files.map((f) => [f.path.split('/').pop(), f.status])).toEqual([
    ['a.txt', 'modified'],
    ['b.txt', 'deleted'],
    ['c.txt', 'created'],
  ]);
  expect(list.files[0]!.diff).toContain('+CANARY');
  expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
  expect((await rt.call('review.reject', {})).ok).toBe(true);
  expect(readFileSync(file, 'utf8')).toBe('base\n');
  expect(readFileSync(join(rt.workspace, 'b.txt'), 'utf8')).toBe('b\n');
}, 60_000);

it('a command running at a stop whose record the log refuses once: in review after a restart', async () => {
  const state = { refuse: 0 };
  const wrapLog = (log: EventLog): EventLog =>
    overLog(log, {
      async append(request: AppendRequest) {
        if (state.refuse > 0 && request.fact.type === 'action-log.shell.recorded') {
          state.refuse--;
          throw new Error('refused: nothing stored');
        }
        return log.append(request);
      },
    });
  rt = await startTestRuntime({
    mode: 'embedded',
    dir: dir.path,
    wrapLog,
    flags: { log: { appendRetries: 0 } } as never,
  });
  const file = join(rt.workspace, 'a.txt');
  writeFileSync(file, 'base\n');
  const { terminalId } = (await rt.call('terminal.open', {})) as unknown as { terminalId: string };
  const command = 'echo CANARY > a.txt; sleep 100';
  expect(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 })).toMatchObject({ status: 'running' });
  await until('the command wrote', () => readFileSync(file, 'utf8').includes('CANARY'));
  state.refuse = 1; // one refusal: the queue's last try at close would take it
  await rt.dispose();
  rt = await startTestRuntime({ mode: 'embedded', dir: dir.path });
  const list = (await rt.call('review.list', {})) as unknown as { files: Array<{ path: string; diff: string }> };
  expect(readFileSync(file, 'utf8')).toContain('CANARY');
  expect(list.files.map((f) => f.path.split('/').pop())).toContain('a.txt');
}, 60_000);
