/**
 * @module
 * What a command or a statement reads as a script besides its words (`shell-parse.ts` calls these): the
 * here-docs and here-strings fed to a reader of its input (through wrappers, `eval`, a shell string, a function),
 * to xargs (words of the command it runs), or to a bare `exec` (the shell's own next lines); the input of a
 * compound statement (`{ sh; } <<EOF`); the pipeline tree-sitter-bash hides in a here-doc; backticks bash runs
 * where the grammar sees text; and reserved words where a command's name goes.
 */
import type { Node } from 'web-tree-sitter';
import { unwrapCommand } from '../../machines/permission/shell-wrappers.ts';
import { laterScripts } from './shell-later.ts';
import { lastCommand, redirectBodies, stdinScripts, wordText } from './shell-node-words.ts';
import { handlePipeline, heredocPipeline, pipelineStages } from './shell-pipes.ts';
import { clip, shadowProblem, startsItself } from './shell-refusals.ts';
import { type Ctx, type ParseScript, SHELL_LIMITS } from './shell-split-state.ts';
import {
  canonicalArgv,
  holdsStdinReader,
  innermostArgv,
  readsStdinScript,
  scriptReadsStdin,
  xargsLayer,
  xargsRunsUnseen,
  xargsScript,
} from './shell-stdin.ts';

/** The here-docs and here-strings a command (`argv`, canonical) reads as a script, parsed as such. */
export function stdinInput(node: Node, argv: string[], ctx: Ctx, parse: ParseScript): void {
  const { state, depth } = ctx;
  const inner = innermostArgv(argv, SHELL_LIMITS.maxDepth);
  // `exec` running no command (`exec`, `exec -a x --`) with its input moved (`exec <&3`, `exec 0<f`): the
  // interactive shell reads its next lines from there, text the line does not spell out. A person decides.
  const bareExec = inner[0] === 'exec' && !unwrapCommand(inner).some((r) => (r.argv?.length ?? 0) > 0 || r.script);
  if (bareExec && movesInput(node)) state.unsafe.push(`${clip(node.text)} (the shell reads its next lines there)`);
  const bodies = stdinScripts(node);
  // xargs running what it reads as a program or script, from a file or the terminal (not a pipe: the pipeline
  // judges what it is given): a person decides.
  if (xargsRunsUnseen(argv, bodies.length > 0) && !pipedInto(node))
    state.unsafe.push(`${clip(node.text)} (xargs runs what it reads)`);
  if (bodies.length === 0) return;
  if (readsStdinScript(argv, state.parser, state.defined)) {
    for (const script of bodies) parse(state, script, `${argv[0]} <<`, depth + 1);
  } else if (xargsLayer(argv)) {
    for (const input of bodies) {
      const script = xargsScript(argv, input);
      if (script !== undefined) parse(state, script, 'xargs <<', depth + 1);
    }
  } else if (bareExec) {
    // `exec <<<'rm x'`: the shell's own input is the here-string from then on, and skein's interactive bash
    // reads its next lines from it.
    for (const script of bodies) parse(state, script, 'exec <<', depth + 1);
  }
}

