/**
 * @module
 * Shell integration: the rc file skein gives bash so that it reports prompt,
 * command and exit-status marks (OSC 133 A/B/C/D) and its cwd (OSC 7), the
 * scanner that finds those marks in the raw output stream (marks may be split
 * across PTY reads), and how a command is delivered to the shell: its exact
 * bytes in a private file that a fixed typed line sources (see `commandInput`).
 */
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { utf8Length } from '../../machines/terminal/terminal-text.ts';

/** The file in a terminal's rc directory that holds the command being run. */
export const COMMAND_FILE = 'c';
/**
 * The read-only shell variable that holds the command file's path (set by the rc). The line typed for every
 * command names it rather than the path: readline reads and echoes a typed line one character at a time
 * (~5 µs each here, against ~120 µs for all of `true` in the shell), and the 14-byte line takes ~50-70 µs less
 * than the 26-byte one with the path.
 */
export const COMMAND_VAR = '__sk';

/**
 * The rc file. It sources no user files (predictable for agents), keeps no
 * history file, turns off `!` history expansion, and reports:
 * - `OSC 7 ; file://host/cwd` then `OSC 133 ; D ; <exit status>` before every prompt
 *   (cwd first, so the cwd is known when the end mark arrives),
 * - `OSC 133 ; A` / `B` around the prompt text `$ ` (also for root),
 * - `OSC 133 ; C` (PS0) when a command line has been read and starts running.
 * Before the D mark it discards typeahead: bytes that reached the terminal
 * while the last command ran and that it did not read (`cat` ended by a Ctrl-D
 * with `touch x` after it). Left in the tty's input queue, readline would take
 * them as the start of the next line, glued in front of a judged `ls\r`. bash
 * cannot tcflush, but `read -n` switches the tty to non-canonical mode (so a
 * partial line becomes readable); `-t` ends the read once the queue is empty,
 * but only after waiting out its timeout (at 1 ms, ~1.1 ms of every command's
 * 1.4 ms on one machine). The timeout also cuts a read that is still taking a
 * long line in (a byte per system call): the drain reads again while a read got
 * anything. It is 50 ms, not 1: a loaded machine can stall the shell past 1 ms
 * before its first byte (bash first switches the tty's mode with TCSADRAIN, which
 * waits until the host has read the output before it), and a read that got
 * nothing ends the drain with the line still queued. So the drain runs only when
 * the typeahead mark
 * (`TypeaheadMark`, a file in the terminal's rc directory) is not empty: the host
 * sets it before it writes anything but a command line to the terminal, and
 * empties it when it types the next command line. It runs before the D mark:
 * once the host has seen a command end, no later write can be discarded by mistake.
 * Everything is done with builtins (called through `builtin`, so that a function
 * the agent names `printf` or `read` cannot silence the marks; `[[ -s ]]` is
 * syntax, not a command): no fork per prompt. `typeaheadPath` and `commandPath` are written into
 * the rc as they are: `writeRcFile` refuses a directory whose path would need quoting. The command file's path
 * is held in a read-only variable (`COMMAND_VAR`) that the typed line names (`commandInput`).
 */
export function bashRc(typeaheadPath: string, commandPath: string): string {
  return BASH_RC_LINES.join('\n').replaceAll('@TYPEAHEAD@', typeaheadPath).replaceAll('@COMMAND@', commandPath);
}

const BASH_RC_LINES = [
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
  "  if [[ -s '@TYPEAHEAD@' ]]; then",
  // A read cut by its timeout (status > 128) keeps what it got: bash reads `-n` input a byte per system call,
  // so a long line can outlast the timeout. Read on after a full read or a cut one that got something; stop at
  // a timeout that got nothing, or at any other failure (a variable the agent made read-only), never on a count.
  // The mark reads `2` while the host still holds input it could not write yet (pty-input.ts): drained again
  // until it does not, then once more (what the host wrote before it said so is read by that last pass).
  "    local __skein_rc=0 __skein_more=; builtin read -r -n 1 __skein_more < '@TYPEAHEAD@' 2>/dev/null",
  '    while :; do',
  "      while builtin read -r -s -t 0.05 -n 65536 -d '' __skein_typeahead 2>/dev/null; __skein_rc=$?; " +
    '(( __skein_rc == 0 || (__skein_rc > 128 && ${#__skein_typeahead} > 0) )); do :; done',
  '      [[ $__skein_more == 2 ]] || break',
  "      __skein_more=; builtin read -r -n 1 __skein_more < '@TYPEAHEAD@' 2>/dev/null",
  '    done',
  '    builtin unset __skein_typeahead',
  '  fi',
  "  p=${p//%/%25}; p=${p// /%20}; p=${p//$'\\a'/%07}; p=${p//$'\\e'/%1B}",
  '  builtin printf \'\\033]7;file://%s%s\\007\\033]133;D;%s\\007\' "$HOSTNAME" "$p" "$ec"',
  '}',
  // Read-only: a command cannot replace or unset the function that discards typeahead, nor take it off the
  // prompt (the gate refuses functions named like a builtin it uses, shell-refusals.ts).
  'readonly -f __skein_prompt',
  'PROMPT_COMMAND=__skein_prompt',
  'readonly PROMPT_COMMAND',
  "PS1='\\[\\033]133;A\\007\\]$ \\[\\033]133;B\\007\\]'",
  "PS2='> '",
  "PS0=$'\\033]133;C\\007'",
  // The command file's path, for the line typed before each command (commandInput): read-only, so that no
  // command can point it elsewhere.
  `readonly ${COMMAND_VAR}='@COMMAND@'`,
  '',
];

