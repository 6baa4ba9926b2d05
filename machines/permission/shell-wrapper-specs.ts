/**
 * @module
 * The option tables of the command wrappers `shell-wrappers.ts` reads through: which options take a value (and
 * so hide the command behind it if misread), which run a script string, and the shells whose `-c` is a script.
 * Taken from each program's `--help` and manual (coreutils 9.1, util-linux 2.38, strace 6.1, fakeroot 1.31,
 * dbus 1.14). An option a table leaves out is read as one that takes no value: options that take theirs only
 * attached (`--mount=<file>`, `-t<file>`) belong nowhere. And env -S's string syntax (decodeEnvSplit). Pure.
 */

export type Spec = {
  /** Short options that take an argument. */
  shortArg?: string;
  /** Long options that take an argument (`--user`); `--x=y` always carries its own. */
  longArg?: string[];
  /** Long options without a value whose names begin another's (sudo's `--login`, `--login-class`). */
  longFlags?: string[];
  /** `VAR=value` words allowed before the command. */
  assignments?: boolean;
  /** Positional operands before the command (timeout's duration, flock's file). */
  positional?: number;
  /** A short option whose argument is a script (`su -c`, `flock -c`). */
  scriptOption?: string;
  /** Long spellings of the script option (su's `--session-command` too). */
  scriptLong?: string[];
  /** A lone `-` after the options (and `--`) is one more, not the command (GNU env 9.1 reads it as -i). */
  dashOption?: boolean;
  /**
   * Runs no argv of its own (`script`): the words after its options are no command (script's log file), and its
   * script option is found among all of them, as su's is (util-linux getopt permutes: `script /dev/null -c …`).
   */
  scriptOnly?: boolean;
};

