/**
 * @module
 * The fact writer and `checkedFact` (issue 15): a fact built by typed code on a hot path is appended as
 * built, without a zod parse; any other fact is still parsed and refused when invalid; with `parseChecked`
 * (on under vitest) a checked fact is parsed too and refused when its parse would store something else.
 * Over the real JSONL event log in a temp dir.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { checkedFact, ErrorCode, type AgentId, type TerminalId } from '../../../schemas/index.ts';
import { TerminalCommandFinished } from '../../../schemas/terminal-events.ts';
import { Fold } from '../../../machines/kernel/projection.ts';
import { terminalAggregateDef } from '../../../machines/terminal/terminal.ts';
import { FactWriter } from '../../../infra/kernel/fact-writer.ts';
import { PARSE_CHECKED_DEFAULT } from '../../../infra/kernel/checked.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';

const dir = tempDir('skein-fact-writer-checked-');
afterAll(() => dir.dispose());
afterEach(() => vi.restoreAllMocks());
let n = 0;

async function writer(parseChecked: boolean | undefined) {
  const log = await JsonlLog.open({ dir: `${dir.path}/${++n}` });
  const fold = new Fold([terminalAggregateDef]);
  const { logger } = memoryLogger('silent');
  const w = new FactWriter({ log, fold, logger, hostId: 'h1', retries: 0, retryDelayMs: 1, parseChecked });
  return { w, log };
}

const main = { agentId: 'main' as AgentId };
const finished = (extra: Record<string, unknown> = {}) => ({
  terminalId: 't-1' as TerminalId,
  commandId: 'c-1',
  exitCode: 0,
  signal: null,
  durationMs: 3,
  cwd: '/w',
  timedOut: false,
  outputBytes: 0,
  cursor: 10,
  ...extra,
});

describe('FactWriter and checkedFact', () => {
  it('appends a checked fact as built, without parsing it; an unchecked one is parsed', async () => {
    const { w } = await writer(false);
    const parse = vi.spyOn(TerminalCommandFinished.data, 'safeParse');
    const data = finished();
    const stored = await w.write(checkedFact(TerminalCommandFinished, data), main);
    expect(parse).not.toHaveBeenCalled();
    expect(stored.data).toBe(data);
    await w.write({ type: 'terminal.command.finished', data: finished({ commandId: 'c-2' }) }, main);
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('still refuses an unchecked fact with invalid data, and appends nothing', async () => {
    const { w, log } = await writer(false);
    const bad = { type: 'terminal.command.finished', data: finished({ exitCode: 'zero' }) };
    await expect(w.write(bad, main)).rejects.toMatchObject({ code: ErrorCode.Internal });
    expect(await log.lastSeq()).toBe(0);
  });

  it('with parseChecked, refuses a checked fact its parse would change or refuse, naming it', async () => {
    const { w, log } = await writer(true);
    const extra = checkedFact(TerminalCommandFinished, finished({ stray: 1 }));
    await expect(w.write(extra, main)).rejects.toThrow(
      /'terminal.command.finished' has invalid data: it was marked checked, but its parse differs/,
    );
    const invalid = checkedFact(TerminalCommandFinished, finished({ exitCode: 1.5 }));
    await expect(w.write(invalid, main)).rejects.toThrow(/has invalid data/);
    expect(await log.lastSeq()).toBe(0);
    await w.write(checkedFact(TerminalCommandFinished, finished()), main);
    expect(await log.lastSeq()).toBe(1);
  });

  it('without the option, follows the default: on under vitest, so a checked fact is parsed', async () => {
    expect(PARSE_CHECKED_DEFAULT).toBe(true);
    const { w, log } = await writer(undefined);
    const extra = checkedFact(TerminalCommandFinished, finished({ stray: 1 }));
    await expect(w.write(extra, main)).rejects.toThrow(/it was marked checked, but its parse differs/);
    expect(await log.lastSeq()).toBe(0);
  });
});
