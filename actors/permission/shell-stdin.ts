/**
 * @module
 * Which commands read a script from their input, seen through what runs them: a wrapper (`env sh`, `nice sh`),
 * a shell string or `eval` holding such a reader (`bash -c 'cat | sh'`, `eval sh`), or a function or alias the
 * same input defined (`f(){ sh; }; f <<<…`). And the literal texts a pipeline's stage holds (echo's and printf's
 * words, here-doc and here-string bodies), read when they reach a shell through a stage the split cannot follow.
 */
import type { Node, Parser } from 'web-tree-sitter';
import { canonicalName } from '../../machines/permission/shell-words.ts';
import { unwrapCommand } from '../../machines/permission/shell-wrappers.ts';
import { namesDescriptor, readsScriptFromStdin } from '../../machines/permission/shell-stdin-readers.ts';
import { commandWords, stdinScripts } from './shell-node-words.ts';
import { SHELL_LIMITS } from './shell-split-state.ts';

/**
 * The command a wrapped argv finally runs (`sudo A=1 nice rm x` → `rm x`), or the argv itself; at most
 * `maxDepth` wrappers are taken off.
 */
export function innermostArgv(argv: string[], maxDepth: number): string[] {
  let current = argv;
  for (let i = 0; i < maxDepth; i++) {
    const runs = unwrapCommand(current);
    const next = runs.length === 1 ? runs[0]!.argv : undefined;
    if (!next || next.length === 0) break;
    current = canonicalArgv(
      next.filter(
        (w, k) =>
          !(
            k < next.length - 1 &&
            /^[A-Za-z_][A-Za-z0-9_]*=/.test(w) &&
            next.slice(0, k).every((p) => p.includes('='))
          ),
      ),
    );
  }
  return current;
}

/** `argv` with its program named as the policy reads it (`/bin/rm` → `rm`). */
export function canonicalArgv(words: string[]): string[] {
  if (words.length === 0) return words;
  return [canonicalName(words[0]!).name, ...words.slice(1)];
}

/** Functions and aliases an input defines, by name: the text each runs. */
export type Defined = Map<string, string>;

/**
 * Whether `argv` (canonical) reads a script from its standard input: a shell reading stdin, through its wrappers,
 * or a shell string, `eval`, function or alias holding one (looked into `SHELL_LIMITS.maxDepth` deep).
 */
export function readsStdinScript(argv: string[], parser: Parser, defined: Defined, depth = 0): boolean {
  if (depth > SHELL_LIMITS.maxDepth) return true;
  const inner = innermostArgv(argv, SHELL_LIMITS.maxDepth);
  if (readsScriptFromStdin(inner)) return true;
  const body = defined.get(inner[0] ?? '');
  if (body !== undefined && scriptReadsStdin(body, parser, defined, depth + 1)) return true;
  for (const run of unwrapCommand(inner)) {
    if (run.script !== undefined && scriptReadsStdin(run.script, parser, defined, depth + 1)) return true;
  }
  return false;
}

/** Whether any command of `script` reads a script from its standard input (see `readsStdinScript`). */
export function scriptReadsStdin(script: string, parser: Parser, defined: Defined, depth: number): boolean {
  const tree = parser.parse(script);
  if (!tree) return true;
  try {
    return tree.rootNode
      .descendantsOfType('command')
      .some((c) => !!c && readsStdinScript(canonicalArgv(commandWords(c)), parser, defined, depth));
  } finally {
    tree.delete();
  }
}

/** Whether a statement that is no simple command (`{ …; }`, `if …; fi`, `(…)`) holds a command reading its input. */
export function holdsStdinReader(node: Node, parser: Parser, defined: Defined): boolean {
  return node
    .descendantsOfType('command')
    .some((c) => !!c && readsStdinScript(canonicalArgv(commandWords(c)), parser, defined));
}

