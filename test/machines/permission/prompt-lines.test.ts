/**
 * What a write to a terminal amounts to for the policy (pure): at the prompt,
 * the line as typed over several writes; keys that make the line uncertain
 * judged as shell input; typed-ahead lines under a line-mode program judged as
 * shell input; and the per-terminal unfinished line kept only when told.
 */
import { judgeWrite, PromptLines } from '../../../machines/permission/prompt-lines.ts';

const prompt = { kind: 'prompt' } as const;

describe('judgeWrite', () => {
  it('judges a line completed across writes as the whole line, never the last write alone (canary)', () => {
    const first = judgeWrite('', 'echo CANARY; rm -rf ', prompt, true);
    expect(first).toEqual({ input: 'echo CANARY; rm -rf ', foreground: prompt, rest: 'echo CANARY; rm -rf ' });
    const second = judgeWrite(first.rest!, '/\r', prompt, true);
    expect(second.input).toBe('echo CANARY; rm -rf /\n');
    expect(second.rest).toBe('');
    expect(second.foreground).toEqual(prompt);
  });

  it('applies backspace and Ctrl-U to the pending line', () => {
    expect(judgeWrite('ls', '\x7f\x7fcat x\r', prompt, true).input).toBe('cat x\n');
    expect(judgeWrite('sudo rm', '\x15git status\r', prompt, true).input).toBe('git status\n');
  });

  // Stricter since issue 11: a key the line model cannot follow (arrows move the cursor) refuses the write at
  // once, naming it; the pending line stays as it was, since nothing reached the shell.
  it('refuses a line edited with escape sequences, naming the key', () => {
    const judged = judgeWrite('git status', '\x1b[D\x1b[Drm -rf /\r', prompt, true);
    expect(judged.refused).toContain('U+001B ESCAPE (Ctrl-[) at position 0');
    expect(judged.rest).toBe('git status');
  });

  it('judges lines typed ahead under a line-mode program as shell input; a key-reading program keeps its grant', () => {
    const cat = { kind: 'program', name: 'cat' } as const;
    expect(judgeWrite('', 'rm -rf /\n', cat, true)).toEqual({
      input: 'rm -rf /\n',
      foreground: { kind: 'program', name: 'bash' },
      rest: '',
    });
    // Typed without Enter, then Enter: judged whole (the line was judged empty, and ran).
    const sleep = { kind: 'program', name: 'sleep' } as const;
    const start = judgeWrite('', 'touch PWNED', sleep, true);
    expect(start).toEqual({ input: 'touch PWNED', foreground: sleep, rest: 'touch PWNED' });
    expect(judgeWrite(start.rest!, '\r', sleep, true)).toEqual({
      input: 'touch PWNED\r',
      foreground: { kind: 'program', name: 'bash' },
      rest: '',
    });
    // Then a Ctrl-D to an interpreter on that line is no end of input: it would send the line.
    const python = { kind: 'program', name: 'python3' } as const;
    expect(judgeWrite(start.rest!, '\x04', python, true).refused).toContain('Ctrl-D');
    const vim = { kind: 'program', name: 'vim' } as const;
    expect(judgeWrite('', ':wq\r', vim, false)).toEqual({ input: ':wq\r', foreground: vim, rest: undefined });
    expect(judgeWrite('', 'x', undefined, true)).toEqual({ input: 'x', foreground: undefined, rest: undefined });
  });
});

describe('judgeWrite under an interpreter or a shell', () => {
  it('carries the unfinished line and judges it with what completes it (canary)', () => {
    const python = { kind: 'program', name: 'python3.11' } as const;
    const first = judgeWrite('', 'print(1)\n__import__("os").sys', python, false);
    expect(first).toEqual({
      input: 'print(1)\n__import__("os").sys',
      foreground: python,
      rest: '__import__("os").sys',
    });
    const second = judgeWrite(first.rest!, 'tem("touch CANARY")\n', python, false);
    expect(second.input).toBe('__import__("os").system("touch CANARY")\n');
    expect(second.rest).toBe('');
  });

  it('does the same under a nested shell, whose lines are commands too', () => {
    const bash = { kind: 'program', name: 'bash' } as const;
    const first = judgeWrite('', 'echo hi\nrm -rf ~/', bash, true);
    expect(first.rest).toBe('rm -rf ~/');
    expect(judgeWrite(first.rest!, '\r', bash, true)).toEqual({ input: 'rm -rf ~/\n', foreground: bash, rest: '' });
  });

  it("replays the interpreter's line editing: keys it cannot follow refuse the write, erasing ones apply", () => {
    const python = { kind: 'program', name: 'python3' } as const;
    // Ctrl-A (start of line) and Ctrl-D (delete the character there) turned a comment into code (canary).
    const hidden = judgeWrite('', '# x: __import__("os").system("touch CANARY")\x01\x04\x04\r', python, false);
    expect(hidden.refused).toContain("U+0001 START OF HEADING (Ctrl-A) at position 44 (0-based), a key python3's");
    expect(hidden.rest).toBe('');
    for (const key of ['\x1b[D', '\t', '\x17', '\x0b', '\x19', '\x14']) {
      expect(judgeWrite('', `print(1)${key}\r`, python, false).refused).toBeDefined();
    }
    // Backspace and Ctrl-U are followed: what is judged is the line the editor submits.
    expect(judgeWrite('', 'print(2)\x7f\x7f3)\r', python, false).input).toBe('print(3)\n');
    expect(judgeWrite('', 'import os\x15print(4)\r', python, false).input).toBe('print(4)\n');
    // Ctrl-D ends the program's input on an empty line, as the write's last key; elsewhere it is refused.
    expect(judgeWrite('', '\x04', python, false)).toEqual({ input: '\x04', foreground: python, rest: '' });
    expect(judgeWrite('', 'print(5)\r\x04', python, false).input).toBe('print(5)\n');
    expect(judgeWrite('', 'os.sys\x04tem("x")\r', python, false).refused).toContain('Ctrl-D');
    expect(judgeWrite('', '\x04rm -rf ~\r', python, false).refused).toContain('Ctrl-D');
    expect(judgeWrite('', '\x04', { kind: 'prompt' }, true).refused).toContain('Ctrl-D');
  });
});

describe('PromptLines', () => {
  it('keeps what is unfinished per terminal, and forgets it on settle(undefined) or clear', () => {
    const lines = new PromptLines();
    lines.settle('t-1', 'rm -r');
    lines.settle('t-2', 'ls');
    expect(lines.pending('t-1')).toBe('rm -r');
    lines.clear('t-1');
    expect(lines.pending('t-1')).toBe('');
    lines.settle('t-2', undefined);
    expect(lines.pending('t-2')).toBe('');
  });

  it('carries a line typed under a program to that program, not to the prompt (the drain discarded it there)', () => {
    const lines = new PromptLines();
    const prompt = { kind: 'prompt' } as const;
    const cat = { kind: 'program', name: 'cat' } as const;
    lines.settle('t-1', '\x04touch x', cat);
    expect(lines.pending('t-1', cat)).toBe('\x04touch x');
    expect(lines.pending('t-1', { kind: 'program', name: 'python3' })).toBe('\x04touch x');
    expect(lines.pending('t-1', prompt)).toBe('');
    lines.settle('t-1', 'rm -r', prompt);
    expect(lines.pending('t-1', prompt)).toBe('rm -r');
  });
});
