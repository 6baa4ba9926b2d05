/**
 * @module
 * What a pipeline stage runs and what it feeds the next: the innermost command a stage runs through its
 * wrappers (`sudo A=1 nice rm` runs rm), and the literal script `echo …` or `printf …` writes into a shell
 * (`echo 'rm -rf x' | sh`), split like any other script; and the pipeline as a subject of its own
 * (`handlePipeline`).
 */
import type { Node } from 'web-tree-sitter';
import { commandWords, stdinScripts } from './shell-node-words.ts';
import { clip } from './shell-refusals.ts';
import { type Ctx, push, SHELL_LIMITS } from './shell-split-state.ts';
import {
  canonicalArgv,
  holdsStdinReader,
  innermostArgv,
  readsStdinScript,
  stageLiterals,
  xargsLayer,
  xargsRunsInput,
  xargsScript,
} from './shell-stdin.ts';

export { canonicalArgv, innermostArgv } from './shell-stdin.ts';

/** The script a stage writes into a shell, and the stage's text when the shell may read other text than it. */
export type PipedScript = { script: string; unknown?: string };

/** The script `producer` (a stage's innermost argv) writes to the pipe, when it is `echo` or `printf`. */
export function pipedScript(producer: string[]): PipedScript | undefined {
  const [name, ...words] = producer;
  if (name !== 'echo' && name !== 'printf') return undefined;
  // echo reads every leading option word (`echo -n -e 'rm x'` prints `rm x`), not only the first.
  // printf's `--` ends its options: `printf -- 'rm x'` prints `rm x`.
  const text = words.slice(name === 'echo' ? echoOptions(words) : words[0] === '--' ? 1 : 0).join(' ');
  const script = text.replace(/\\n/g, '\n');
  // echo -e (or echo after `shopt -s xpg_echo`, which an earlier command may have run) and printf decode
  // escapes (`\x20`, `\0155`), and printf fills in `%` directives: `printf 'rm\x20x' | sh` runs rm, where the
  // script read as written is "rmx20x". Past `\n`, what the shell reads is not known: a person decides.
  if (script.includes('\\') || (name === 'printf' && text.includes('%'))) {
    return { script, unknown: producer.join(' ') };
  }
  return { script };
}

/** How many of `words` bash's echo reads as its options: the leading ones made of -n, -e and -E only. */
function echoOptions(words: string[]): number {
  let n = 0;
  while (n < words.length && /^-[neE]+$/.test(words[n]!)) n++;
  return n;
}

/** A pipeline stage's simple command (through a redirect around it), if it is one. */
export function stageCommand(node: Node): Node | undefined {
  if (node.type === 'command') return node;
  if (node.type === 'redirected_statement') {
    const body = node.childForFieldName('body');
    return body?.type === 'command' ? body : undefined;
  }
  return undefined;
}

/**
 * A pipeline's stages in order: nested pipelines flattened (tree-sitter-bash nests `a | b | c` after a
 * here-doc), each stage a node as the grammar gives it (a command, a redirected statement, a subshell...).
 */
export function pipelineStages(node: Node): Node[] {
  const out: Node[] = [];
  for (const c of node.namedChildren) {
    if (!c) continue;
    if (c.type === 'pipeline') out.push(...pipelineStages(c));
    else if (c.type !== 'comment') out.push(c);
  }
  return out;
}

/**
 * The rest of a pipeline that tree-sitter-bash puts inside a here-doc's redirect: for `cat <<EOF | sh`, the
 * `| sh` is a `pipeline` child of the `heredoc_redirect` (bash runs `cat | sh` with the body as cat's input).
 */
export function heredocPipeline(statement: Node): Node | undefined {
  for (const c of statement.namedChildren) {
    if (c?.type !== 'heredoc_redirect') continue;
    const tail = c.namedChildren.find((n) => n?.type === 'pipeline');
    if (tail) return tail;
  }
  return undefined;
}

