/**
 * `skein edit apply --edits` given the wrong shape (README walk-through): `{"oldText":"b"}`, one edit not
 * wrapped in an array, said "The edits array is empty". Each wrong shape now says what is wrong and what is
 * expected, as a usage error.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EditCliIo, registerEditCommands } from '../../../infra/cli/edit-command.ts';

const SHAPE = 'Expected [{ "oldText": "...", "newText": "..." }, ...] (or { "edits": [...] }).';

describe('skein edit apply --edits - (wrong shapes)', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-edit-shape-'));
    file = join(dir, 'f.txt');
    writeFileSync(file, 'a\nb\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function apply(stdin: string) {
    const result = { code: undefined as number | undefined, out: '', err: '' };
    const io: EditCliIo = {
      stdout: (t) => void (result.out += t),
      stderr: (t) => void (result.err += t),
      readStdin: async () => stdin,
      exit: (c) => void (result.code = c),
    };
    const program = new Command('skein').exitOverride();
    registerEditCommands(program, io);
    await program.parseAsync(['edit', 'apply', file, '--edits', '-'], { from: 'user' });
    return result;
  }

  it.each([
    [
      'one edit object',
      '{"oldText":"b"}',
      `The edits in "-" are one edit object, not an array: wrap it in [ ]. ${SHAPE}`,
    ],
    [
      'an object without edits',
      '{"path":"f"}',
      `The edits in "-" are an object without "edits" (keys: path). ${SHAPE}`,
    ],
    ['a string', '"b"', `The edits in "-" are a string, not an array. ${SHAPE}`],
    [
      'an edit missing newText',
      '[{"oldText":"b"}]',
      `Edit 0 has no "newText" string. Give each edit an "oldText" and a "newText". ${SHAPE}`,
    ],
  ])('%s: exit 2, saying what is wrong and the shape expected', async (_name, stdin, message) => {
    expect(await apply(stdin)).toEqual({ code: 2, out: '', err: `${message}\n` });
    expect(readFileSync(file, 'utf8')).toBe('a\nb\n');
  });

  it('a right shape still applies', async () => {
    expect((await apply('[{"oldText":"b","newText":"c"}]')).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('a\nc\n');
  });
});
