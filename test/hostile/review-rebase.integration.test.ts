/**
 * After a reject or undo-reject, what a running command started from is the review's change carried to it
 * (`actors/review/mark-rebase.ts`): lines on disk before the command (a person's own edit, another agent's) stay out
 * of its change, and lines it wrote stay in. A first design set every mark to what the log holds, which charged a
 * person's line to the command, and a reject-all then deleted it (a review's probe). And an undo-reject restored
 * the log's entry as it was before the reject over a change recorded since (an agent rejecting its own work,
 * recording a payload, then undoing): the payload stayed on disk, out of review (older; the same review). A first
 * fix charged a person's lines to the agent (the fourth review; its case is the last here). Real runtime, PTYs,
 * files.
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
const BASE = Array.from({ length: 12 }, (_, i) => `l${i + 1}\n`).join('');
const WAIT = 'touch began; while [ ! -e go ]; do sleep 0.05; done; echo CMD >> a.txt; touch done';
const edit = (oldText: string, newText: string) => ({ path: 'a.txt', edits: [{ oldText, newText }] });
const done = () => until('done', () => existsSync(join(rt!.workspace, 'done')));
const began = () => until('began', () => existsSync(join(rt!.workspace, 'began')));
/** Lets the waiting command go on to its end, and waits for its CMD line in review. */
async function commandEnds() {
  writeFileSync(join(rt!.workspace, 'go'), '');
  await done();
  await until('the command’s line in review', async () =>
    JSON.stringify(await rt!.call('review.list', {})).includes('+CMD'),
  );
}

describe('a reject while a command runs', () => {
  for (const running of [true, false]) {
    it(`a person's own line after the agent's edit survives the reject-all (command running: ${running})`, async () => {
      rt = await startTestRuntime({ mode: 'embedded' });
      const file = join(rt.workspace, 'a.txt');
      writeFileSync(file, BASE);
      const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
      ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
      ok(await rt.call('file.edit', edit('l1\n', 'EDIT\n')));
      // The person edits the file themself, no command running: nobody's change.
      writeFileSync(file, `${readFileSync(file, 'utf8')}PERSON\n`);
      await sleep(300);
      if (running) {
        ok(await rt.call('terminal.exec', { terminalId, command: WAIT, yieldMs: 100 }));
        await began();
      }
      ok(await rt.call('review.reject', { paths: [file] }));
      expect(readFileSync(file, 'utf8')).toBe(`${BASE}PERSON\n`);
      if (running) {
        await commandEnds();
      }
      expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
      const list = JSON.stringify(await rt.call('review.list', {}));
      ok(await rt.call('review.reject', {}));
      expect({ left: readFileSync(file, 'utf8'), charged: list.includes('+PERSON') }).toEqual({
        left: `${BASE}PERSON\n`,
        charged: false,
      });
    }, 60_000);
  }

  for (const other of ['b', 'main'] as const) {
    it(`a rejects its line while its command runs; ${other}'s later line stays ${other}'s`, async () => {
      rt = await startTestRuntime({ mode: 'embedded' });
      const file = join(rt.workspace, 'a.txt');
      writeFileSync(file, BASE);
      const a = { agentId: 'a' };
      ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
      ok(await rt.call('agent.spawn', { label: 'b', agentId: 'b' }));
      const { terminalId } = ok(await rt.call('terminal.open', {}, a)) as unknown as { terminalId: string };
      ok(await rt.call('terminal.exec', { terminalId, command: 'true' }, a));
      ok(await rt.call('file.edit', edit('l1\n', 'A1\n'), a));
      ok(await rt.call('file.edit', edit('l12\n', 'B12\n'), other === 'main' ? {} : { agentId: other }));
      ok(await rt.call('terminal.exec', { terminalId, command: WAIT, yieldMs: 100 }, a));
      await began();
      ok(await rt.call('review.reject', { paths: [file] }, a));
      const afterReject = readFileSync(file, 'utf8');
      writeFileSync(join(rt.workspace, 'go'), '');
      await done();
      await until('the command’s line in review', async () =>
        JSON.stringify(await rt!.call('review.list', {}, a)).includes('+CMD'),
      );
      expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
      const list = JSON.stringify(await rt.call('review.list', {}, a));
      ok(await rt.call('review.reject', {}, a));
      const kept = BASE.replace('l12', 'B12');
      expect({ afterReject, charged: list.includes('+B12'), left: readFileSync(file, 'utf8') }).toEqual({
        afterReject: kept,
        charged: false,
        left: kept,
      });
    }, 60_000);
  }
});