/**
 * The literal texts the stages hold: each command's words (echo's and printf's, but any program may write its
 * words: `yes 'rm x'`, `expr 'rm x'`) and the bodies of here-docs and here-strings. What reaches a shell after a
 * stage the split cannot follow (`head`, `tr`, a subshell) is made from them, if from anything the line spells out.
 */
export function stageLiterals(stages: Node[]): string[] {
  const out: string[] = [];
  for (const stage of stages) {
    const commands = stage.type === 'command' ? [stage] : stage.descendantsOfType('command').filter((c) => !!c);
    for (const c of commands as Node[]) {
      const argv = innermostArgv(canonicalArgv(commandWords(c)), SHELL_LIMITS.maxDepth);
      // Any program's words may be what it writes (`yes 'rm x'`, `expr 'rm x'`, `basename 'rm x'`).
      if (argv.length > 1) out.push(argv.slice(1).join(' ').replace(/\\n/g, '\n'));
      out.push(...stdinScripts(c));
    }
  }
  return out;
}

/**
 * The commands xargs runs with `input`, when `wrapped` runs xargs (`nice xargs env`); else undefined. The input
 * is cut into items as xargs cuts it (`xargsItems`); each command is its words and the items quoted, so the
 * script read is what xargs runs: all items after the command, each one alone too when xargs runs batches
 * (-n, -L, -l, and -I, a line each: `xargs -n1 sh -c` runs each item as a script), or each put in place of
 * the replace string.
 */
export function xargsScript(wrapped: string[], input: string): string | undefined {
  const argv = xargsLayer(wrapped);
  if (!argv) return undefined;
  const runs = unwrapCommand(argv);
  const inner = runs.length === 1 ? runs[0]!.argv : undefined;
  if (!inner || inner.length === 0) return undefined;
  const { replace, delimiter, batches } = xargsOptions(argv, inner.length);
  const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
  const command = inner.map(quote).join(' ');
  const items = xargsItems(input, delimiter, replace !== undefined);
  if (replace !== undefined) {
    const r = replace;
    return items.map((item) => inner.map((w) => quote(w.split(r).join(item))).join(' ')).join('\n');
  }
  const all = `${command} ${items.map(quote).join(' ')}`;
  return batches ? [all, ...items.map((item) => `${command} ${quote(item)}`)].join('\n') : all;
}

/**
 * xargs's input items: pieces between delimiters, whole (-0, -d); lines, leading blanks dropped (-I); else words
 * between blanks. Outside -0 and -d, quotes group and are removed and a backslash takes the next character as it
 * is (GNU xargs; a `#` is no comment).
 */
export function xargsItems(input: string, delimiter: string | undefined, lines: boolean): string[] {
  if (delimiter !== undefined) {
    const d = { '\\n': '\n', '\\t': '\t', '\\0': '\0' }[delimiter] ?? delimiter;
    return input
      .replace(/\n$/, '')
      .split(d === '' ? '\0' : d)
      .filter((p) => p !== '');
  }
  const items: string[] = [];
  let item = '';
  let open = false;
  let quote: string | undefined;
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else item += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      open = true;
    } else if (c === '\\' && i + 1 < input.length) {
      item += input[++i];
      open = true;
    } else if (c === '\n' || (!lines && (c === ' ' || c === '\t'))) {
      if (open) items.push(item);
      item = '';
      open = false;
    } else if (lines && !open && (c === ' ' || c === '\t')) {
      // -I drops the blanks a line starts with.
    } else {
      item += c;
      open = true;
    }
  }
  if (open) items.push(item);
  return items;
}

/** The argv xargs is run with, through the wrappers around it (`nice xargs env` → `xargs env`), if it is. */
export function xargsLayer(argv: string[]): string[] | undefined {
  let current = argv;
  for (let i = 0; i <= SHELL_LIMITS.maxDepth; i++) {
    if (current[0] === 'xargs') return current;
    const runs = unwrapCommand(current);
    const next = runs.length === 1 ? runs[0]!.argv : undefined;
    if (!next || next.length === 0) return undefined;
    current = canonicalArgv(next);
  }
  return undefined;
}