/** Shells skein can integrate with; others get a clear error. */
export const SUPPORTED_SHELLS = ['bash'] as const;

/** The file in a terminal's rc directory whose content says input may be waiting as typeahead (`TypeaheadMark`). */
export const TYPEAHEAD_FILE = 'typeahead';

export type RcFiles = {
  dir: string;
  path: string;
  /** Where commands are delivered (see `commandInput`). */
  commandPath: string;
  /**
   * Puts a command's exact bytes in `commandPath` (see `CommandFile`), and empties the typeahead mark: it is
   * called right before the command line is typed, at the prompt, where nothing typed earlier is typeahead.
   */
  writeCommand: (command: string) => void;
  /** The typeahead mark (`TypeaheadMark`). */
  typeaheadPath: string;
  /** Sets the typeahead mark: call it before writing anything but a command line to the terminal. */
  markTypeahead: () => void;
  /** While typed-ahead input waits in the host (`PtyInput`): the prompt's drain waits for it too. */
  markBacklog: (on: boolean) => void;
  /** Removes the directory, in the thread pool (`rcRemovals` waits for every removal begun). */
  remove: () => Promise<void>;
};

/**
 * Removals of rc directories not finished yet. A directory's removal is a few unlinks and an rmdir, each up to
 * ~0.1-0.6 ms of kernel time on a busy file system: 32 terminals closing at once held a fleet's event loop ~56 ms
 * when they were made on it.
 */
const removing = new Set<Promise<void>>();

/** Resolves once every rc directory whose removal has begun is gone (a host's stop waits for them). */
export async function rcRemovals(): Promise<void> {
  while (removing.size > 0) await Promise.all([...removing]);
}

/**
 * Writes the rc file into a fresh private directory (0700; one per terminal, so a sandboxed shell, which sees
 * the directory read-only, sees only its own commands); returns its paths and a cleanup.
 */
export function writeRcFile(): RcFiles {
  const dir = typableDir(mkdtempSync(join(tmpdir(), 'skein-')));
  const path = join(dir, 'bashrc');
  writeFileSync(path, bashRc(join(dir, TYPEAHEAD_FILE), join(dir, COMMAND_FILE)), { mode: 0o600 });
  return rcFiles(dir, path);
}

/**
 * `writeRcFile` with the directory and the file made in the thread pool: each is a new inode, up to ~0.8 ms of
 * kernel CPU on a busy file system, which a burst of 32 terminal.open paid on the event loop every agent shares.
 */
export async function makeRcFile(): Promise<RcFiles> {
  const dir = typableDir(await mkdtemp(join(tmpdir(), 'skein-')));
  const path = join(dir, 'bashrc');
  await writeFile(path, bashRc(join(dir, TYPEAHEAD_FILE), join(dir, COMMAND_FILE)), { mode: 0o600 });
  return rcFiles(dir, path);
}

/** The rc holds the paths in single quotes: plain characters only, whatever TMPDIR holds. */
function typableDir(dir: string): string {
  if (!/[^A-Za-z0-9/._+-]/.test(dir)) return dir;
  rmSync(dir, { recursive: true, force: true });
  throw new Error(
    `The temporary directory '${dir}' holds characters that cannot be typed safely at a shell prompt; ` +
      'set TMPDIR to a plain path (letters, digits, / . _ + -).',
  );
}

function rcFiles(dir: string, path: string): RcFiles {
  const typeaheadPath = join(dir, TYPEAHEAD_FILE);
  const commandPath = join(dir, COMMAND_FILE);
  const command = new CommandFile(commandPath);
  const typeahead = new TypeaheadMark(typeaheadPath);
  return {
    dir,
    path,
    commandPath,
    writeCommand: (text) => {
      typeahead.clear();
      command.write(text);
    },
    typeaheadPath,
    markTypeahead: () => typeahead.set(),
    markBacklog: (on) => typeahead.backlog(on),
    remove: () => {
      command.close();
      typeahead.close();
      const removal = rm(dir, { recursive: true, force: true }).catch(() => undefined);
      removing.add(removal);
      void removal.finally(() => removing.delete(removal));
      return removal;
    },
  };
}