/** The agent edits l1 and l12, then a person changes l11 (beside A12). */
async function agentLinesBesidePerson(): Promise<{ rt: TestRuntime; file: string }> {
  const run = await startTestRuntime({ mode: 'embedded' });
  rt = run;
  const file = join(run.workspace, 'a.txt');
  writeFileSync(file, BASE);
  ok(await run.call('file.edit', edit('l1\n', 'A1\n')));
  ok(await run.call('file.edit', edit('l12\n', 'A12\n')));
  writeFileSync(file, readFileSync(file, 'utf8').replace('l11\n', 'P11\n'));
  await sleep(300);
  return { rt: run, file };
}

describe('undo-reject after a reject that left a hunk in conflict', () => {
  it('a person’s line beside the conflicting hunk is not charged to the agent, and survives', async () => {
    const { rt, file } = await agentLinesBesidePerson();
    const rejected = ok(await rt.call('review.reject', {})) as { conflicts?: unknown[] };
    expect(rejected.conflicts).toHaveLength(1);
    ok(await rt.call('review.undo-reject', {}));
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    const list = JSON.stringify(await rt.call('review.list', {}));
    ok(await rt.call('review.reject', {}));
    const left = BASE.replace('l11\n', 'P11\n').replace('l12\n', 'A12\n');
    expect({ charged: list.includes('+P11'), left: readFileSync(file, 'utf8') }).toEqual({ charged: false, left });
  }, 60_000);

  it('the conflicting hunk accepted before the undo is not listed again', async () => {
    const { rt, file } = await agentLinesBesidePerson();
    ok(await rt.call('review.reject', {}));
    ok(await rt.call('review.accept', {}));
    ok(await rt.call('review.undo-reject', {}));
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    const list = JSON.stringify(await rt.call('review.list', {}));
    expect([list.includes('+A1'), list.includes('+A12')]).toEqual([true, false]);
    ok(await rt.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe(BASE.replace('l11\n', 'P11\n').replace('l12\n', 'A12\n'));
  }, 60_000);
});

describe("a person's line right beside the agent's, then another edit by the agent", () => {
  it('is not charged to the agent (folded into the base by line position), and survives a reject-all', async () => {
    const { rt, file } = await agentLinesBesidePerson();
    ok(await rt.call('file.edit', edit('l5\n', 'A5\n')));
    const list = JSON.stringify(await rt.call('review.list', {}));
    expect([list.includes('+A5'), list.includes('+A12'), list.includes('+P11')]).toEqual([true, true, false]);
    ok(await rt.call('review.reject', {}));
    expect(readFileSync(file, 'utf8')).toBe(BASE.replace('l11\n', 'P11\n'));
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
  }, 60_000);
});

describe("a reject of the agent's line while a command that already wrote the file runs", () => {
  /**
   * The agent edits (`agent`), a person changes `person[0]` to `person[1]`, a command appends CMD and waits; the
   * agent's line is rejected while it runs. The command's line stays in review, the person's is not charged to it.
   */
  async function rejectBesideCommand(agent: [string, string], person: [string, string]) {
    rt = await startTestRuntime({ mode: 'embedded' });
    const file = join(rt.workspace, 'a.txt');
    writeFileSync(file, BASE);
    const { terminalId } = ok(await rt.call('terminal.open', {})) as unknown as { terminalId: string };
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    ok(await rt.call('file.edit', edit(...agent)));
    writeFileSync(file, readFileSync(file, 'utf8').replace(...person)); // the person's, before the command
    await sleep(300);
    const command = 'echo CMD >> a.txt; touch began; while [ ! -e go ]; do sleep 0.05; done; touch done';
    ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 100 }));
    await began();
    ok(await rt.call('review.reject', { paths: [file] }));
    const kept = BASE.replace(...person);
    expect(readFileSync(file, 'utf8')).toBe(`${kept}CMD\n`);
    await commandEnds();
    expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
    const list = JSON.stringify(await rt.call('review.list', {}));
    ok(await rt.call('review.reject', {}));
    const charged = list.includes(`+${person[1].trim()}`);
    expect({ charged, left: readFileSync(file, 'utf8') }).toEqual({ charged: false, left: kept });
  }

  it(
    "its line in the hunk's context: the command's line stays in review; the person's is not charged",
    () => rejectBesideCommand(['l12\n', 'A12\n'], ['l3\n', 'P3\n']),
    60_000,
  );

  it(
    "a line put back right beside the command's: the person's line is not charged to the command",
    () => rejectBesideCommand(['l11\nl12\n', 'l11\n'], ['l5\n', 'B5\n']),
    60_000,
  );
});

