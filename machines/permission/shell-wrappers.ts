/**
 * @module
 * Command wrappers, unwrapped so the policy checks both the wrapper and what
 * it runs: `sudo`, `env`, `command`, `exec`, `nice`, `nohup`, `time`,
 * `timeout`, `xargs`, `stdbuf` and friends give an inner argv; `bash -c`
 * (sh, zsh, dash, ksh…), `eval`, `su -c`, `env -S`, `watch`, `flock -c`,
 * `ssh host …`, `script -c`, `sg group …`, `capsh -- -c` give a script to parse recursively; `start-stop-daemon
 * --start` runs its `--startas`/`--exec` program;
 * `find -exec/-execdir/-ok/-okdir` give the executed command and `find -delete` gives `rm -f {}`. The option
 * tables and env -S's string syntax are in shell-wrapper-specs.ts. Pure.
 */

import { decodeEnvSplit, quoted, SHELLS, SPECS, type Spec } from './shell-wrapper-specs.ts';

export { SHELLS } from './shell-wrapper-specs.ts';

/** One thing a wrapper runs: an argv, or a script string to be parsed as shell. */
export type WrappedRun = { via: string; argv?: string[]; script?: string };

/** The wrappers this module understands (for docs and tests). */
export const WRAPPERS = [...Object.keys(SPECS), ...SHELLS, 'eval', 'find', 'sg', 'capsh'];

/** What `argv` (canonical name first) runs besides itself; empty when it is not a wrapper. */
export function unwrapCommand(argv: readonly string[]): WrappedRun[] {
  const name = argv[0];
  if (name === undefined) return [];
  if (name === 'eval') return argv.length > 1 ? [{ via: 'eval', script: argv.slice(1).join(' ') }] : [];
  if (SHELLS.has(name)) return unwrapShell(argv);
  if (name === 'find') return unwrapFind(argv);
  if (name === 'sg') return unwrapSg(argv);
  if (name === 'capsh') return unwrapCapsh(argv);
  const spec = SPECS[name];
  if (!spec) return [];
  if (name === 'start-stop-daemon') return unwrapStartStop(spec, argv);
  if (name === 'su' || name === 'runuser') return [...unwrapGeneric(name, spec, argv), ...userShell(name, spec, argv)];
  // util-linux setarch 2.38: `setarch [<arch>] [options] [<program>…]`, the architecture before the options.
  if (name === 'setarch' && argv[1] !== undefined && !argv[1].startsWith('-'))
    return unwrapGeneric(name, spec, [name, ...argv.slice(2)]);
  return unwrapGeneric(name, spec, argv);
}

/**
 * shadow's `sg [-] [group [-c] command]` runs its command word with `/bin/sh -c` (shadow 4.13 reads that one
 * word: `sg root -c 'rm x'` and `sg root 'rm x'` run rm).
 */
export function unwrapSg(argv: readonly string[]): WrappedRun[] {
  let i = argv[1] === '-' ? 2 : 1;
  i++; // the group
  const via = argv[i] === '-c' ? 'sg -c' : 'sg';
  if (argv[i] === '-c') i++;
  return argv[i] === undefined ? [] : [{ via, script: argv[i]! }];
}

/**
 * libcap's capsh reads its options in order; `--` (or `-+`) hands every word after it to the shell, bash unless
 * `--shell=` named another program (`capsh -- -c 'rm x'` runs bash -c, `capsh --shell=/bin/rm -- x` runs rm).
 * `==` and `=+` start capsh again with the words after, which this same reading covers.
 */
function unwrapCapsh(argv: readonly string[]): WrappedRun[] {
  let shell = 'bash';
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--shell=')) shell = a.slice('--shell='.length);
    else if (a === '--' || a === '-+') return [{ via: `capsh ${a}`, argv: [shell, ...argv.slice(i + 1)] }];
  }
  return [];
}