/**
 * The file a terminal's commands are delivered through, kept open. Each command is written over the previous
 * one and the file then cut to its length: never truncated to zero and closed, which on ext4 (auto_da_alloc)
 * forces the data to disk at close, 1-2.5 ms per exec on this machine against 10-20 µs this way. bash's `.`
 * reads the whole file before running it, and the next command is written only after this one ended.
 */
export class CommandFile {
  readonly #path: string;
  #fd: number | undefined;
  /** The file's length after the last write (unknown, so cut, after an open). */
  #length = Number.POSITIVE_INFINITY;

  constructor(path: string) {
    this.#path = path;
  }

  write(command: string): void {
    // Removed from under us (a command cleaned the temp dir): a new file, as writeFileSync would have made.
    if (this.#fd !== undefined && fstatSync(this.#fd).nlink === 0) this.close();
    this.#fd ??= openSync(this.#path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    const bytes = Buffer.from(command);
    writeSync(this.#fd, bytes, 0, bytes.length, 0);
    // Written over a command no longer than this one, the file ends where this one does: nothing to cut (the
    // same command again, a loop's, costs one call less).
    if (bytes.length < this.#length) ftruncateSync(this.#fd, bytes.length);
    this.#length = bytes.length;
  }

  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    this.#length = Number.POSITIVE_INFINITY;
  }
}

/**
 * The typeahead mark: one byte while the host may have written input that a command did not read, empty
 * otherwise. Only the host writes it (the shell only tests it, so a sandbox that sees the rc directory
 * read-only changes nothing), through a descriptor kept open; emptied only when it was set, so a command with
 * no input written to it costs no syscall. Never truncated and closed (see `CommandFile`).
 */
export class TypeaheadMark {
  readonly #path: string;
  #fd: number | undefined;
  #set = false;

  constructor(path: string) {
    this.#path = path;
  }

  set(): void {
    try {
      // Removed from under us (a command cleaned the temp dir): made again, since the shell tests the path.
      if (this.#fd !== undefined && fstatSync(this.#fd).nlink === 0) this.close();
      this.#fd ??= openSync(this.#path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
      writeSync(this.#fd, '1', 0);
      this.#set = true;
    } catch {
      // The directory is gone (the terminal closed, or a command removed it): no command line can be
      // delivered through it any more either (CommandFile), so there is no next prompt to protect.
    }
  }

  /**
   * `2` while the host holds typed-ahead input it could not write yet, back to `1` once it is written or dropped;
   * only while the mark is set (the drain runs only then). The rc's drain reads on while it says `2`.
   */
  backlog(on: boolean): void {
    if (!this.#set || this.#fd === undefined) return;
    try {
      writeSync(this.#fd, on ? '2' : '1', 0);
    } catch {
      // The directory is gone: the terminal is closing (see set).
    }
  }

  clear(): void {
    if (!this.#set || this.#fd === undefined) return;
    ftruncateSync(this.#fd, 0);
    this.#set = false;
  }

  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    this.#set = false;
  }
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
 * How a command reaches bash: its exact bytes go into `commandPath` (written by
 * `writeCommand`), and the only thing typed at the prompt is the fixed line
 * returned here, which sources that file (its path in the rc's read-only
 * `COMMAND_VAR`, expanded in double quotes: no IFS a command sets can split it). Typing the command itself is not
 * safe: readline and the tty line discipline act on bytes before bash parses
 * them (CR ends the line, Ctrl-C, Ctrl-\ and Ctrl-Z signal, Ctrl-U/Ctrl-W erase,
 * Ctrl-D, Ctrl-V/Ctrl-O…), so `echo hi\rtouch x`, judged as one `echo`, would
 * run `touch`. Bracketed paste does not help: ISIG characters are acted on by
 * the kernel whatever readline does. Read from a file, the bytes reach bash's
 * parser untouched, exactly as the gate judged them; the exit status is that of
 * the last command, as for a typed line.
 *
 * Before the line: Ctrl-G (abort a pending ESC/Ctrl-X prefix, numeric argument
 * or incremental search that an earlier `terminal.write` left), then Ctrl-E
 * Ctrl-U (discard whatever was typed at the prompt), so nothing earlier can
 * join the line. `\.` is quoted so that no alias can stand in for it.
 */
export function commandInput(): string {
  return `\x07\x05\x15\\. "$${COMMAND_VAR}"\r`;
}