describe('undo-reject after a later recorded change of the same file', () => {
  for (const by of ['command', 'edit'] as const) {
    for (const reviewer of ['main', 'kid'] as const) {
      it(`${reviewer} rejects all, kid's ${by} records a payload, undo-reject: still in review, undone`, async () => {
        rt = await startTestRuntime({ mode: 'embedded' });
        const file = join(rt.workspace, 'a.txt');
        writeFileSync(file, BASE);
        ok(await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' }));
        const kid = { agentId: 'kid' };
        const { terminalId } = ok(await rt.call('terminal.open', {}, kid)) as unknown as { terminalId: string };
        ok(await rt.call('terminal.exec', { terminalId, command: 'true' }, kid));
        ok(await rt.call('file.edit', edit('l1\n', 'EDIT\n'), kid));
        ok(await rt.call('review.reject', {}, { agentId: reviewer }));
        if (by === 'command') {
          ok(await rt.call('terminal.exec', { terminalId, command: 'echo PAYLOAD >> a.txt' }, kid));
        } else ok(await rt.call('file.edit', edit('l12\n', 'l12\nPAYLOAD\n'), kid));
        const listed = async () => JSON.stringify(await rt!.call('review.list', {})).includes('+PAYLOAD');
        await until('the payload in review', listed);
        ok(await rt.call('review.undo-reject', {}, { agentId: reviewer }));
        expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
        expect(await listed()).toBe(true);
        ok(await rt.call('review.reject', {}));
        expect(readFileSync(file, 'utf8')).toBe(BASE);
      }, 60_000);
    }
  }
});

describe("undo-reject after a change recorded in another agent's log only", () => {
  for (const [payer, by] of [
    ['main', 'edit'],
    ['main', 'command'],
    ['sib', 'edit'],
  ] as const) {
    it(`kid rejects all, ${payer}'s ${by} records a payload, kid undoes: still in review at main, undone`, async () => {
      rt = await startTestRuntime({ mode: 'embedded' });
      const file = join(rt.workspace, 'a.txt');
      writeFileSync(file, BASE);
      for (const id of ['kid', 'sib']) ok(await rt.call('agent.spawn', { label: id, agentId: id }));
      const as = { agentId: payer };
      const { terminalId } = ok(await rt.call('terminal.open', {}, as)) as unknown as { terminalId: string };
      ok(await rt.call('terminal.exec', { terminalId, command: 'true' }, as));
      ok(await rt.call('file.edit', edit('l1\n', 'EDIT\n'), { agentId: 'kid' }));
      ok(await rt.call('review.reject', {}, { agentId: 'kid' }));
      if (by === 'command') {
        ok(await rt.call('terminal.exec', { terminalId, command: 'echo PAYLOAD >> a.txt' }, as));
      } else ok(await rt.call('file.edit', edit('l12\n', 'l12\nPAYLOAD\n'), as));
      const listed = async () => JSON.stringify(await rt!.call('review.list', {})).includes('+PAYLOAD');
      await until('the payload in review', listed);
      ok(await rt.call('review.undo-reject', {}, { agentId: 'kid' }));
      expect(readFileSync(file, 'utf8')).toBe(`${BASE.replace('l1\n', 'EDIT\n')}PAYLOAD\n`);
      expect(rt.host.digest()).toBe((await replayLog(rt.log, AGGREGATES)).digest);
      expect(await listed()).toBe(true);
      ok(await rt.call('review.reject', {}));
      expect(readFileSync(file, 'utf8')).toBe(BASE);
    }, 60_000);
  }
});