/**
 * dpkg's `start-stop-daemon --start` runs the program `--startas`/`-a` names, else the one `--exec`/`-x` names,
 * with the operands (`start-stop-daemon -S -x /usr/bin/rm -- x` runs `rm x`; getopt permutes, so all of them).
 */
function unwrapStartStop(spec: Spec, argv: readonly string[]): WrappedRun[] {
  const { options, operands } = readOptions(spec, argv, true);
  if (!options.some(([k]) => k === '-S' || k === '--start')) return [];
  const value = (keys: string[]) => options.findLast(([k, v]) => keys.includes(k) && v !== undefined)?.[1];
  const program = value(['-a', '--startas']) ?? value(['-x', '--exec']);
  return program === undefined ? [] : [{ via: 'start-stop-daemon', argv: [program, ...operands] }];
}

/**
 * The program `su -s`/`runuser --shell` names runs as the user's shell, with the words after the user as its
 * arguments: `su -s /usr/bin/rm root -- x` runs `rm x` (a real shell there is judged as one).
 */
function userShell(name: string, spec: Spec, argv: readonly string[]): WrappedRun[] {
  const { options, operands } = readOptions(spec, argv, true);
  const shell = options.findLast(([k, v]) => (k === '-s' || k === '--shell') && v !== undefined)?.[1];
  // A shell there runs -c's script or reads its input: judged as those already.
  if (shell === undefined || SHELLS.has(shell.slice(shell.lastIndexOf('/') + 1))) return [];
  const words = operands[0] === '-' ? operands.slice(2) : operands.slice(1);
  return [{ via: `${name} -s`, argv: [shell, ...words] }];
}

/**
 * A wrapper's options (each `-x` letter or long name, with its value when it takes one) and its operands, read
 * as getopt reads them: `permute` takes options anywhere before `--` (util-linux, dpkg), else up to the first
 * operand (sudo, doas).
 */
export function readOptions(
  spec: Spec,
  argv: readonly string[],
  permute: boolean,
): { options: [string, string | undefined][]; operands: string[] } {
  const options: [string, string | undefined][] = [];
  const operands: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--' || (!permute && !/^-./.test(a))) {
      operands.push(...argv.slice(a === '--' ? i + 1 : i));
      break;
    }
    if (a.startsWith('--')) {
      const [given, attached] = splitLong(a);
      const key = longName(spec, given);
      const takes = spec.longArg?.includes(key) || spec.scriptLong?.includes(key);
      options.push([key, attached ?? (takes ? argv[++i] : undefined)]);
    } else if (/^-./.test(a)) {
      for (let j = 1; j < a.length; j++) {
        const letter = a[j]!;
        const takes = spec.shortArg?.includes(letter) || spec.scriptOption === letter;
        options.push([`-${letter}`, takes ? a.slice(j + 1) || argv[++i] : undefined]);
        if (takes) break;
      }
    } else operands.push(a);
  }
  return { options, operands };
}