export const SPECS: Record<string, Spec> = {
  sudo: {
    // -R (chroot) runs the command too; -a and -c take an argument where sudo has BSD auth or login classes.
    shortArg: 'ugCDhprtUTRac',
    longArg: [
      '--user',
      '--group',
      '--chdir',
      '--prompt',
      '--role',
      '--type',
      '--other-user',
      '--host',
      '--close-from',
      '--command-timeout',
      '--chroot',
      '--login-class',
      '--auth-type',
    ],
    longFlags: ['--login'],
    assignments: true,
  },
  doas: { shortArg: 'uC' },
  pkexec: { longArg: ['--user'] },
  runuser: {
    shortArg: 'ugGsw',
    longArg: ['--user', '--group', '--supp-group', '--shell', '--whitelist-environment'],
    scriptOption: 'c',
    scriptLong: ['--command', '--session-command'],
  },
  su: {
    shortArg: 'gGsw',
    longArg: ['--group', '--supp-group', '--shell', '--whitelist-environment'],
    scriptOption: 'c',
    scriptLong: ['--command', '--session-command'],
  },
  env: {
    // -P (BSD env: the search path) takes an argument; GNU env refuses it, so reading it so is safe.
    shortArg: 'uCP',
    longArg: ['--unset', '--chdir'],
    assignments: true,
    scriptOption: 'S',
    scriptLong: ['--split-string'],
    // `env - rm -rf /` and `env -- - rm -rf /` run rm with an empty environment (`env - - x` runs `-`); read as
    // the command `-`, they passed a deny rule on rm.
    dashOption: true,
  },
  command: {},
  builtin: {},
  exec: { shortArg: 'a' },
  // nice's `-10` needs no case of its own: a digit is no value-taking letter, so the word is skipped alone.
  nice: { shortArg: 'n', longArg: ['--adjustment'] },
  nohup: {},
  time: { shortArg: 'fo', longArg: ['--format', '--output'] },
  timeout: { shortArg: 'sk', longArg: ['--signal', '--kill-after'], positional: 1 },
  stdbuf: { shortArg: 'ioe', longArg: ['--input', '--output', '--error'] },
  setsid: {},
  ionice: { shortArg: 'cnp', longArg: ['--class', '--classdata', '--pid'] },
  chrt: { positional: 1 },
  taskset: { positional: 1 },
  flock: {
    shortArg: 'wE',
    longArg: ['--timeout', '--conflict-exit-code'],
    positional: 1,
    scriptOption: 'c',
    scriptLong: ['--command'],
  },
  unbuffer: {},
  coproc: {},
  caffeinate: { shortArg: 'tw' },
  xargs: {
    shortArg: 'ILnPsdEa',
    // --replace, --max-lines and --eof take a value only with `=` (GNU findutils 4.9: `xargs --replace echo X{}`
    // runs echo), so they are not listed: their next word is the command.
    longArg: ['--max-args', '--max-procs', '--max-chars', '--delimiter', '--arg-file'],
  },
  // -d/--differences take a value only attached (`-dpermanent`): `watch -d rm -rf /` runs rm.
  watch: { shortArg: 'nq', longArg: ['--interval', '--equexit'] },
  ssh: { shortArg: 'bcDEeFIiJLlmOopQRSWw', positional: 1 },
  parallel: { shortArg: 'jSIdaP', longArg: ['--jobs', '--sshlogin', '--delimiter', '--arg-file'] },
  // Found by an audit: each ran `rm x` past a deny rule on rm, read as no wrapper at all.
  chroot: { longArg: ['--groups', '--userspec'], positional: 1 },
  script: {
    shortArg: 'IOBTmEo',
    longArg: ['--log-in', '--log-out', '--log-io', '--log-timing', '--logging-format', '--echo', '--output-limit'],
    scriptOption: 'c',
    scriptLong: ['--command'],
    scriptOnly: true,
  },
  // The namespace options (`-m`, `--mount[=<file>]`, `--kill-child[=…]`, `-r`/`-w` of nsenter) take a value only
  // attached, so they are flags here.
  unshare: {
    shortArg: 'RwSG',
    longArg: [
      '--root',
      '--wd',
      '--setuid',
      '--setgid',
      '--propagation',
      '--setgroups',
      '--monotonic',
      '--boottime',
      '--map-user',
      '--map-group',
      '--map-users',
      '--map-groups',
    ],
  },
  nsenter: { shortArg: 'tSGW', longArg: ['--target', '--setuid', '--setgid', '--wdns'] },
  setpriv: {
    longArg: [
      '--ambient-caps',
      '--inh-caps',
      '--bounding-set',
      '--ruid',
      '--euid',
      '--rgid',
      '--egid',
      '--reuid',
      '--regid',
      '--groups',
      '--securebits',
      '--pdeathsig',
      '--selinux-label',
      '--apparmor-profile',
      '--landlock-access',
      '--landlock-rule',
      '--seccomp-filter',
    ],
  },
  // The resource options (`--nofile=…`, `-n…`) take their limit only attached.
  prlimit: { shortArg: 'po', longArg: ['--pid', '--output'] },
  // e2fsprogs: `logsave [-asv] logfile cmd_prog [args…]`.
  logsave: { positional: 1 },
  strace: {
    shortArg: 'IbeaosXOSPpUEu',
    longArg: [
      '--abbrev',
      '--attach',
      '--columns',
      '--const-print-style',
      '--decode-pids',
      '--detach-on',
      '--env',
      '--fault',
      '--inject',
      '--interruptible',
      '--kvm',
      '--output',
      '--raw',
      '--read',
      '--signal',
      '--status',
      '--string-limit',
      '--summary-columns',
      '--summary-sort-by',
      '--summary-syscall-overhead',
      '--trace',
      '--trace-path',
      '--user',
      '--verbose',
      '--write',
    ],
  },
  // valgrind's options carry their values with `=` (`--tool=memcheck`).
  valgrind: {},
  fakeroot: { shortArg: 'lfisb', longArg: ['--lib', '--faked', '--fd-base'] },
  // setarch's first word is the architecture unless it is an option (read in unwrapCommand); its options are flags.
  setarch: {},
  linux32: {},
  linux64: {},
  i386: {},
  x86_64: {},
  // dbus 1.14 reads `--config-file FILE` and `--config-file=FILE` alike.
  'dbus-run-session': { longArg: ['--config-file', '--dbus-daemon'] },
  // dpkg 1.21: `start-stop-daemon --start --exec <program> -- <argument>…` runs `--startas`, else `--exec`.
  'start-stop-daemon': {
    shortArg: 'pxnugcsardNPIkOR',
    longArg: [
      '--pid',
      '--ppid',
      '--pidfile',
      '--exec',
      '--name',
      '--user',
      '--group',
      '--chuid',
      '--signal',
      '--startas',
      '--chroot',
      '--chdir',
      '--nicelevel',
      '--procsched',
      '--iosched',
      '--umask',
      '--notify-timeout',
      '--output',
      '--retry',
    ],
    longFlags: ['--start', '--stop', '--status'],
  },
};

