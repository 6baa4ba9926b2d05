/**
 * An edit takes what a running command changed in its file so far (the command's record, stored late here: a slow
 * broker), then reads the file to edit it. A command that changed the file in between (a line far from its earlier
 * ones) had that change folded into the edit's base as made outside: nobody's, so a reject-all left it on disk. Real
 * runtime, PTYs, files.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
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
const BASE = Array.from({ length: 12 }, (_, i) => `l${i + 1}\n`).join('');

it("a command's change between an edit's take and its read stays the command's; a reject-all: the base", async () => {
  const slow = { ms: 0 };
  const taking = { now: false };
  const wrapLog = (log: EventLog): EventLog =>
    overLog(log, {
      async append(request: AppendRequest) {
        if (slow.ms > 0 && request.fact.type === 'action-log.shell.recorded') {
          taking.now = true;
          await sleep(slow.ms);
        }
        return log.append(request);
      },
    });
  rt = await startTestRuntime({ mode: 'embedded', wrapLog });
  const ws = rt.workspace;
  const file = join(ws, 'a.txt');
  writeFileSync(file, BASE);
  const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
  ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
  const command =
    'echo END >> a.txt; touch began; while [ ! -e go ]; do sleep 0.01; done; ' +
    "sed -i 's/^l6$/C6/' a.txt; touch changed; while [ ! -e stop ]; do sleep 0.02; done; touch done";
  ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
  await until('began', () => existsSync(join(ws, 'began')));
  await sleep(300);
  slow.ms = 600;
  // The edit takes END (its record stored 600 ms late); meanwhile the command changes l6.
  const edit = rt.call('file.edit', { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] });
  await until('the take recording', () => taking.now);
  writeFileSync(join(ws, 'go'), '');
  await until('changed', () => existsSync(join(ws, 'changed')));
  ok(await edit);
  slow.ms = 0;
  expect(readFileSync(file, 'utf8')).toBe(`${BASE.replace('l1\n', 'EDIT\n').replace('l6\n', 'C6\n')}END\n`);
  writeFileSync(join(ws, 'stop'), '');
  await until('done', () => existsSync(join(ws, 'done')));
  await until('the command recorded', async () => {
    const list = JSON.stringify(await rt!.call('review.list', {}));
    return list.includes('/done"');
  });
  expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
  const list = JSON.stringify(await rt.call('review.list', {}));
  ok(await rt.call('review.reject', {}));
  expect({ listed: list.includes('+C6'), left: readFileSync(file, 'utf8') }).toEqual({ listed: true, left: BASE });
}, 60_000);
