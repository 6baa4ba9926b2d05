/**
 * @module
 * What a command or a statement reads as a script besides its words (`shell-parse.ts` calls these): the
 * here-docs and here-strings fed to a reader of its input (through wrappers, `eval`, a shell string, a function),
 * to xargs (words of the command it runs), or to a bare `exec` (the shell's own next lines); the input of a
 * compound statement (`{ sh; } <<EOF`); the pipeline tree-sitter-bash hides in a here-doc; the `$(…)` a quoted
 * array subscript runs when bash evaluates it later; and reserved words where a command's name goes.
 */
import type { Node } from 'web-tree-sitter';
import { lastCommand, redirectBodies, stdinScripts } from './shell-node-words.ts';
import { handlePipeline, heredocPipeline, pipelineStages } from './shell-pipes.ts';
import { clip } from './shell-refusals.ts';
import { type Ctx, SHELL_LIMITS } from './shell-split-state.ts';
import {
  holdsStdinReader,
  innermostArgv,
  readsStdinScript,
  scriptReadsStdin,
  xargsLayer,
  xargsScript,
} from './shell-stdin.ts';

type Parse = (state: Ctx['state'], script: string, via: string | undefined, depth: number) => void;

/** The here-docs and here-strings a command (`argv`, canonical) reads as a script, parsed as such. */
export function stdinInput(node: Node, argv: string[], ctx: Ctx, parse: Parse): void {
  const { state, depth } = ctx;
  const bodies = stdinScripts(node);
  if (bodies.length === 0) return;
  const inner = innermostArgv(argv, SHELL_LIMITS.maxDepth);
  if (readsStdinScript(argv, state.parser, state.defined)) {
    for (const script of bodies) parse(state, script, `${argv[0]} <<`, depth + 1);
  } else if (xargsLayer(argv)) {
    for (const input of bodies) {
      const script = xargsScript(argv, input);
      if (script !== undefined) parse(state, script, 'xargs <<', depth + 1);
    }
  } else if (inner.length === 1 && inner[0] === 'exec') {
    // `exec <<<'rm x'`: the shell's own input is the here-string from then on, and skein's interactive bash
    // reads its next lines from it.
    for (const script of bodies) parse(state, script, 'exec <<', depth + 1);
  }
}

/** A redirected statement's input where tree-sitter-bash or a compound statement hides who reads it. */
export function redirectedStatement(node: Node, ctx: Ctx, parse: Parse): void {
  const body = node.childForFieldName('body');
  // `cat <<EOF | sh` (also after `ls &&`): tree-sitter-bash puts `| sh` inside the here-doc, and bash pipes the
  // command the here-doc is on into it.
  const tail = heredocPipeline(node);
  if (tail) handlePipeline([lastCommand(body) ?? node, ...pipelineStages(tail)], ctx, parse);
  // `if true; then sh; fi <<<'rm x'`, `{ sh; } <<EOF`: a compound statement's input is its commands'.
  if (body && !lastCommand(body) && holdsStdinReader(body, ctx.state.parser, ctx.state.defined)) {
    for (const script of redirectBodies(node)) parse(ctx.state, script, 'compound <<', ctx.depth + 1);
  }
}

/** Backticks in an unquoted here-doc's body run, but tree-sitter-bash leaves them as text: each is a script. */
export function heredocBackticks(body: Node, ctx: Ctx, parse: Parse): void {
  const start = body.parent?.namedChildren.find((c) => c?.type === 'heredoc_start')?.text ?? '';
  if (/['"\\]/.test(start)) return;
  for (const m of body.text.matchAll(/(?<!\\)`([^`]*)`/g)) {
    ctx.state.unsafe.push(clip(m[0]));
    parse(ctx.state, m[1]!, ctx.via ?? 'here-doc', ctx.depth + 1);
  }
}

/** tree-sitter-bash leaves backticks inside `${…}` as a word: `${x:-`rm -rf /`}` runs rm. Parse each. */
export function backticksInWord(word: Node, ctx: Ctx, parse: Parse): void {
  const pairs = /(?<!\\)`([^`]*)`/g;
  for (const m of word.text.matchAll(pairs)) parse(ctx.state, m[1]!, ctx.via, ctx.depth + 1);
  if (word.text.replace(pairs, '').includes('`'))
    ctx.state.errors.push(`an unpaired backtick in "${clip(word.text)}" could start a command the check cannot see`);
}

/**
 * The `$(…)` and backticks after a `[` in a quoted string: bash runs them when it evaluates the string as an
 * array subscript later (`x='a[$(rm y)]'; let z=x`, `declare -i n='a[$(rm y)]'`), which the split cannot follow.
 * Each is judged as a script of its own.
 */
export function quotedSubscripts(node: Node, ctx: Ctx, parse: Parse): void {
  const text = node.text;
  const open = text.indexOf('[');
  if (open < 0) return;
  const after = text.slice(open);
  for (const m of after.matchAll(/(?<!\\)`([^`]*)`/g)) parse(ctx.state, m[1]!, 'a quoted subscript', ctx.depth + 1);
  for (let i = after.indexOf('$('); i >= 0; i = after.indexOf('$(', i + 2)) {
    let level = 0;
    let end = i + 1;
    for (; end < after.length; end++) {
      if (after[end] === '(') level++;
      else if (after[end] === ')' && --level === 0) break;
    }
    parse(ctx.state, after.slice(i + 2, end), 'a quoted subscript', ctx.depth + 1);
  }
}

/** Words bash reads as syntax, never as a command's name. */
const RESERVED = new Set([
  '{',
  '}',
  '!',
  'if',
  'then',
  'elif',
  'else',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'for',
  'case',
  'esac',
  'select',
  'function',
  'in',
  '[[',
  ']]',
]);

/**
 * Why a command named by a reserved word is refused: tree-sitter-bash reads `! { rm x; }`, `time { rm x; }`
 * and `coproc N if …` as a command `{` (or `if`, through the wrapper) with `rm x` as its words, while bash runs
 * the compound command; or undefined.
 */
export function reservedName(argv: string[]): string | undefined {
  const name = argv[0];
  if (name === undefined || !RESERVED.has(name)) return undefined;
  return (
    `"${clip(argv.join(' '))}" has the reserved word ${JSON.stringify(name)} where a command's name goes: bash ` +
    'reads a compound command there (after !, time or coproc) that the check cannot read; write the compound ' +
    'command on its own, or the commands in it one by one'
  );
}

/**
 * A function or alias whose body reads a script from its input (`f(){ sh; }`, `alias s=sh`, `f(){ eval sh; }`)
 * is marked for a person to decide: it outlives the command that defines it, and a later command feeding it
 * (`f <<<'rm x'`) is split without it, so the script it runs would go unjudged.
 */
export function laterReader(name: string, body: string, ctx: Ctx): void {
  const { parser } = ctx.state;
  if (scriptReadsStdin(body, parser, new Map(), 0)) ctx.state.unsafe.push(clip(`${name}: ${body}`));
}
