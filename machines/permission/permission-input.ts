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
  /** A completed line held escape sequences or other control keys (arrows, Ctrl-A…): its text is not certain. */
  uncertain: boolean;
};

/**
 * Replays what was typed at a shell prompt: `prior` (the unfinished line from earlier writes) plus `data`.
 * Checking each write alone would let `rm -rf x` typed in one write and Enter in the next run unchecked.
 */
export function typedLines(prior: string, data: string): TypedLines {
  const completed: string[] = [];
  let line = '';
  let lineUncertain = /[\x00-\x08\x0b-\x1f]/.test(prior);
  let uncertain = false;
  for (const ch of prior + data) {
    if (ch === '\r' || ch === '\n') {
      completed.push(line);
      uncertain ||= lineUncertain;
      line = '';
      lineUncertain = false;
    } else if (ch === '\x03' || ch === '\x15') {
      line = '';
      lineUncertain = false;
    } else if (ch === '\x7f' || ch === '\b') {
      line = line.slice(0, -1);
    } else {
      if (ch !== '\t' && ch < ' ') lineUncertain = true;
      line += ch;
    }
  }
  return { completed, rest: line, uncertain };
}
