/**
 * @module
 * Which rule class applies to data written into a terminal (`terminal.write`),
 * given what the terminal is running:
 * - the shell at its prompt, and the data completes a line → the line is a
 *   `terminal` command (full shell check);
 * - the shell at its prompt, no line completed yet → buffered, nothing runs:
 *   allowed under the terminal's grant (the completed line is checked later);
 * - a running interpreter (python, node, bash, psql, …) → `terminal_input`
 *   class (default confirm); for a shell interpreter the completed lines are
 *   also checked as commands, most restrictive wins;
 * - any other program (vim, less, htop, …) → allowed under the grant that started it.
 * Pure.
 */
import { describeChar, firstControl } from './permission-control.ts';

export type TerminalForeground = { kind: 'prompt' } | { kind: 'program'; name: string };

export type InputClass =
  | { kind: 'command'; lines: string[] }
  | { kind: 'interpreter'; interpreter: string; lines: string[]; alsoCommand: boolean }
  | { kind: 'granted'; reason: string };

/** Programs whose input is code (checked under `terminal_input`). */
export const INTERPRETERS = new Set([
  'python',
  'python2',
  'python3',
  'ipython',
  'node',
  'deno',
  'bun',
  'ruby',
  'irb',
  'perl',
  'php',
  'lua',
  'luajit',
  'R',
  'julia',
  'ghci',
  'scala',
  'sbt',
  'clojure',
  'lein',
  'erl',
  'iex',
  'elixir',
  'tclsh',
  'wish',
  'gdb',
  'lldb',
  'psql',
  'mysql',
  'mariadb',
  'sqlite3',
  'sqlcmd',
  'redis-cli',
  'mongo',
  'mongosh',
  'cqlsh',
  'ssh',
  'telnet',
  'nc',
  'ftp',
  'sftp',
  'docker',
  'kubectl',
  'powershell',
  'pwsh',
  'osascript',
  'expect',
  'awk',
  'gawk',
  'bc',
  'dc',
]);
/** Shells: their input lines are also shell commands. */
export const INPUT_SHELLS = new Set([
  'bash',
  'sh',
  'zsh',
  'dash',
  'ksh',
  'fish',
  'ash',
  'mksh',
  'tcsh',
  'csh',
  'su',
  'sudo',
]);

/** Classifies one write; `data` is what the agent wrote (may hold several lines). */
export function classifyTerminalInput(foreground: TerminalForeground, data: string): InputClass {
  const lines = completedLines(data);
  if (foreground.kind === 'prompt') {
    return lines.length > 0
      ? { kind: 'command', lines }
      : { kind: 'granted', reason: 'no line is completed yet; the shell runs nothing' };
  }
  const name = baseName(foreground.name);
  const versionless = name.replace(/[\d.]+$/, '');
  if (INPUT_SHELLS.has(name) || INPUT_SHELLS.has(versionless)) {
    return { kind: 'interpreter', interpreter: name, lines, alsoCommand: true };
  }
  if (INTERPRETERS.has(name) || INTERPRETERS.has(versionless)) {
    return { kind: 'interpreter', interpreter: name, lines, alsoCommand: false };
  }
  return { kind: 'granted', reason: `input to ${name} is allowed under the grant that started it` };
}

/**
 * Whether the program `name` keeps a line being typed until Enter and then runs it: an interpreter or a shell
 * (its input is judged by lines, and an unfinished line is carried to the next write: `judgeWrite`).
 */
export function readsLines(name: string): boolean {
  const base = baseName(name);
  const versionless = base.replace(/[\d.]+$/, '');
  return [base, versionless].some((n) => INTERPRETERS.has(n) || INPUT_SHELLS.has(n));
}

/** Lines ended by `\r` or `\n` (a trailing partial line does not run). */
export function completedLines(data: string): string[] {
  const parts = data.split(/\r\n|\r|\n/);
  parts.pop();
  return parts.filter((l) => l.trim().length > 0);
}

function baseName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

export type TypedLines = {
  /** What the shell will run: lines completed by this write, after line editing (backspace, Ctrl-U, Ctrl-C). */
  completed: string[];
  /** The line still being typed after this write (carried to the next write). */
  rest: string;
  /**
   * Set when the write holds a key whose effect the model cannot know exactly (ESC sequences, tab completion,
   * Ctrl-W, Ctrl-O, Ctrl-V, signals…): why it is refused, naming the character and its position.
   */
  refused?: string;
};

/**
 * Replays what was typed at a shell prompt: `prior` (the unfinished line from earlier writes) plus `data`.
 * Checking each write alone would let `rm -rf x` typed in one write and Enter in the next run unchecked.
 *
 * Only keys whose effect on readline's line is certain are applied: Enter (CR, LF) ends the line;
 * backspace (DEL, Ctrl-H) removes the last character; Ctrl-U kills the whole line and Ctrl-C aborts it
 * (the cursor is always at the end, since nothing that moves it is accepted). Any other control character
 * refuses the whole write, at once, even before a line is completed: readline acts on it as it arrives
 * (Ctrl-O runs the line, Ctrl-\ and Ctrl-Z are signals that flush or keep text, a tab completes words).
 * `eof` (an interpreter or a nested shell, `editor` names it): Ctrl-D on an empty line, as the write's last key,
 * ends the program's input and runs nothing; anywhere else it is refused (on a line it deletes or sends text).
 */
export function typedLines(
  prior: string,
  data: string,
  { editor = "bash's line editor", eof = false }: { editor?: string; eof?: boolean } = {},
): TypedLines {
  const completed: string[] = [];
  let line = [...prior];
  let index = 0;
  for (const ch of data) {
    if (ch === '\x04' && eof && line.length === 0 && index + ch.length === data.length) {
      // End of input: whatever reads the terminal next (the shell, once the program is gone) gets nothing more.
    } else if (ch === '\r' || ch === '\n') {
      completed.push(line.join(''));
      line = [];
    } else if (ch === '\x03' || ch === '\x15') {
      line = [];
    } else if (ch === '\x7f' || ch === '\b') {
      // readline erases a character with the zero-width ones after it (`X` and a combining accent go together),
      // by widths from the shell's locale, which this model cannot know: `toucX\u0301` and one backspace ran
      // touch while the model kept `toucXh`. Only an ASCII character's erase is certain.
      const last = line.at(-1);
      if (last !== undefined && last > '\x7e') {
        return {
          completed: [],
          rest: prior,
          refused:
            `the input erases U+${last.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} with the ` +
            `backspace at position ${index} (0-based): how ${editor} ` +
            'erases a character outside ASCII depends on its width, which the permission check ' +
            'cannot follow; send the line as it should run, or run the command with terminal.exec',
        };
      }
      line.pop();
    } else if (firstControl(ch, PROMPT_CONTROL)) {
      return {
        completed: [],
        rest: prior,
        refused:
          `the input holds ${describeChar(ch)} at position ${index} (0-based), a key ${editor} ` +
          `acts on in a way the permission check cannot follow; type plain text and Enter (backspace, ` +
          `Ctrl-U and Ctrl-C are understood), or run the command with terminal.exec`,
      };
    } else {
      line.push(ch);
    }
    index += ch.length;
  }
  return { completed, rest: line.join('') };
}

/** At the prompt every control character is a key, tab included (completion). */
const PROMPT_CONTROL = /[\x00-\x1f\x7f-\x9f]/;
