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
    expect(typedLines('rm -rf x', '\n')).toEqual({ completed: ['rm -rf x'], rest: '', uncertain: false });
    expect(typedLines('', 'ls\rgit st')).toEqual({ completed: ['ls'], rest: 'git st', uncertain: false });
    expect(typedLines('lx', '\x7f\x7fls\n')).toEqual({ completed: ['ls'], rest: '', uncertain: false });
    expect(typedLines('rm -rf /', '\x15ls\n')).toEqual({ completed: ['ls'], rest: '', uncertain: false });
    expect(typedLines('rm -rf /', '\x03')).toEqual({ completed: [], rest: '', uncertain: false });
  });
  it('marks a line edited with escape sequences (arrow keys) as uncertain', async () => {
    const { typedLines } = await import('../../../machines/permission/permission-input.ts');
    expect(typedLines('xm -rf x', '\x1b[H\x1b[3~r\n')).toMatchObject({ uncertain: true });
    expect(typedLines('', 'printf "a\tb"\n')).toMatchObject({ uncertain: false });
  });
});
