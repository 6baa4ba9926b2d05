/**
 * @module
 * Command lines that run `rm -f <target>` through bash's own ways of hiding a command: the generator of the
 * shell gate's differential fuzz test (`shell-fuzz.integration.test.ts`). A case is a spelling of the word rm,
 * then layers, innermost first, each of which runs what it wraps: a wrapper program, a shell string (quoted one of
 * three ways, or fed on stdin), a compound command, a substitution, a function, an alias, a redirect. Every layer
 * keeps the line valid bash, so most cases do run rm (the test checks that share, so the fuzzer cannot go vacuous).
 */
import fc from 'fast-check';

/** The word the target is written as, replaced per case (`keep-<n>.txt`). */
export const TARGET = 'KEEPFILE';

/** Single quotes: every character literal. */
export const sq = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
/** Double quotes: `\`, `"`, `$` and backticks escaped. */
export const dq = (s: string): string => `"${s.replace(/[\\"$`]/g, '\\$&')}"`;
/** ANSI-C quotes, with newlines as `\n`. */
export const ansi = (s: string): string => `$'${s.replace(/[\\']/g, '\\$&').replace(/\n/g, '\\n')}'`;

const QUOTES = [sq, dq, ansi] as const;

/**
 * How a line can spell the program rm: quoted, escaped, expanded, by path, through `command`, from a variable or
 * an array, from a brace expansion, or through a function or an alias defined on an earlier line.
 */
export const RM_SPELLINGS: readonly string[] = [
  'rm',
  "r''m",
  '"rm"',
  '\\rm',
  'r\\m',
  "$'rm'",
  "$'\\x72m'",
  "$'\\162m'",
  '${x:-rm}',
  'r${x}m',
  'r$(:)m',
  '{rm,}',
  '/usr/bin/rm',
  '/bin/rm',
  'command rm',
  'command -p rm',
  'x=rm; $x',
  'x=rm; "$x"',
  'a=(rm); ${a[0]}',
  'a=(rm); "${a[@]}"',
  'read -r x <<<rm; $x',
  'printf -v x rm; $x',
  'declare x=rm; $x',
  'f() { rm "$@"; }; f',
  'alias r=rm\nr',
  // Names built at run time: an ask at least, never an allow.
  '$(echo rm)',
  '`echo rm`',
  "$(printf '\\x72m')",
  'x=r; y=m; $x$y',
  '$(rev <<<mr)',
  '$(echo cm0= | base64 -d)',
  'X=RM; ${X,,}',
  'x=rq; ${x/q/m}',
  'x=rm; y=x; ${!y}',
  'x=rmdir; ${x:0:2}',
  'set -- rm; "$@"',
  "$'\\u0072m'",
  'hash -p /usr/bin/rm h; h',
  'BASH_ALIASES[r]=rm\nr',
  'BASH_CMDS[h]=/usr/bin/rm; h',
  'eval r""m',
  'IFS=.; x=rm.-f; $x',
];

/**
 * A layer: how it wraps `inner`; whether `inner` must be a simple command (a program and its words, on one
 * line); whether what it makes is one.
 */
type Layer = {
  name: string;
  simpleOnly: boolean;
  simple?: boolean;
  wrap: (inner: string, quote: (s: string) => string) => string;
};

/** A here-doc delimiter `inner` does not use (nested here-docs each end at their own). */
const tag = (inner: string): string => `EOF${inner.match(/EOF\d*/g)?.length ?? 0}`;

/** Wrapper programs and prefixes that run the simple command after them. */
const ARGV_WRAPPERS = [
  'env',
  'env -i',
  'env A=1',
  'A=1',
  'nice',
  'nice -n 5',
  'timeout 5',
  'command',
  'nohup',
  'stdbuf -o0',
  'setsid -w',
  'time',
  'exec',
  'xargs -0 -a /dev/null',
  '0</dev/null',
  '>/dev/null',
  '2>&1',
  '\\command',
  'builtin command',
  'timeout -s KILL 5',
  'ionice -c3',
  'taskset -c 0',
  'flock /tmp/fuzz.lock',
  'env -u HOME --',
  'coproc',
  'nice --adjustment=1',
  'stdbuf --output=L',
];

