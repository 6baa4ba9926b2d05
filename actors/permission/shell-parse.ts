/**
 * @module
 * Splits a shell input into the simple commands it would run, with
 * tree-sitter-bash (no hand-written shell parser). Splits across `&&` `||`
 * `;` `|` `|&` `&` and newlines, and descends into subshells, brace groups,
 * loop/if/case bodies, functions, here-docs and substitutions. Each simple
 * command is normalized (quotes and escapes removed, `$'…'` decoded, unquoted
 * braces expanded, `/bin/rm` and `\rm` read as `rm`); each file redirect is
 * its own entry except `/dev/null` and fd duplications; wrappers are
 * unwrapped (machines/shell-wrappers.ts) and `bash -c` / `eval` scripts, and
 * here-docs / here-strings / `echo … |` fed to a shell, are parsed
 * recursively. Expansions and substitutions are reported in `unsafe`; syntax
 * errors in `parseError`. The output is plain data for the pure policy.
 */
import type { Node, Parser } from 'web-tree-sitter';
import type { ShellSplit } from '../../machines/permission/shell-words.ts';
import {
  EXPANSIONS,
  isAssignmentWord,
  extraDestinations,
  isTranslationMark,
  lastCommand,
  wordText,
  wordValues,
} from './shell-node-words.ts';
import { handlePipeline, pipelineStages } from './shell-pipes.ts';
import { backticksInWord, functionDefinition, heredocBackticks, redirectedStatement } from './shell-input.ts';
import { assignedScript, laterProblem, laterScripts, loopVariable } from './shell-later.ts';
import { lostMessage, lostText, reparseLostDashes } from './shell-lost-text.ts';
import { type Ctx, push, SHELL_LIMITS, type State } from './shell-split-state.ts';
import { emitCommand, handleCommand, tooManyExpansions } from './shell-command.ts';
import { handleRedirect } from './shell-redirects.ts';
import {
  clip,
  commentProblem,
  continuationProblem,
  describeError,
  heredocProblem,
  hiddenSubscript,
  hiddenSubscriptMessage,
  commandTableWrite,
  assignmentAsk,
  evaluatedSubscript,
  evaluatesNames,
  testProblem,
} from './shell-refusals.ts';

export type { ShellSplit, ShellSubCommand } from '../../machines/permission/shell-words.ts';
export { SHELL_LIMITS } from './shell-split-state.ts';

/** Splits `source` with an already loaded bash `parser`. */
export function splitShell(parser: Parser, source: string): ShellSplit {
  const state: State = { parser, commands: [], unsafe: [], errors: [], source, chars: 0, defined: new Map() };
  if (source.length > SHELL_LIMITS.maxSourceChars) {
    return { commands: [], unsafe: [], parseError: `input is longer than ${SHELL_LIMITS.maxSourceChars} characters` };
  }
  parseScript(state, source, undefined, 0);
  const split: ShellSplit = { commands: state.commands, unsafe: [...new Set(state.unsafe)] };
  if (state.errors.length > 0) split.parseError = state.errors[0]!;
  if (state.forkBomb) split.forkBomb = state.forkBomb;
  return split;
}

