/**
 * Input written into a terminal: which rule class applies (pure).
 */
import { classifyTerminalInput, completedLines } from '../../../machines/permission/permission-input.ts';

describe('classifyTerminalInput', () => {
  it.each([
    [{ kind: 'prompt' } as const, 'ls -la\r', { kind: 'command', lines: ['ls -la'] }],
    [
      { kind: 'prompt' } as const,
      'ls -l',
      { kind: 'granted', reason: 'no line is completed yet; the shell runs nothing' },
    ],
    [
      { kind: 'program', name: 'python3' } as const,
      'import os\n',
      { kind: 'interpreter', interpreter: 'python3', lines: ['import os'], alsoCommand: false },
    ],
    [
      { kind: 'program', name: '/usr/bin/python3.12' } as const,
      'x\n',
      { kind: 'interpreter', interpreter: 'python3.12', lines: ['x'], alsoCommand: false },
    ],
    [
      { kind: 'program', name: 'psql' } as const,
      'drop table x;\n',
      { kind: 'interpreter', interpreter: 'psql', lines: ['drop table x;'], alsoCommand: false },
    ],
    [
      { kind: 'program', name: 'bash' } as const,
      'rm -rf x\n',
      { kind: 'interpreter', interpreter: 'bash', lines: ['rm -rf x'], alsoCommand: true },
    ],
    [
      { kind: 'program', name: 'vim' } as const,
      ':wq\r',
      { kind: 'granted', reason: 'input to vim is allowed under the grant that started it' },
    ],
    [
      { kind: 'program', name: 'less' } as const,
      'q',
      { kind: 'granted', reason: 'input to less is allowed under the grant that started it' },
    ],
  ])('%j + %j', (fg, data, expected) => {
    expect(classifyTerminalInput(fg, data)).toEqual(expected);
  });

  it('splits completed lines on CR, LF and CRLF and drops the partial tail', () => {
    expect(completedLines('a\rb\r\nc\nd')).toEqual(['a', 'b', 'c']);
  });
});

describe('typedLines', () => {
  it('joins a line typed over writes and applies backspace, Ctrl-U and Ctrl-C', async () => {
    const { typedLines } = await import('../../../machines/permission/permission-input.ts');
    expect(typedLines('rm -rf x', '\n')).toEqual({ completed: ['rm -rf x'], rest: '' });
    expect(typedLines('', 'ls\rgit st')).toEqual({ completed: ['ls'], rest: 'git st' });
    expect(typedLines('lx', '\x7f\x7fls\n')).toEqual({ completed: ['ls'], rest: '' });
    expect(typedLines('lé', '\x15ls\n')).toEqual({ completed: ['ls'], rest: '' });
    expect(typedLines('é x', '\x7f\bls\n')).toEqual({ completed: ['éls'], rest: '' });
    expect(typedLines('rm -rf /', '\x15ls\n')).toEqual({ completed: ['ls'], rest: '' });
    expect(typedLines('rm -rf /', '\x03')).toEqual({ completed: [], rest: '' });
  });

  // Found live by a review (6 December): readline erases a character with the zero-width ones after it, so one
  // backspace after `X` and a combining accent took both, and bash ran `touch` where the model kept `toucXh` (and
  // `echo hi ; touch …` where it kept a comment). Widths come from the shell's locale: every erase of a character
  // outside ASCII is refused, the pending line kept.
  it.each([
    ['toucX\u0301\x7fh x\r', '', 'U+0301', 6],
    ['echo hi #\u0301\x7f; touch x\r', '', 'U+0301', 10],
    ['\x7f', 'lé', 'U+00E9', 0],
    ['a\bls\r', 'ls \u{1F600}', 'U+0061', -1],
    ['\x7f\x7fx\r', 'ab\u200d', 'U+200D', 0],
  ])('refuses an erase of a character outside ASCII: %j after %j', async (data, prior, named, at) => {
    const { typedLines } = await import('../../../machines/permission/permission-input.ts');
    const typed = typedLines(prior, data);
    if (at < 0) {
      expect(typed.refused).toBeUndefined();
      return;
    }
    expect(typed).toMatchObject({ completed: [], rest: prior });
    expect(typed.refused).toContain(`erases ${named} with the backspace at position ${at} (0-based)`);
    expect(typed.refused).toContain('send the line as it should run, or run the command with terminal.exec');
  });

  // Issue 11, hole 2: each of these keys makes readline run, join or keep text the line model never saw.
  it.each([
    ['\x1c', 'U+001C INFORMATION SEPARATOR FOUR (Ctrl-\\)'],
    ['\x17', 'U+0017 END OF TRANSMISSION BLOCK (Ctrl-W)'],
    ['\x04', 'U+0004 END OF TRANSMISSION (Ctrl-D)'],
    ['\x1a', 'U+001A SUBSTITUTE (Ctrl-Z)'],
    ['\x0f', 'U+000F SHIFT IN (Ctrl-O)'],
    ['\x16', 'U+0016 SYNCHRONOUS IDLE (Ctrl-V)'],
    ['\x01', 'U+0001 START OF HEADING (Ctrl-A)'],
    ['\x18', 'U+0018 CANCEL (Ctrl-X)'],
    ['\x1b', 'U+001B ESCAPE (Ctrl-[)'],
    ['\t', 'U+0009 CHARACTER TABULATION (Ctrl-I)'],
    ['\u009b', 'U+009B C1 CONTROL'],
  ])('refuses a write holding %j at once, naming it and its position', async (key, name) => {
    const { typedLines } = await import('../../../machines/permission/permission-input.ts');
    for (const data of [`echo x${key}Xtouch f\r`, `echo x${key}Xtouch f`]) {
      const typed = typedLines('ls', data);
      expect(typed.completed).toEqual([]);
      expect(typed.rest).toBe('ls');
      expect(typed.refused).toContain(`${name} at position 6`);
    }
  });

  it('refuses arrow keys, so a line edited out of sight is never judged as typed', async () => {
    const { typedLines } = await import('../../../machines/permission/permission-input.ts');
    expect(typedLines('xm -rf x', '\x1b[H\x1b[3~r\n').refused).toContain('U+001B ESCAPE');
    // Home then Ctrl-U kills nothing before the cursor: "echo hi; " would be typed in front of "touch f".
    expect(typedLines('touch f', '\x01\x15echo hi; \r').refused).toContain('U+0001 START OF HEADING');
    // Ctrl-V makes the next Ctrl-C a literal character, not a line abort.
    expect(typedLines('touch f #', '\x16\x03echo hi\r').refused).toContain('U+0016');
  });
});