/** GNU xargs's short options that take a value (attached or the next word), and those that take one attached. */
const XARGS_VALUE = 'aEILnPsd';
const XARGS_OPTIONAL = 'eil';

/**
 * xargs's replace string (-I/-i/--replace), delimiter (-0/--null/-d/--delimiter), and whether it runs the input
 * in batches (-n, -L, -l, -s, -I and their long names), read from the words before its command's as getopt
 * reads them (grouped: `-rI{}`, `-tn1`, `-rd,`).
 */
function xargsOptions(
  argv: string[],
  commandWords: number,
): { replace?: string; delimiter?: string; batches: boolean; file?: string } {
  let replace: string | undefined;
  let delimiter: string | undefined;
  let file: string | undefined;
  let batches = false;
  const end = argv.length - commandWords;
  for (let i = 1; i < end; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const [key, value] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
      if (key === '--replace') replace = value ?? '{}';
      else if (key === '--null') delimiter = '\0';
      else if (key === '--delimiter') delimiter = value ?? argv[++i];
      else if (key === '--arg-file') file = value ?? argv[++i];
      else if (['--max-args', '--max-lines', '--max-chars'].includes(key)) batches = true;
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const letter = a[j]!;
      const rest = a.slice(j + 1);
      if (XARGS_VALUE.includes(letter)) {
        const value = rest || argv[++i];
        if (letter === 'I') replace = value;
        else if (letter === 'd') delimiter = value;
        else if (letter === 'a') file = value;
        if ('nLs'.includes(letter)) batches = true;
        break;
      }
      if (XARGS_OPTIONAL.includes(letter)) {
        if (letter === 'i') replace = rest || '{}';
        if (letter === 'l') batches = true;
        break;
      }
      if (letter === '0') delimiter = '\0';
    }
  }
  return {
    ...(replace === undefined ? {} : { replace }),
    ...(delimiter === undefined ? {} : { delimiter }),
    batches: batches || replace !== undefined,
    ...(file === undefined ? {} : { file }),
  };
}

/**
 * Whether xargs (through `wrapped`'s wrappers) runs as a program or script what it reads from a file or a
 * terminal the line does not spell out (`xargs -a f sh -c`, `xargs sh -c < f`): `literal` is false when no
 * here-doc or here-string feeds it.
 */
export function xargsRunsUnseen(wrapped: string[], literal: boolean): boolean {
  const argv = xargsLayer(wrapped);
  const runs = argv ? unwrapCommand(argv) : [];
  const inner = runs.length === 1 ? runs[0]!.argv : undefined;
  if (!argv || !inner || !xargsRunsInput(wrapped)) return false;
  const { file } = xargsOptions(argv, inner.length);
  return !literal || (file !== undefined && !namesDescriptor(file));
}

/**
 * Whether xargs (through `wrapped`'s wrappers) runs its input as a program or script (`xargs env`, `xargs sh -c`,
 * `xargs -I{} bash -c {}`), not as arguments of a known command (`xargs grep x`).
 */
export function xargsRunsInput(wrapped: string[]): boolean {
  const argv = xargsLayer(wrapped);
  const runs = argv ? unwrapCommand(argv) : [];
  const inner = runs.length === 1 ? runs[0]!.argv : undefined;
  if (!argv || !inner || inner.length === 0) return false;
  const probe = '\u0000input';
  const { replace } = xargsOptions(argv, inner.length);
  const filled = replace === undefined ? [...inner, probe] : inner.map((w) => w.split(replace).join(probe));
  const runsProbe = (a: string[], depth: number): boolean =>
    a[0] === probe ||
    (depth < SHELL_LIMITS.maxDepth &&
      unwrapCommand(a).some(
        (r) => r.script?.includes(probe) || (!!r.argv && runsProbe(canonicalArgv(r.argv), depth + 1)),
      ));
  return runsProbe(canonicalArgv(filled), 0);
}
