/**
 * @module
 * Which argv reads a script from its standard input (`shell-wrappers.ts` re-exports these): a shell with no -c
 * and no script file (or one naming a descriptor: `bash /dev/stdin`), `source`/`.` of a descriptor, a shell
 * whose startup file names one (`--rcfile /dev/stdin`), and a program that starts a shell with no command (`su`,
 * `sudo -s`). Pure.
 */
import { SHELLS, SPECS } from './shell-wrapper-specs.ts';
import { readOptions, SHELL_ASSIGNMENT, unwrapSg } from './shell-wrappers.ts';

/**
 * True when `argv` is a shell that would read its script from stdin (no -c, no script file, or a script file that
 * names a descriptor: `bash /dev/stdin`), `source`/`.` of a descriptor (`. /dev/stdin`), or a program that starts
 * a shell with no command (`su`, `sudo -s`: startsShell).
 */
export function readsScriptFromStdin(argv: readonly string[]): boolean {
  const name = argv[0];
  if (name !== undefined && SWITCHERS.has(name)) return startsShell(name, argv);
  if (name === 'source' || name === '.') {
    // bash 5.2 reads `--` as the end of source's options: `source -- /dev/stdin` reads the here-string.
    const file = argv[1] === '--' ? argv[2] : argv[1];
    return file !== undefined && namesDescriptor(file);
  }
  if (name === undefined || !SHELLS.has(name) || name === 'busybox') return false;
  if (startupFromDescriptor(argv)) return true;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    // `-` and `--` end the options (bash 5.2: `echo 'echo x' | bash -` runs echo); a word after is a script file.
    if (a === '-' || a === '--') return i + 1 === argv.length || namesDescriptor(argv[i + 1]!);
    if (a.startsWith('--')) {
      if (a === '--rcfile' || a === '--init-file') i++;
      continue;
    }
    if (/^[-+]/.test(a)) {
      const letters = a.slice(1);
      if (letters.includes('c')) return false;
      // -s reads the script from stdin and makes the words after it $1…: bash 5.2 `bash -es foo`, `bash +s foo`.
      if (letters.includes('s')) return true;
      if (/[oO]/.test(letters)) i++;
      continue;
    }
    return namesDescriptor(a);
  }
  return true;
}

const SWITCHERS: ReadonlySet<string> = new Set(['su', 'runuser', 'sg', 'newgrp', 'script', 'sudo', 'doas', 'fakeroot']);

/**
 * Whether a program that starts a shell runs it with no command, so that the shell reads its script from stdin
 * (`echo 'rm x' | su`): su and `runuser <user>` without -c (the words after the user go to the shell:
 * `su root -- /dev/stdin`), sg and newgrp without a command, script without -c, sudo and doas with -s or -i
 * (`sudo -Es`) and no command. `sudo su` reaches `su` through the unwrapping (innermostArgv).
 */
function startsShell(name: string, argv: readonly string[]): boolean {
  if (name === 'newgrp') return true;
  // fakeroot with no command starts the user's shell (`echo 'rm x' | fakeroot` runs rm).
  if (name === 'fakeroot') return readOptions(SPECS[name]!, argv, false).operands.length === 0;
  if (name === 'sg') return unwrapSg(argv).length === 0;
  const spec = SPECS[name]!;
  const sudo = name === 'sudo' || name === 'doas';
  const { options, operands } = readOptions(spec, argv, !sudo);
  const keys = options.map(([k]) => k);
  if (keys.some((k) => k === `-${spec.scriptOption}` || spec.scriptLong?.includes(k))) return false;
  if (name === 'script') return true;
  if (sudo) {
    const shell = keys.some((k) => ['-s', '-i', '--shell', '--login'].includes(k));
    return shell && operands.every((w) => SHELL_ASSIGNMENT.test(w));
  }
  if (name === 'runuser' && keys.some((k) => k === '-u' || k === '--user')) return false;
  const words = operands[0] === '-' ? operands.slice(2) : operands.slice(1);
  return readsScriptFromStdin(['sh', ...words]);
}

/**
 * Whether `--rcfile`/`--init-file` names a descriptor: an interactive bash runs that file first, so
 * `bash --rcfile /dev/stdin -ic : <<<'rm x'` runs the here-string, -c or not. Read anywhere in the words (bash
 * takes long options only before the others): a script's argument so named only gets its stdin judged too.
 */
function startupFromDescriptor(argv: readonly string[]): boolean {
  return argv.some((a, i) => {
    if (a === '--rcfile' || a === '--init-file') return argv[i + 1] !== undefined && namesDescriptor(argv[i + 1]!);
    return /^--(rcfile|init-file)=/.test(a) && namesDescriptor(a.slice(a.indexOf('=') + 1));
  });
}

/**
 * Whether a script file's path may name a descriptor the shell inherits (`/dev/stdin`, `/dev/fd/0`,
 * `/proc/self/fd/3`, `//dev/./stdin`, or `stdin` run from /dev): its script is then the here-doc, here-string
 * or pipe the command line spells out. Read broadly: a real file named so only gets those read as its script too.
 * A last segment of digits counts wherever it is: the directory may be /dev/fd (`cd /dev/fd && . 0 <<<…`).
 */
export function namesDescriptor(path: string): boolean {
  const last = path
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .at(-1);
  return last === 'stdin' || /^\d+$/.test(last ?? '');
}