export const LAYERS: readonly Layer[] = [
  ...ARGV_WRAPPERS.map((w) => ({
    name: w,
    simpleOnly: true,
    simple: w !== 'exec',
    // exec replaces the shell: in a subshell, so what follows still runs.
    wrap: (inner: string) => (w === 'exec' ? `(exec ${inner})` : `${w} ${inner}`),
  })),
  { name: 'bash -c', simpleOnly: false, simple: true, wrap: (c, q) => `bash -c ${q(c)}` },
  { name: 'sh -c', simpleOnly: false, simple: true, wrap: (c, q) => `sh -c ${q(c)}` },
  { name: 'eval', simpleOnly: false, simple: true, wrap: (c, q) => `eval ${q(c)}` },
  { name: 'bash <<<', simpleOnly: false, simple: true, wrap: (c, q) => `bash <<<${q(c)}` },
  { name: 'printf | sh', simpleOnly: false, wrap: (c, q) => `printf '%s\\n' ${q(c)} | sh` },
  { name: 'echo | bash', simpleOnly: false, wrap: (c, q) => `echo ${q(c)} | bash` },
  { name: 'heredoc bash', simpleOnly: false, wrap: (c) => `bash <<'${tag(c)}'\n${c}\n${tag(c)}` },
  {
    name: 'heredoc sh unquoted',
    simpleOnly: false,
    wrap: (c) => `sh <<${tag(c)}\n${c.replace(/[\\$`]/g, '\\$&')}\n${tag(c)}`,
  },
  { name: 'source stdin', simpleOnly: false, simple: true, wrap: (c, q) => `source /dev/stdin <<<${q(c)}` },
  { name: 'bash -c $0', simpleOnly: false, simple: true, wrap: (c, q) => `bash -c '$0' ${q(c)}` },
  { name: 'bash -c eval "$1"', simpleOnly: false, simple: true, wrap: (c, q) => `bash -c 'eval "$1"' _ ${q(c)}` },
  { name: 'bash -s', simpleOnly: false, simple: true, wrap: (c, q) => `bash -s <<<${q(c)}` },
  { name: 'bash /dev/stdin', simpleOnly: false, simple: true, wrap: (c, q) => `bash /dev/stdin <<<${q(c)}` },
  { name: 'dash -c', simpleOnly: false, simple: true, wrap: (c, q) => `dash -c ${q(c)}` },
  { name: 'bash -O -c', simpleOnly: false, simple: true, wrap: (c, q) => `bash -O extglob --norc -c ${q(c)}` },
  { name: 'source <()', simpleOnly: false, simple: true, wrap: (c, q) => `source <(printf '%s\n' ${q(c)})` },
  { name: 'bash <()', simpleOnly: false, simple: true, wrap: (c, q) => `bash <(printf '%s\n' ${q(c)})` },
  { name: 'script -c', simpleOnly: false, simple: true, wrap: (c, q) => `script -qec ${q(c)} /dev/null` },
  { name: 'xargs -I', simpleOnly: true, wrap: (c) => `echo x | xargs -I{} ${c}` },
  { name: 'find -exec', simpleOnly: true, wrap: (c) => `find . -maxdepth 0 -exec ${c} \\;` },
  { name: 'mapfile -C', simpleOnly: false, wrap: (c, q) => `mapfile -C ${q(`${c};:`)} -c 1 <<<x` },
  { name: 'alias body', simpleOnly: false, wrap: (c, q) => `alias q=${q(c)}\nq` },
  { name: 'subshell function', simpleOnly: false, wrap: (c) => `function h (\n${c}\n)\nh` },
  { name: 'until', simpleOnly: false, wrap: (c) => `until\n${c}\ndo break; done` },
  { name: 'if !', simpleOnly: true, wrap: (c) => `if ! ${c}; then :; fi` },
  { name: 'case $()', simpleOnly: true, wrap: (c) => `case $(${c}) in *) ;; esac` },
  { name: 'diff <()', simpleOnly: false, wrap: (c) => `diff <(\n${c}\n) /dev/null` },
  { name: '>()', simpleOnly: false, wrap: (c) => `echo x > >(\n${c}\n)` },
  { name: 'heredoc $()', simpleOnly: false, wrap: (c) => `cat <<${tag(c)}\n$(\n${c}\n)\n${tag(c)}` },
  { name: 'here-string $()', simpleOnly: true, wrap: (c) => `cat <<<"$(${c})"` },
  { name: 'trap DEBUG', simpleOnly: false, wrap: (c, q) => `trap ${q(`trap - DEBUG; ${c}`)} DEBUG; :` },
  { name: 'trap ERR', simpleOnly: false, wrap: (c, q) => `trap ${q(`trap - ERR; ${c}`)} ERR; false` },
  { name: 'xargs sh -c', simpleOnly: false, wrap: (c, q) => `echo x | xargs sh -c ${q(c)}` },
  { name: 'brace group', simpleOnly: false, wrap: (c) => `{ ${c}\n}` },
  { name: 'subshell', simpleOnly: false, wrap: (c) => `(\n${c}\n)` },
  { name: 'if', simpleOnly: false, wrap: (c) => `if true; then\n${c}\nfi` },
  { name: 'for', simpleOnly: false, wrap: (c) => `for i in 1; do\n${c}\ndone` },
  { name: 'while', simpleOnly: false, wrap: (c) => `while true; do\n${c}\nbreak; done` },
  { name: 'case', simpleOnly: false, wrap: (c) => `case x in x)\n${c}\n;; esac` },
  { name: '&&', simpleOnly: false, wrap: (c) => `true && ${c}` },
  { name: '||', simpleOnly: false, wrap: (c) => `false || ${c}` },
  { name: '!', simpleOnly: true, wrap: (c) => `! ${c}` },
  { name: 'pipe out', simpleOnly: true, wrap: (c) => `${c} | cat` },
  { name: 'pipe in', simpleOnly: true, wrap: (c) => `true | ${c}` },
  { name: 'function', simpleOnly: false, wrap: (c) => `g() {\n${c}\n}; g` },
  { name: 'echo $()', simpleOnly: false, wrap: (c) => `echo $(\n${c}\n)` },
  { name: 'assign $()', simpleOnly: false, wrap: (c) => `y=$(\n${c}\n)` },
  { name: 'echo "$()"', simpleOnly: false, wrap: (c) => `echo "$(\n${c}\n)"` },
  { name: 'backticks', simpleOnly: true, wrap: (c) => `: \`${c.replace(/[\\`$]/g, '\\$&')}\`` },
  { name: 'process substitution', simpleOnly: false, wrap: (c) => `cat <(\n${c}\n)` },
  { name: 'default value', simpleOnly: true, wrap: (c) => `echo \${u:-$(${c})}` },
  { name: '[[ ]]', simpleOnly: true, wrap: (c) => `[[ -n $(${c}) ]]` },
  // Arithmetic evaluates a subscript's `$(…)`, also in a variable's value: names bash evaluates when assigned, an
  // integer variable, a comparison in [[ ]], a substring's offset.
  ...['OPTIND', 'RANDOM', 'SRANDOM', 'HISTCMD'].map((name) => ({
    name: `${name}=`,
    simpleOnly: true,
    wrap: (c: string, q: (s: string) => string) => `v=${q(`a[$(${c})]`)}; ${name}=v`,
  })),
  ...[
    '[[ -v a[v] ]]',
    "test -v 'a[v]'",
    "read 'a[v]' <<<1",
    'exec {a[v]}>/dev/null',
    'echo $[v]',
    "printf -v 'a[v]' 1",
    'a[v]=1',
    'a=([v]=1)',
    'a=(1); echo ${a[@]:v}',
  ].map((context) => ({
    name: context,
    simpleOnly: true,
    wrap: (c: string, q: (s: string) => string) => `v=${q(`b[$(${c})]`)}; ${context}`,
  })),
  { name: 'declare -i', simpleOnly: true, wrap: (c, q) => `declare -i n; n=${q(`a[$(${c})]`)}` },
  { name: '[[ -eq ]]', simpleOnly: true, wrap: (c, q) => `v=${q(`a[$(${c})]`)}; [[ v -eq 0 ]]` },
  { name: 'substring', simpleOnly: true, wrap: (c, q) => `v=${q(`a[$(${c})]`)}; echo \${PWD:v}` },
  { name: 'trap', simpleOnly: false, wrap: (c, q) => `trap ${q(c)} EXIT` },
  { name: 'command_not_found', simpleOnly: false, wrap: (c) => `command_not_found_handle() {\n${c}\n}; nosuchprogram` },
];

/** One case: the spelling of rm and the layers around it, innermost first, each with its quoting. */
export type FuzzCase = { spelling: number; layers: Array<{ layer: number; quote: number }> };

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.record({
  spelling: fc.nat({ max: RM_SPELLINGS.length - 1 }),
  layers: fc.array(
    fc.record({ layer: fc.nat({ max: LAYERS.length - 1 }), quote: fc.nat({ max: QUOTES.length - 1 }) }),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
});

/**
 * The line of a case, its rm removing `target` (or `program` run on it, spelled plainly, for a control). A layer
 * that needs a simple command around one that is not (a wrapper program around `x=rm; $x`, or around a compound)
 * is skipped: bash would not run it.
 */
export function lineOf(c: FuzzCase, target: string, program?: string): string {
  let line = `${program ?? RM_SPELLINGS[c.spelling]} -f ${TARGET}`;
  let simple = !/[;\n]/.test(line);
  for (const { layer, quote } of c.layers) {
    const l = LAYERS[layer]!;
    if (l.simpleOnly && !simple) continue;
    line = l.wrap(line, QUOTES[quote]!);
    simple = l.simple === true;
  }
  return line.replaceAll(TARGET, target);
}