function unwrapGeneric(name: string, spec: Spec, argv: readonly string[]): WrappedRun[] {
  const runs: WrappedRun[] = [];
  let i = 1;
  let userOption = false; // runuser -u/--user, read as an option (not a letter inside a value: `-wu`)
  let split: { via: string; script: string; end: number } | undefined; // env -S's string and the index after it
  while (i < argv.length) {
    const a = argv[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (a.startsWith('--')) {
      const [given, value] = splitLong(a);
      const key = longName(spec, given);
      if (key === '--user') userOption = true;
      if (spec.scriptLong?.includes(key)) {
        const given = value ?? argv[i + 1];
        const script = given !== undefined && name === 'env' ? decodeEnvSplit(given) : given;
        i += value === undefined ? 2 : 1;
        if (script !== undefined) {
          runs.push({ via: `${name} ${key}`, script });
          split = { via: `${name} ${key}`, script, end: i };
        }
      } else i += value === undefined && spec.longArg?.includes(key) ? 2 : 1;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      let consumedNext = false;
      for (let j = 1; j < a.length; j++) {
        const letter = a[j]!;
        const takesArg = spec.shortArg?.includes(letter) || spec.scriptOption === letter;
        if (!takesArg) continue;
        if (letter === 'u') userOption = true;
        const rest = a.slice(j + 1);
        const given = rest !== '' ? rest : argv[i + 1];
        const arg = given !== undefined && name === 'env' && letter === 'S' ? decodeEnvSplit(given) : given;
        consumedNext = rest === '';
        if (spec.scriptOption === letter && arg !== undefined) {
          runs.push({ via: `${name} -${letter}`, script: arg });
          split = { via: `${name} -${letter}`, script: arg, end: i + (consumedNext ? 2 : 1) };
        }
        break;
      }
      i += consumedNext ? 2 : 1;
      continue;
    }
    break;
  }
  if (spec.dashOption && argv[i] === '-') i++;
  // `runuser -u user cmd…` runs an argv; `su` and `runuser user` run the user's shell with the words after,
  // and read their options anywhere (GNU getopt permutes): `su root -c 'rm -rf /'`, `su - root -- -c '…'`.
  const runsShell = name === 'su' || (name === 'runuser' && !userOption) || spec.scriptOnly === true;
  if (runsShell) runs.push(...scriptsAfter(name, spec, argv, i));
  const assignments: string[] = [];
  while (spec.assignments && i < argv.length && isAssignment(name, argv[i]!)) assignments.push(argv[i++]!);
  runs.push(...exportedFunctions(assignments)); // env's only: sudo's assignments are shell names
  i += spec.positional ?? 0;
  let rest = argv.slice(i);
  if ((name === 'watch' || name === 'ssh') && rest.length > 0) return [...runs, { via: name, script: rest.join(' ') }];
  if (name === 'parallel') {
    const end = rest.findIndex((w) => w === ':::' || w === '::::' || w === ':::+');
    if (end >= 0) rest = rest.slice(0, end);
  }
  // The user and the words for the user's shell (their -c is found above), or script's log file.
  if (runsShell) rest = [];
  // `flock <file> -c <command>` is flock's own form: the command after the file.
  if (name === 'flock' && (rest[0] === '-c' || rest[0] === '--command')) {
    if (rest[1] !== undefined) runs.push({ via: `flock ${rest[0]}`, script: rest[1] });
    rest = [];
  }
  if (name === 'xargs' && rest.length === 0) rest = ['echo'];
  // The assignments a shell would read as such lead the argv (the judged command text starts with the program).
  const named = assignments.filter((w) => SHELL_ASSIGNMENT.test(w));
  if (rest.length > 0) runs.push({ via: name, argv: [...named, ...rest] });
  // GNU env splices -S's words into its argv: the words after them are options or arguments of the command the
  // string names (`env -S'git' push` runs `git push`), so the string is judged with them as well.
  if (name === 'env' && split && split.end < argv.length) {
    runs.push({ via: split.via, script: [split.script, ...argv.slice(split.end).map(quoted)].join(' ') });
  }
  return runs;
}

export const SHELL_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Whether `w` sets a variable for the command. GNU env 9.1 takes every word with `=` (`env 1A=1 echo x` runs echo). */
function isAssignment(name: string, w: string): boolean {
  return name === 'env' ? w.includes('=') : SHELL_ASSIGNMENT.test(w);
}

/**
 * The bash functions env exports: bash 5.2 defines `f` from `BASH_FUNC_f%%=() { …; }` when it starts
 * (`env 'BASH_FUNC_ls%%=() { echo x; }' bash -c ls` prints x), so the definition is judged as a script.
 */
function exportedFunctions(assignments: readonly string[]): WrappedRun[] {
  const runs: WrappedRun[] = [];
  for (const w of assignments) {
    const m = /^BASH_FUNC_(.+)%%=(.*)$/s.exec(w);
    if (m) runs.push({ via: 'env BASH_FUNC', script: `${m[1]}${m[2]}` });
  }
  return runs;
}

/** The script options of `su` or `runuser` among the words from `from` on, `--` included. */
function scriptsAfter(name: string, spec: Spec, argv: readonly string[], from: number): WrappedRun[] {
  const runs: WrappedRun[] = [];
  for (let k = from; k < argv.length; k++) {
    const a = argv[k]!;
    if (a.startsWith('--')) {
      const [given, value] = splitLong(a);
      const key = longName(spec, given);
      if (spec.scriptLong?.includes(key)) {
        const script = value ?? argv[k + 1];
        if (script !== undefined) runs.push({ via: `${name} ${key}`, script });
        if (value === undefined) k++;
      } else if (value === undefined && spec.longArg?.includes(key)) k++;
      continue;
    }
    if (!/^-[a-zA-Z]/.test(a)) continue;
    for (let j = 1; j < a.length; j++) {
      const letter = a[j]!;
      if (letter !== spec.scriptOption && !spec.shortArg?.includes(letter)) continue;
      const rest = a.slice(j + 1);
      const arg = rest !== '' ? rest : argv[k + 1];
      if (letter === spec.scriptOption && arg !== undefined) runs.push({ via: `${name} -${letter}`, script: arg });
      if (rest === '') k++;
      break;
    }
  }
  return runs;
}

/**
 * The table's long option that `key` names: itself, or the one it abbreviates (getopt_long takes any unambiguous
 * prefix: GNU env 9.1 runs `env --u HOME cmd` as `--unset HOME`; util-linux su `su --comm 'cmd' root`). A script
 * option wins a tie: where a prefix is ambiguous the program refuses to run, and reading a script judges more.
 */
function longName(spec: Spec, key: string): string {
  const names = [...(spec.scriptLong ?? []), ...(spec.longArg ?? [])];
  if (key.length <= 2 || names.includes(key) || spec.longFlags?.includes(key)) return key;
  return names.find((n) => n.startsWith(key)) ?? key;
}

function splitLong(a: string): [string, string | undefined] {
  const eq = a.indexOf('=');
  return eq < 0 ? [a, undefined] : [a.slice(0, eq), a.slice(eq + 1)];
}

function unwrapShell(argv: readonly string[]): WrappedRun[] {
  const name = argv[0]!;
  let i = 1;
  let hasC = false;
  while (i < argv.length) {
    const a = argv[i]!;
    if (a === '--' || a === '-') {
      i++;
      break;
    }
    if (a.startsWith('--')) {
      i += ['--rcfile', '--init-file'].includes(a) ? 2 : 1;
      continue;
    }
    // A lone `+` is an option word too (bash 5.2 and dash: `sh -c + 'echo x'` runs echo x); `-` ended them above.
    if (/^[-+]/.test(a)) {
      const letters = a.slice(1);
      if (letters.includes('c')) hasC = true;
      i += /[oO]/.test(letters) ? 2 : 1;
      continue;
    }
    break;
  }
  if (name === 'busybox') return argv.length > 1 ? [{ via: 'busybox', argv: argv.slice(1) }] : [];
  if (hasC && i < argv.length) return [{ via: `${name} -c`, script: argv[i]! }];
  return [];
}

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

function unwrapFind(argv: readonly string[]): WrappedRun[] {
  const runs: WrappedRun[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-delete') runs.push({ via: 'find -delete', argv: ['rm', '-f', '{}'] });
    if (!FIND_EXEC.has(a)) continue;
    const inner: string[] = [];
    let j = i + 1;
    for (; j < argv.length && argv[j] !== ';' && argv[j] !== '+'; j++) inner.push(argv[j]!);
    if (inner.length > 0) runs.push({ via: `find ${a}`, argv: inner });
    i = j;
  }
  return runs;
}