/** A redirected statement's input where tree-sitter-bash or a compound statement hides who reads it. */
export function redirectedStatement(node: Node, ctx: Ctx, parse: ParseScript): void {
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
export function heredocBackticks(body: Node, ctx: Ctx, parse: ParseScript): void {
  const start = body.parent?.namedChildren.find((c) => c?.type === 'heredoc_start')?.text ?? '';
  if (/['"\\]/.test(start)) return;
  for (const inner of backtickScripts(body.text)) {
    ctx.state.unsafe.push(clip(`\`${inner}\``));
    parse(ctx.state, inner, ctx.via ?? 'here-doc', ctx.depth + 1);
  }
}

/**
 * The commands between unescaped backticks in an unquoted here-doc's text, reading escapes as bash does there:
 * `\\` is one backslash, so the backtick after `\\` opens a substitution (`echo \\`rm x``), and `\`` inside is
 * a backtick of the command. An unclosed one runs to the end.
 */
export function backtickScripts(text: string): string[] {
  const out: string[] = [];
  let inner: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      if (inner !== undefined) inner += text[i + 1] === '`' ? '`' : c + text[i + 1];
      i++;
    } else if (c === '`') {
      if (inner === undefined) inner = '';
      else {
        out.push(inner);
        inner = undefined;
      }
    } else if (inner !== undefined) inner += c;
  }
  if (inner !== undefined) out.push(inner);
  return out;
}

/** tree-sitter-bash leaves backticks inside `${…}` as a word: `${x:-`rm -rf /`}` runs rm. Parse each. */
export function backticksInWord(word: Node, ctx: Ctx, parse: ParseScript): void {
  const pairs = /(?<!\\)`([^`]*)`/g;
  for (const m of word.text.matchAll(pairs)) parse(ctx.state, m[1]!, ctx.via, ctx.depth + 1);
  if (word.text.replace(pairs, '').includes('`'))
    ctx.state.errors.push(`an unpaired backtick in "${clip(word.text)}" could start a command the check cannot see`);
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
export function laterReader(name: string, body: string, ctx: Ctx, alias = false): void {
  const { parser } = ctx.state;
  if (scriptReadsStdin(body, parser, new Map(), 0) || (alias && aliasRunsWords(body)))
    ctx.state.unsafe.push(clip(`${name}: ${body}`));
}

/**
 * Whether an alias runs the words after it (`alias n=nice`, `alias e=eval`, `alias t=trap`, `alias s=source`,
 * `alias x=xargs`), or has them alias-expanded too (a value ending in a blank): `n rm x`, in this command or any
 * later one, would run rm under a name the split reads as a program of its own.
 */
function aliasRunsWords(value: string): boolean {
  if (/\s$/.test(value)) return true;
  const words = value.trim().split(/\s+/);
  // Only a plain command of plain words is read further: a separator, redirect, assignment, quote or escape
  // (`true;`, `>/dev/null`, `A=1`, `"nice"`, `\nice`) leaves bash reading the next word as a command of its own.
  if (!words.every((w) => /^[A-Za-z0-9_./:+,@%=-]+$/.test(w)) || words[0]!.includes('=')) return true;
  const first = canonicalArgv(words)[0] ?? '';
  if (['source', '.', 'exec', 'xargs', 'alias', 'builtin', 'command'].includes(first)) return true;
  const probe = [...canonicalArgv(words), 'rm', 'x'];
  return (
    unwrapCommand(probe).some((r) => r.script !== undefined || (r.argv?.includes('rm') ?? false)) ||
    laterScripts(probe).length > 0
  );
}

/** Whether a command (or the redirected statement it is in) moves its standard input: `<f`, `0<f`, `<&3`, `<>f`. */
function movesInput(command: Node): boolean {
  const holders = [command, ...(command.parent?.type === 'redirected_statement' ? [command.parent] : [])];
  return holders.some((h) =>
    h.namedChildren.some((c) => c?.type === 'file_redirect' && /^0?<(?!<)/.test(c.text.replace(/\s+/g, ''))),
  );
}

/**
 * A function's definition: refused under a name skein's shell relies on (`shadowProblem`), a fork bomb when it
 * starts itself in the background (`startsItself`), remembered for the calls after it (`defined`), and asked
 * about when its body reads a script from its input (`laterReader`).
 */
export function functionDefinition(node: Node, ctx: Ctx): void {
  const name = node.childForFieldName('name');
  const body = node.childForFieldName('body');
  if (!name || !body) return;
  const text = wordText(name);
  const problem = shadowProblem(text);
  if (problem) ctx.state.errors.push(problem);
  const how = startsItself(text, body);
  if (how) ctx.state.forkBomb ??= `the function ${text} starts itself ${how}`;
  ctx.state.defined.set(text, body.text);
  laterReader(text, body.text, ctx);
}

/** Whether a command is a later stage of a pipeline (its input is the stage before's). */
function pipedInto(command: Node): boolean {
  const stage = command.parent?.type === 'redirected_statement' ? command.parent : command;
  return stage.parent?.type === 'pipeline' && !stage.parent.firstNamedChild?.equals(stage);
}