/** Shells whose `-c` argument is a script. */
export const SHELLS = new Set([
  'bash',
  'sh',
  'zsh',
  'dash',
  'ksh',
  'ash',
  'mksh',
  'busybox',
  'fish',
  'rbash',
  'yash',
  'posh',
  'oksh',
  'loksh',
  'ksh93',
  'pdksh',
  'tcsh',
  'csh',
]);

/** `w` as one literal shell word. */
export function quoted(w: string): string {
  return `'${w.replaceAll("'", "'\\''")}'`;
}

const ENV_ESCAPES: Record<string, string> = { t: '\t', n: '\n', v: '\v', f: '\f', r: '\r' };

/**
 * env -S's string as the shell script that gives the same words: GNU env 9.1 splits it itself, with escapes of
 * its own (`\_` is a space in double quotes and splits words outside them, `\t \n \v \f \r`, `\\ \" \' \# \$`,
 * `\c` ends the string), quotes, `#` starting a comment at a word's start, and `${NAME}` for a variable, kept as
 * an expansion (its value is unknown). Read as shell, `env -S 'rm\_x'` was the word `rm_x`; env runs `rm x`. A
 * string env refuses (an unknown escape, a bare `$`, an open quote) runs nothing and is returned as it was.
 */
export function decodeEnvSplit(s: string): string {
  if (!/[\\'"$#]/.test(s)) return s;
  const words: string[] = [];
  let word: string | undefined; // the current word as shell text, once it has begun
  let text = ''; // its literal characters not yet quoted
  let quote: "'" | '"' | undefined;
  const add = (chars: string) => {
    word ??= '';
    text += chars;
  };
  const end = () => {
    if (word !== undefined) words.push(word + (text !== '' || word === '' ? quoted(text) : ''));
    word = undefined;
    text = '';
  };
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote === undefined && /[ \t\n\v\f\r]/.test(c)) end();
    else if (quote === undefined && c === '#' && word === undefined) break;
    else if (c === quote) quote = undefined;
    else if (quote === undefined && (c === "'" || c === '"')) {
      quote = c;
      add('');
    } else if (c === '\\' && quote === "'") {
      const next = s[i + 1];
      if (next === '\\' || next === "'") i++;
      add(next === '\\' || next === "'" ? next : c);
    } else if (c === '\\') {
      const next = s[++i];
      if (next === '_' && quote === undefined) end();
      else if (next === '_') add(' ');
      else if (next === 'c' && quote === undefined) break;
      else if (next !== undefined && ENV_ESCAPES[next] !== undefined) add(ENV_ESCAPES[next]);
      else if (next !== undefined && '\\"\'#$'.includes(next)) add(next);
      else return s;
    } else if (c === '$' && quote !== "'") {
      const m = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}/.exec(s.slice(i));
      if (!m) return s;
      word = `${word ?? ''}${text === '' ? '' : quoted(text)}"${m[0]}"`;
      text = '';
      i += m[0].length - 1;
    } else add(c);
  }
  if (quote !== undefined) return s;
  end();
  return words.join(' ');
}
