/**
 * A command body's keys that are not envelope fields are refused, named, with where a command's fields go: a
 * misspelt `waitMs` was dropped (an ask then outlived the caller that had given up on it), and a command's fields
 * sent without `data` failed only on the fields `data` then lacked.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode, InvalidMessageError } from '../../../schemas/index.ts';
import { decodeCommand, encode } from '../../../infra/transport/codec.ts';

const SUBJECT = 'skein.cmd.main.agent.spawn';
const bytes = (text: string) => new TextEncoder().encode(text);

function failure(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidMessageError);
    return { code: (err as InvalidMessageError).code, message: (err as Error).message };
  }
  throw new Error('expected the decoder to throw');
}

describe('decodeCommand, envelope keys', () => {
  it("refuses a key the envelope does not have, naming it: a misspelt waitMs, a command's fields sent bare", () => {
    // A misspelt waitMs was dropped, and an ask then outlived the caller that had given up on it.
    const typo = failure(() => decodeCommand(SUBJECT, bytes('{"waitMS":5000,"data":{"label":"a"}}'), 1024));
    expect(typo).toMatchObject({ code: ErrorCode.InvalidMessage });
    expect(typo.message).toContain("'waitMS': not a field of a command's envelope (id, type, agentId, causationId");
    // Fields sent without `data` failed only on what data then lacked; now they are named, with where they go.
    const exec = 'skein.cmd.main.terminal.exec';
    const bare = failure(() => decodeCommand(exec, bytes('{"terminalId":"t-1","command":"ls"}'), 1024));
    expect(bare.message).toContain(`'terminalId', 'command': not fields of a command's envelope`);
    expect(bare.message).toContain('go inside data, e.g. {"data": {"terminalId": …}}');
    // Many, or long and odd, keys are named cut, and counted.
    const keys = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`${'k'.repeat(60)}\n${i}`, 1]));
    const many = failure(() => decodeCommand(SUBJECT, encode(keys), 4096)).message;
    expect(many).toContain(`'${'k'.repeat(40)}…'`);
    expect(many).toContain('and 3 more');
    expect(many).not.toContain('\n');
  });
});