function parseScript(state: State, source: string, via: string | undefined, depth: number): void {
  if (depth > SHELL_LIMITS.maxDepth) {
    state.errors.push(`commands are nested more than ${SHELL_LIMITS.maxDepth} levels deep`);
    return;
  }
  let tree = state.parser.parse(source);
  if (!tree) {
    state.errors.push('tree-sitter could not parse the input');
    return;
  }
  // A character no token holds is a word the split would not judge (shell-lost-text.ts): a lost `-` is parsed
  // again as `'-'`, anything else refused.
  const lost = lostText(tree, source);
  const repaired = reparseLostDashes(state.parser, source, lost);
  if (repaired) {
    tree.delete();
    ({ tree, source } = repaired);
  }
  const outer = state.source;
  state.source = source;
  try {
    const root = tree.rootNode;
    if (root.hasError) state.errors.push(describeError(root));
    try {
      walk(root, { state, via, depth });
    } catch (err) {
      // Thousands of nested `$(`: the walk is recursive, and the stack ends first. Judged as unparseable.
      if (!(err instanceof RangeError)) throw err;
      state.errors.push(
        'the command is nested too deeply to be judged (its syntax tree overflowed the stack); ' +
          'split it into simpler commands',
      );
      return;
    }
    // After the walk: its messages (a here-doc's end, two words joined) say more where both apply. Lost text last:
    // the others name the shape (`rm "-rf"\ /x` is two joined words, and its `\` is lost).
    const joined = continuationProblem(root, source);
    if (joined) state.errors.push(joined);
    if (lost.length > 0 && !repaired) state.errors.push(lostMessage(source, lost));
    if (root.hasError)
      push({ state, via, depth }, { kind: 'command', text: source.trim(), forms: [source.trim()], argv: [] });
  } finally {
    state.source = outer;
    tree.delete();
  }
}