/**
 * A pipeline of two stages or more as one subject (each stage's argv, and the innermost commands its wrappers
 * run; a stage that is no simple command by its text), and a literal script piped into a shell parsed as its
 * own input (`parse`: the split's own).
 */
export function handlePipeline(
  stages: Node[],
  ctx: Ctx,
  parse: (state: Ctx['state'], script: string, via: string, depth: number) => void,
): void {
  if (stages.length < 2) return;
  const argvs = stages.map((s) => {
    const c = stageCommand(s);
    return c ? canonicalArgv(commandWords(c)) : [s.text.replace(/\s+/g, ' ').trim()];
  });
  const inner = argvs.map((a) => innermostArgv(a, SHELL_LIMITS.maxDepth));
  const full = argvs.map((a) => a.join(' ')).join(' | ');
  const innermost = inner.map((a) => a.join(' ')).join(' | ');
  push(ctx, { kind: 'pipeline', text: full, forms: full === innermost ? [full] : [full, innermost], argv: [] });
  // `echo 'rm -rf x' | sh`, `cat <<EOF | sh`: a literal script piped into a shell (or into xargs, as words).
  for (let i = 1; i < stages.length; i++) {
    const xargs = !!stageCommand(stages[i]!) && xargsLayer(argvs[i]!) !== undefined;
    if (!xargs && !readsScript(stages[i]!, inner[i]!, ctx)) continue;
    const written = writtenScripts(stages, inner, i - 1);
    const via = `${written?.by ?? 'pipe'} | ${argvs[i]![0]}`;
    if (written?.unknown) ctx.state.unsafe.push(clip(written.unknown));
    // A stage the split cannot follow (`head`, `tr`, `curl`, a subshell) writes what the shell (or the command
    // xargs makes of its input) runs: a person decides. What it is made from, if from anything the line spells
    // out, is among the literal texts before: each is judged as a script too, for the deny rules.
    const literals = written ? [] : stageLiterals(stages.slice(0, i));
    if (!written && (!xargs || xargsRunsInput(argvs[i]!)))
      ctx.state.unsafe.push(
        clip(
          stages
            .slice(0, i)
            .map((s) => s.text)
            .join(' | '),
        ),
      );
    for (const text of written?.scripts ?? literals) {
      const script = xargs ? xargsScript(argvs[i]!, text) : text;
      if (script !== undefined) parse(ctx.state, script, via, ctx.depth + 1);
    }
  }
}

/** Whether a stage is, or holds, a command reading a script from its input (`sh`, `(sh)`, `env sh`, `eval sh`). */
function readsScript(stage: Node, argv: string[], ctx: Ctx): boolean {
  const { parser, defined } = ctx.state;
  if (stageCommand(stage)) return readsStdinScript(argv, parser, defined);
  return holdsStdinReader(stage, parser, defined);
}

/**
 * The scripts stage `j` writes to the next: echo's or printf's words, or a bare `cat`'s here-doc or
 * here-string; through stages that pass their input on unchanged (a bare `cat`, `tee`) to the one before.
 */
function writtenScripts(
  stages: Node[],
  inner: string[][],
  j: number,
): { scripts: string[]; by: string; unknown?: string } | undefined {
  for (; j >= 0; j--) {
    const command = stageCommand(stages[j]!);
    const argv = inner[j]!;
    if (!command) return undefined;
    if (argv[0] === 'cat' && (argv.length === 1 || (argv.length === 2 && argv[1] === '-'))) {
      const bodies = stdinScripts(command);
      if (bodies.length > 0) return { scripts: bodies, by: 'cat <<' };
      continue;
    }
    if (argv[0] === 'tee') continue;
    const piped = pipedScript(argv);
    if (!piped) return undefined;
    return { scripts: [piped.script], by: argv[0]!, ...(piped.unknown ? { unknown: piped.unknown } : {}) };
  }
  return undefined;
}
