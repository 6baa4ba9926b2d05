/**
 * An edit takes what a running command changed in its file so far (the command's record, stored late here: a slow
 * broker), then reads the file to edit it. A command that changed the file in between (a line far from its earlier
 * ones) had that change folded into the edit's base as made outside: nobody's, so a reject-all left it on disk. The
 * commit now takes again right after its read. Real runtime, PTYs, files.
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
const EDIT = { path: 'a.txt', edits: [{ oldText: 'l1\n', newText: 'EDIT\n' }] };

/**
 * A command appends END, then (on `go`) changes l6 to C6 and waits for `stop`. `log.shell`: 'slow' stores the
 * first shell record 600 ms late and the later ones at once; 'slow-then-refuse' refuses the later ones.
 */
async function raceSetup() {
  const log = { shell: 'pass' as 'pass' | 'slow' | 'slow-then-refuse' | 'refuse', taking: false };
  const wrapLog = (inner: EventLog): EventLog =>
    overLog(inner, {
      async append(request: AppendRequest) {
        if (request.fact.type === 'action-log.shell.recorded') {
          if (log.shell === 'refuse') throw new Error('log down');
          if (log.shell !== 'pass') {
            log.taking = true;
            log.shell = log.shell === 'slow' ? 'pass' : 'refuse';
            await sleep(600);
          }
        }
        return inner.append(request);
      },
    });
  const run = await startTestRuntime({ mode: 'embedded', wrapLog });
  rt = run;
  const ws = run.workspace;
  writeFileSync(join(ws, 'a.txt'), BASE);
  const { terminalId } = ok(await run.call('terminal.open', {})) as unknown as { terminalId: string };
  ok(await run.call('terminal.exec', { terminalId, command: 'true' }));
  const command =
    'echo END >> a.txt; touch began; while [ ! -e go ]; do sleep 0.01; done; ' +
    "sed -i 's/^l6$/C6/' a.txt; touch changed; while [ ! -e stop ]; do sleep 0.02; done; touch done";
  ok(await run.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
  await until('began', () => existsSync(join(ws, 'began')));
  await sleep(300);
  /** Runs `edit` while the first take's record is stored late, the command changing l6 meanwhile. */
  const racing = async <T>(edit: () => Promise<T>, shell: 'slow' | 'slow-then-refuse'): Promise<T> => {
    log.shell = shell;
    const done = edit();
    await until('the take recording', () => log.taking);
    writeFileSync(join(ws, 'go'), '');
    await until('changed', () => existsSync(join(ws, 'changed')));
    return done;
  };
  /** Lets the command end; the review's listing once its record is in. */
  const ended = async () => {
    log.shell = 'pass';
    writeFileSync(join(ws, 'stop'), '');
    await until('done', () => existsSync(join(ws, 'done')));
    await until('the command recorded', async () =>
      JSON.stringify(await run.call('review.list', {})).includes('/done"'),
    );
    expect(run.host.digest()).toBe((await replayLog(run.log, AGGREGATES)).digest);
    return JSON.stringify(await run.call('review.list', {}));
  };
  return { rt: run, file: join(ws, 'a.txt'), racing, ended };
}

it("a command's change between an edit's take and its read stays the command's; a reject-all: the base", async () => {
  const { rt, file, racing, ended } = await raceSetup();
  ok(await racing(() => rt.call('file.edit', EDIT), 'slow'));
  expect(readFileSync(file, 'utf8')).toBe(`${BASE.replace('l1\n', 'EDIT\n').replace('l6\n', 'C6\n')}END\n`);
  const list = await ended();
  ok(await rt.call('review.reject', {}));
  expect({ listed: list.includes('+C6'), left: readFileSync(file, 'utf8') }).toEqual({ listed: true, left: BASE });
}, 60_000);

it('a streamed edit refused at that second take writes nothing and says to begin a new edit', async () => {
  const { rt, file, racing, ended } = await raceSetup();
  const { editId } = ok(await rt.call('edit.begin', { path: 'a.txt' })) as { editId: string };
  const chunk = JSON.stringify({ edits: [{ old_text: 'l1\n', new_text: 'EDIT\n' }] });
  ok(await rt.call('edit.input', { editId, chunk }));
  const first = await racing(() => rt.call('edit.finish', { editId }), 'slow-then-refuse');
  expect(first.ok ? '' : first.error.message).toContain('begin a new one with edit.begin');
  expect(readFileSync(file, 'utf8')).toBe(`${BASE.replace('l6\n', 'C6\n')}END\n`);
  const list = await ended();
  expect(list.includes('+C6')).toBe(true);
  ok(await rt.call('file.edit', EDIT));
  ok(await rt.call('review.reject', {}));
  expect(readFileSync(file, 'utf8')).toBe(BASE);
}, 60_000);
