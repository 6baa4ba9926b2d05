/**
 * A terminal closed while its `terminal.opened` is still being appended (its agent finished as it opened): the
 * close waits for that append and appends `terminal.closed` after it. Before, the close read "not opened yet",
 * appended nothing, and the log kept a terminal open for good (the hostile finish-race test caught it, ~1 run
 * in 3 on a loaded machine). Here the append is held until the close has begun, so the order is certain.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerminalManager } from '../../../actors/terminal/terminal-manager.ts';
import { createLogger } from '../../../infra/kernel/log.ts';
import type { RecordedFact } from '../../support/terminal-harness.ts';

describe('a terminal closed while it opens', () => {
  it('is closed in the log after its terminal.opened, which the close waited for', async () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'skein-open-race-')));
    const facts: RecordedFact[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let asked: () => void = () => undefined;
    const openedAsked = new Promise<void>((r) => (asked = r));
    const manager = new TerminalManager({
      config: {},
      log: createLogger({ level: 'silent' }),
      emit: async (fact) => {
        if (fact.type === 'terminal.opened') {
          asked();
          await held;
        }
        facts.push(fact);
      },
      emitOutput: async () => undefined,
    });
    try {
      const opening = manager.open('a1', { cwd: workspace }, { workspace });
      await openedAsked;
      const closing = manager.closeAllForAgent('a1');
      // The close is under way (its shell is being stopped) while terminal.opened is still in flight.
      await new Promise((r) => setTimeout(r, 200));
      release();
      const opened = await opening;
      expect(await closing).toEqual([opened.terminalId]);
      expect(facts.filter((f) => f.data?.terminalId === opened.terminalId).map((f) => f.type)).toEqual([
        'terminal.opened',
        'terminal.closed',
      ]);
    } finally {
      release();
      await manager.shutdown();
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});
