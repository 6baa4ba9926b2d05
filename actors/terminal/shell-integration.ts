/**
 * @module
 * Shell integration: the rc file skein gives bash so that it reports prompt,
 * command and exit-status marks (OSC 133 A/B/C/D) and its cwd (OSC 7), the
 * scanner that finds those marks in the raw output stream (marks may be split
 * across PTY reads), and how a command line is typed into the shell.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utf8Length } from '../../machines/terminal/terminal-text.ts';

/**
 * The rc file. It sources no user files (predictable for agents), keeps no
 * history file, turns off `!` history expansion, and reports:
 * - `OSC 7 ; file://host/cwd` then `OSC 133 ; D ; <exit status>` before every prompt
 *   (cwd first, so the cwd is known when the end mark arrives),
 * - `OSC 133 ; A` / `B` around the prompt text `$ ` (also for root),
 * - `OSC 133 ; C` (PS0) when a command line has been read and starts running.
 * Everything is done with builtins: no fork per prompt.
 */
export const BASH_RC = [
  '# skein shell integration (generated)',
  "# fd hygiene: close every descriptor the runtime's parents leaked to us (bash keeps 255 for itself)",
  'for __skein_fd in /proc/$$/fd/*; do __skein_fd=${__skein_fd##*/}; case $__skein_fd in ' +
    '0|1|2|255) ;; *) eval "exec ${__skein_fd}>&-" 2>/dev/null ;; esac; done; unset __skein_fd',
  'unset HISTFILE',
  'HISTSIZE=1000',
  'set +o histexpand',
  'shopt -s checkwinsize',
  "bind 'set enable-bracketed-paste on' 2>/dev/null",
  "bind 'set enable-active-region off' 2>/dev/null",
  "bind 'set bell-style none' 2>/dev/null",
  '__skein_prompt() {',
  '  local ec=$? p=$PWD',
  "  p=${p//%/%25}; p=${p// /%20}; p=${p//$'\\a'/%07}; p=${p//$'\\e'/%1B}",
  '  printf \'\\033]7;file://%s%s\\007\\033]133;D;%s\\007\' "$HOSTNAME" "$p" "$ec"',
  '}',
  'PROMPT_COMMAND=__skein_prompt',
  "PS1='\\[\\033]133;A\\007\\]$ \\[\\033]133;B\\007\\]'",
  "PS2='> '",
  "PS0=$'\\033]133;C\\007'",
  '',
].join('\n');

/** Shells skein can integrate with; others get a clear error. */
export const SUPPORTED_SHELLS = ['bash'] as const;

/** Writes the rc file into a fresh private directory; returns its path and a cleanup. */
export function writeRcFile(): { dir: string; path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'skein-rc-'));
  const path = join(dir, 'bashrc');
  writeFileSync(path, BASH_RC, { mode: 0o600 });
  return { dir, path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export type Mark =
  | { kind: 'A' | 'B' | 'C'; start: number; end: number }
  | { kind: 'D'; start: number; end: number; exitCode: number }
  | { kind: 'cwd'; start: number; end: number; cwd: string };

// eslint-disable-next-line no-control-regex
const OSC = /\x1b\](133|7);([^\x07\x1b]*)(?:\x07|\x1b\\)/g;
/** An OSC longer than this without terminator is not one of ours. */
const MAX_PENDING = 4096;

/**
 * Finds OSC 133/7 marks in the output stream. `start`/`end` are byte offsets
 * of the mark in the stream. A mark split across two reads is found when the
 * second read arrives; the data itself is never held back.
 */
export class MarkScanner {
  #pending = '';
  #pendingOffset = 0;

  feed(data: string, offset: number): Mark[] {
    if (!this.#pending && !data.includes('\x1b')) return [];
    const text = this.#pending + data;
    const base = this.#pending ? this.#pendingOffset : offset;
    this.#pending = '';
    const marks: Mark[] = [];
    let lastEnd = 0;
    OSC.lastIndex = 0;
    for (let m = OSC.exec(text); m; m = OSC.exec(text)) {
      const start = base + utf8Length(text.slice(0, m.index));
      const end = start + utf8Length(m[0]);
      lastEnd = m.index + m[0].length;
      const mark = parse(m[1]!, m[2]!, start, end);
      if (mark) marks.push(mark);
    }
    const open = text.lastIndexOf('\x1b', text.length - 1);
    if (open >= lastEnd && text.length - open < MAX_PENDING) {
      const rest = text.slice(open);
      if (rest === '\x1b' || (rest.startsWith('\x1b]') && !/[\x07]|\x1b\\/.test(rest.slice(2)))) {
        this.#pending = rest;
        this.#pendingOffset = base + utf8Length(text.slice(0, open));
      }
    }
    return marks;
  }
}

function parse(code: string, payload: string, start: number, end: number): Mark | undefined {
  if (code === '7') {
    const m = /^file:\/\/[^/]*(\/.*)$/.exec(payload);
    if (!m) return undefined;
    let cwd = m[1]!;
    try {
      cwd = decodeURIComponent(cwd);
    } catch {
      // Not percent-encoded by us: keep it raw.
    }
    return { kind: 'cwd', start, end, cwd };
  }
  const [kind, arg] = payload.split(';');
  if (kind === 'A' || kind === 'B' || kind === 'C') return { kind, start, end };
  if (kind === 'D') return { kind, start, end, exitCode: Number.parseInt(arg ?? '0', 10) || 0 };
  return undefined;
}

/**
 * The bytes that type `command` at the prompt and press Enter. A one-line
 * command is typed as is. Anything with newlines, tabs or other control
 * characters is sent as a bracketed paste (readline inserts it literally:
 * no tab completion) wrapped in `{ …; }` so bash reads one compound command
 * and reports one exit status.
 */
export function commandInput(command: string): string {
  // Ctrl-E Ctrl-U first: whatever terminal.write left typed at the prompt is discarded, so it can never
  // run glued to the front of this (permission-checked) command.
  const clear = '\x05\x15';
  // eslint-disable-next-line no-control-regex
  if (!/[\x00-\x1f\x7f]/.test(command)) return `${clear}${command}\r`;
  const body = command.replace(/\r\n?/g, '\n').replace(/\x1b/g, '');
  return `${clear}\x1b[200~{ ${body}\n}\x1b[201~\r`;
}
