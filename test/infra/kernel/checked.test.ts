/**
 * @module
 * `parseUnlessChecked`: a reply or fact data that typed code marked (`checkedReply`, `checkedFact`) is taken
 * without a parse, anything else is parsed; with `parseChecked` a marked value is parsed too and refused
 * when its parse differs from it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkedReply, type TerminalId } from '../../../schemas/index.ts';
import { type ExecReply, TerminalExec } from '../../../schemas/terminal.ts';
import { parseUnlessChecked, PARSE_CHECKED_DEFAULT } from '../../../infra/kernel/checked.ts';

afterEach(() => vi.restoreAllMocks());

const reply = (): ExecReply => ({
  terminalId: 't-1' as TerminalId,
  commandId: 'c-1',
  status: 'exited',
  exitCode: 0,
  signal: null,
  durationMs: 2,
  output: 'hi\n',
  truncated: false,
  omittedBytes: 0,
  cursor: 40,
  cwd: '/w',
});

describe('parseUnlessChecked', () => {
  it('takes a checked reply as it is, without parsing it; parses an unmarked one', () => {
    const parse = vi.spyOn(TerminalExec.reply, 'safeParse');
    const r = checkedReply(TerminalExec, reply());
    expect(parseUnlessChecked(TerminalExec.reply, r, false)).toEqual({ success: true, data: r });
    expect(parse).not.toHaveBeenCalled();
    expect(parseUnlessChecked(TerminalExec.reply, reply(), false)).toMatchObject({ success: true });
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('refuses an unmarked value that does not parse, checked or not', () => {
    const bad = { ...reply(), status: 'done' };
    expect(parseUnlessChecked(TerminalExec.reply, bad, false)).toMatchObject({ success: false });
  });

  it('with parseChecked (on under vitest), refuses a marked value whose parse differs from it', () => {
    expect(PARSE_CHECKED_DEFAULT).toBe(true);
    const stray = checkedReply(TerminalExec, { ...reply(), stray: 1 } as ExecReply);
    expect(parseUnlessChecked(TerminalExec.reply, stray, true)).toMatchObject({
      success: false,
      message: expect.stringMatching(/marked checked, but its parse differs/),
    });
    expect(parseUnlessChecked(TerminalExec.reply, checkedReply(TerminalExec, reply()), true)).toMatchObject({
      success: true,
    });
  });
});
