/**
 * @module
 * The command line the shell helper (pty-zygote-child.mjs) starts a terminal's shell with, in a new session
 * (`spawn(..., { detached: true })` calls setsid() in the child), the slave on its descriptors 0-2: one POSIX sh
 * that opens the slave by name once, which makes it the session's controlling terminal (the first terminal a
 * session leader opens without O_NOCTTY becomes it, with the leader's group in the foreground: what
 * `setsid --ctty` did; bash -i would take it itself, a plain sh or another shell would not), applies node-pty's
 * line settings with stty on it, then becomes the command (`exec`, same pid). When the command is the launcher's
 * own sh (pty-spawn.ts: the cgroup join and bwrap's descriptors), its script runs in this sh. Process starts
 * cost 2-4 ms each on a 2-core VM: setsid and a second sh were two of the five before every shell.
 */
import { LAUNCH_NAME } from './pty-spawn.ts';

/**
 * node-pty's termios for its own PTYs (its pty.cc), as stty words: what the kernel's defaults lack. Sent to the
 * helper too, for its `stty -F` without a POSIX sh.
 */
export const LINE_SETTINGS = ['iutf8', 'ixany', 'imaxbel', 'brkint', 'hupcl', 'eol', '255', 'eol2', '255'];

/**
 * `sh -c <script> skein-launch <tty> <stty> ...`: the slave `tty` taken as controlling terminal, the line
 * settings (none when `stty` is undefined: the kernel's defaults still work), then `file` with `args`. A slave
 * that cannot be opened ends the sh before anything runs.
 */
export function sessionCommand(
  sh: string,
  tty: string,
  stty: string | undefined,
  file: string,
  args: readonly string[],
): string[] {
  const settings = stty ? `"$2" ${LINE_SETTINGS.join(' ')} 2>/dev/null; ` : '';
  // `:` with a redirection opens the slave in this sh itself (a builtin: no fork), read-only and never created.
  const prelude = `: <"$1" || exit 126; ${settings}shift 2; `;
  // The launcher's script reads its own arguments from $1 on: after the shift, they are there.
  const merged = file === sh && args[0] === '-c' && args[2] === LAUNCH_NAME && typeof args[1] === 'string';
  if (merged) return [sh, '-c', prelude + args[1], LAUNCH_NAME, tty, stty ?? '', ...args.slice(3)];
  return [sh, '-c', `${prelude}exec "$@"`, LAUNCH_NAME, tty, stty ?? '', file, ...args];
}
