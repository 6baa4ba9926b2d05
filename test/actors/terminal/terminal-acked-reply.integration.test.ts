/**
 * An exec's reply waits for the appends of every fact the command caused, on real PTYs: the appends of
 * terminal.command.finished and of the output tail (asked for in the same turn, so they leave in one
 * socket write) are held here as a slow log would hold their acks, and the exec must not answer before both
 * are released. Guards the exec round trip's pipelining (issue 15) against a reply that overtakes an ack.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../infra/kernel/log.ts';
import { TerminalManager } from '../../../actors/terminal/terminal-manager.ts';

type Held = { type: string; release: () => void };

/** A manager whose appends of `holding` types resolve only when the test releases them. */
function heldManager(holding: readonly string[]) {
  const held: Held[] = [];
  const appended: string[] = [];
  let holdingOn = true;
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'skein-acked-')));
  const append = (fact: { type: string }) => {
    if (!holdingOn || !holding.includes(fact.type)) return Promise.resolve(void appended.push(fact.type));
    return new Promise<void>((resolve) =>
      held.push({ type: fact.type, release: () => resolve(void appended.push(fact.type)) }),
    );
  };
  const manager = new TerminalManager({
    config: { coalesceMs: 60_000 },
    log: createLogger({ level: 'silent' }),
    emit: append,
    emitOutput: append,
  });
  return {
    manager,
    held,
    appended,
    workspace,
    async dispose() {
      holdingOn = false;
      for (const h of held) h.release();
      await manager.shutdown();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

const A = 'a1';
let m: ReturnType<typeof heldManager>;
afterEach(async () => {
  await m.dispose();
});

describe('TerminalManager exec reply and acks', () => {
  it('replies only after the finish and the output tail are both acked, whichever is acked last', async () => {
    m = heldManager(['terminal.command.finished', 'terminal.output.received']);
    const { terminalId } = await m.manager.open(A, { cwd: m.workspace }, { workspace: m.workspace });
    for (const last of ['terminal.command.finished', 'terminal.output.received']) {
      m.held.length = 0;
      let replied = false;
      const reply = m.manager.exec(A, { terminalId, command: 'echo acked' }).then((r) => {
        replied = true;
        return r;
      });
      // Both appends are asked for at the end mark (the output tail in the same turn as the finish).
      await vi.waitFor(
        () =>
          expect(m.held.map((h) => h.type).sort()).toEqual(['terminal.command.finished', 'terminal.output.received']),
        10_000,
      );
      for (const h of m.held.filter((x) => x.type !== last)) h.release();
      await new Promise((r) => setTimeout(r, 100));
      expect(replied).toBe(false);
      m.held.find((h) => h.type === last)!.release();
      expect(await reply).toMatchObject({ status: 'exited', exitCode: 0, output: 'acked\n' });
      expect(m.appended.slice(-1)).toEqual([last]);
    }
  });

  it('does not reply before the start of the command is acked, even when the command ends first', async () => {
    m = heldManager(['terminal.command.started']);
    const { terminalId } = await m.manager.open(A, { cwd: m.workspace }, { workspace: m.workspace });
    let replied = false;
    const reply = m.manager.exec(A, { terminalId, command: 'true' }).then((r) => {
      replied = true;
      return r;
    });
    await vi.waitFor(() => expect(m.appended).toContain('terminal.command.finished'), 10_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(replied).toBe(false);
    m.held[0]!.release();
    expect(await reply).toMatchObject({ status: 'exited', exitCode: 0 });
  });
});