function walk(node: Node, ctx: Ctx): void {
  const type = node.type;
  if (EXPANSIONS.has(type)) {
    ctx.state.unsafe.push(clip(node.text));
    // Not only a substitution's: one can run inside any expansion (`${x:-$(rm -rf /)}`, `$(( $(rm …) ))`),
    // and the deny rules must see its commands.
    for (const c of node.namedChildren) {
      if (!c) continue;
      if (c.type === 'word' && c.text.includes('`')) backticksInWord(c, ctx, parseScript);
      walk(c, ctx);
    }
    return;
  }
  switch (type) {
    case 'comment': {
      const problem = commentProblem(node, ctx.state.source);
      if (problem) ctx.state.errors.push(problem);
      return;
    }
    case 'command':
      handleCommand(node, ctx, parseScript);
      for (const c of node.namedChildren) if (c) walk(c, ctx);
      return;
    case 'redirected_statement':
      // `(rm) 2>x -rf` or `if …; fi >x y`: words after the target of a compound command's redirect, which
      // bash refuses as a syntax error and the check would not read (a simple command's go to its words).
      if (extraDestinations(node).length > 0 && !lastCommand(node.childForFieldName('body')))
        ctx.state.errors.push(`words follow the redirect target in "${clip(node.text)}", after a compound command`);
      for (const c of node.namedChildren) if (c) walk(c, ctx);
      redirectedStatement(node, ctx, parseScript);
      return;
    case 'file_redirect':
      handleRedirect(node, ctx);
      for (const c of node.namedChildren) if (c) walk(c, ctx);
      return;
    case 'pipeline':
      for (const c of node.namedChildren) if (c) walk(c, ctx);
      // A pipeline nested in another (or in a here-doc's redirect) is a part of that one: judged there, whole.
      if (node.parent?.type !== 'pipeline' && node.parent?.type !== 'heredoc_redirect')
        handlePipeline(pipelineStages(node), ctx, parseScript);
      return;
    case 'variable_assignments': {
      // `a=1 0b=2 c=3`: bash runs the first word that is no assignment (isAssignmentWord) with the rest as its
      // words; tree-sitter-bash read three assignments.
      const parts = node.namedChildren.filter((c): c is Node => c?.type === 'variable_assignment');
      const first = parts.findIndex((c) => !isAssignmentWord(c));
      if (first < 0) break;
      const words = parts.slice(first).map(wordValues);
      if (words.some((w) => !w)) ctx.state.errors.push(tooManyExpansions(node));
      else
        emitCommand(
          ctx,
          parts.slice(0, first).map(wordText),
          words.flatMap((w) => w!),
          parseScript,
        );
      for (const c of parts) for (const v of c.namedChildren) if (v) walk(v, ctx);
      return;
    }
    case 'variable_assignment': {
      for (const asks of [evaluatedSubscript(node.text), assignmentAsk(node.text)])
        if (asks) ctx.state.unsafe.push(asks);
      const standalone = node.parent?.type !== 'command' && node.parent?.type !== 'declaration_command';
      const text = wordText(node);
      for (const refused of [commandTableWrite(node.text), standalone ? laterProblem([], [text]) : undefined])
        if (refused) ctx.state.errors.push(refused);
      if (standalone) {
        push(ctx, { kind: 'command', text, forms: [text], argv: [text] });
        const later = assignedScript(text);
        if (later !== undefined) parseScript(ctx.state, later, text.slice(0, text.indexOf('=')), ctx.depth + 1);
      }
      for (const c of node.namedChildren) if (c) walk(c, ctx);
      return;
    }
    case 'declaration_command':
    case 'unset_command': {
      const words = node.children.filter((c): c is Node => !!c).map((c) => (c.isNamed ? wordText(c) : c.type));
      push(ctx, { kind: 'command', text: words.join(' '), forms: [words.join(' ')], argv: words });
      for (const script of laterScripts(words)) parseScript(ctx.state, script, words[0], ctx.depth + 1);
      const hidden = hiddenSubscript(words[0]!, words.slice(1));
      const evaluates = evaluatesNames(words);
      if (evaluates) ctx.state.unsafe.push(`${clip(words.join(' '))} (${evaluates})`);
      // A quoted word (`export 'OPTIND=x'`) is no variable_assignment node, and declares all the same.
      const quoted = node.namedChildren.filter((c) => c && c.type !== 'variable_assignment').map((c) => wordText(c!));
      for (const w of quoted) {
        const asks = assignmentAsk(w);
        if (asks) ctx.state.unsafe.push(asks);
      }
      for (const refused of [
        laterProblem(words),
        commandTableWrite(words.join(' ')),
        hidden === undefined ? undefined : hiddenSubscriptMessage(words[0]!, hidden),
      ])
        if (refused) ctx.state.errors.push(refused);
      for (const c of node.namedChildren) if (c) walk(c, ctx);
      return;
    }
    case 'test_command': {
      if (node.child(0)?.type === '((') ctx.state.unsafe.push(clip(node.text));
      const text = node.text.replace(/\s+/g, ' ').trim();
      const problem = testProblem(text);
      if (problem?.refused) ctx.state.errors.push(problem.refused);
      if (problem?.evaluates) ctx.state.unsafe.push(problem.evaluates);
      push(ctx, { kind: 'command', text, forms: [text], argv: text.split(' ') });
      break;
    }
    case 'heredoc_start': {
      // Where a here-doc ends decides which lines are data and which run, and bash and tree-sitter-bash
      // find that end differently whenever the delimiter is not plain: bash removes quotes and backslashes
      // from it (`<<E"O"F` ends at `EOF`), joins backslash-newline pairs in an unquoted body before it
      // compares lines (`EO\<newline>F` ends the here-doc early), and strips leading tabs for `<<-`.
      // Only a bare delimiter with no line continuation after it and no tab-stripping is read the same.
      const problem = heredocProblem(node, ctx.state.source);
      if (problem) ctx.state.errors.push(problem);
      break;
    }
    case 'heredoc_body':
      heredocBackticks(node, ctx, parseScript);
      break;
    // `$"…"` is looked up in the locale's message catalogue (TEXTDOMAIN): what bash runs may be other text.
    case 'translated_string':
      ctx.state.unsafe.push(clip(node.text));
      break;
    case 'concatenation':
      for (const c of node.children)
        if (c && isTranslationMark(c)) ctx.state.unsafe.push(clip(`$${c.nextSibling!.text}`));
      break;
    case 'for_statement': {
      const loop = loopVariable(node.childForFieldName('variable')?.text ?? '');
      if (loop) ctx.state.errors.push(loop);
      break;
    }
    case 'c_style_for_statement':
      ctx.state.unsafe.push(clip(node.text.split('\n')[0]!));
      break;
    case 'function_definition':
      functionDefinition(node, ctx);
      break;
    case 'ERROR':
      break;
  }
  for (const c of node.namedChildren) if (c) walk(c, ctx);
}
