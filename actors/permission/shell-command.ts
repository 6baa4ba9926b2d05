/**
 * @module
 * One simple command of a shell split (`shell-parse.ts` walks to it): its words as bash reads them (assignments
 * before the name, words joined or broken where tree-sitter-bash reads otherwise, redirect words that are
 * arguments), then the command pushed with its forms, and what it runs in turn: aliases' and assignments'
 * later scripts, and its wrappers' commands (`parse` is the split's own, for scripts).
 */
import type { Node } from 'web-tree-sitter';
import { canonicalName } from '../../machines/permission/shell-words.ts';
import { unwrapCommand } from '../../machines/permission/shell-wrappers.ts';
import {
  isAssignmentWord,
  isRedirectDescriptor,
  isTranslationMark,
  joinedWords,
  redirectArguments,
  segments,
  unquotedBreak,
  wordText,
  wordValues,
} from './shell-node-words.ts';
import { canonicalArgv } from './shell-pipes.ts';
import { laterReader, reservedName, stdinInput } from './shell-input.ts';
import { assignedScript, hiddenRun, laterProblem, laterScripts } from './shell-later.ts';
import { type Ctx, type ParseScript, push, SHELL_LIMITS } from './shell-split-state.ts';
import {
  clip,
  enableProblem,
  evaluatesNames,
  hiddenSubscript,
  hiddenSubscriptMessage,
  joinedMessage,
} from './shell-refusals.ts';

export function handleCommand(node: Node, ctx: Ctx, parse: ParseScript): void {
  const assignments: string[] = [];
  const words: string[] = [];
  let overflow = false;
  let previousEnd = -1;
  let previousWord: Node | undefined;
  let prefix = true; // before the command's name: the words bash reads as assignments
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (!child) continue;
    // Bash ends a simple command at an unescaped newline. A command node whose words are separated by
    // one is a misparse (tree-sitter-bash does this after `|&` followed by a newline): what bash runs as
    // two commands would be judged as one, e.g. `ls |& ls | ls\nrm -rf x` as "ls rm -rf x". Refuse it.
    const gap =
      previousEnd < 0 ? '' : node.text.slice(previousEnd - node.startIndex, child.startIndex - node.startIndex);
    if (previousEnd >= 0) {
      if (/(^|[^\\])\n/.test(gap))
        ctx.state.errors.push(`a line break inside "${clip(node.text)}" was not read as the end of a command`);
      // A line continuation with no blank on either side joins two words (`r\<newline>m` is rm), but
      // tree-sitter-bash reads two: refuse it rather than judge other words than bash runs.
      if (gap === '\\\n')
        ctx.state.errors.push(
          `a line continuation inside a word of "${clip(node.text)}" joins what the check reads as two`,
        );
    }
    previousEnd = child.endIndex;
    const field = node.fieldNameForChild(i);
    if (isTranslationMark(child)) {
      ctx.state.unsafe.push(clip(`$${child.nextSibling!.text}`));
      previousWord = undefined;
      continue;
    }
    // `bash 0<<< "rm x"`: tree-sitter-bash reads the descriptor of a here-string as an argument `0`, so bash
    // looked like it runs a script file `0`, and the script it reads from the here-string went unjudged. So
    // too `git push 0</dev/null` (read as `git push 0`, past a deny rule `^git\s+push$`).
    if (isRedirectDescriptor(child)) continue;
    const isWord = field === 'name' || field === 'argument' || child.type === 'variable_assignment';
    // Two words touching (`'r'\m` is rm); `r\<newline>m` has its own message above. An assignment too:
    // `a='x'\ls rm -rf /` is the assignment `a=xls` and the command rm to bash.
    if (isWord && previousWord && gap !== '\\\n' && joinedWords(previousWord, child))
      ctx.state.errors.push(joinedMessage(node.text, previousWord, child));
    previousWord = isWord ? child : undefined;
    if (!isWord) continue;
    const word = child.type === 'command_name' ? (child.firstChild ?? child) : child;
    // bash reads the words before the command's name as assignments by their text, not as tree-sitter-bash does.
    if (prefix && isAssignmentWord(child)) {
      assignments.push(wordText(word));
      continue;
    }
    prefix = false;
    if (child.isMissing || (child.firstChild?.isMissing ?? false)) continue;
    // tree-sitter-bash can fold a line break into a word (`echo \n\\touch x` reads as one echo with the
    // argument "\ntouch"); bash ends the command there and runs `touch`. An unquoted line break in a word
    // is a misparse: refuse it.
    if (segments(word).some(unquotedBreak))
      ctx.state.errors.push(`a line break inside "${clip(node.text)}" was not read as the end of a command`);
    const expanded = wordValues(word);
    if (!expanded) overflow = true;
    else words.push(...expanded);
  }
  // `rm >/dev/null -rf /`: bash runs `rm -rf /`; tree-sitter-bash puts `-rf /` in the redirect.
  for (const extra of redirectArguments(node)) {
    // `0<f x=1 rm x`: with no name before them, the words after the redirect start with bash's assignments.
    if (words.length === 0 && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(extra.text)) {
      assignments.push(wordText(extra));
      continue;
    }
    const expanded = wordValues(extra);
    if (!expanded) overflow = true;
    else words.push(...expanded);
  }
  if (overflow) ctx.state.errors.push(tooManyExpansions(node));
  // `/???/r? -rf x` runs whatever the glob matches: the program is unknown until expansion.
  const nameNode = node.childForFieldName('name');
  if (nameNode && segments(nameNode.firstChild ?? nameNode).some((s) => !s.quoted && /[*?[]/.test(s.text))) {
    ctx.state.unsafe.push(clip(nameNode.text));
  }
  if (words.length === 0) {
    if (assignments.length > 0)
      push(ctx, { kind: 'command', text: assignments.join(' '), forms: [assignments.join(' ')], argv: [] });
    return;
  }
  emitCommand(ctx, assignments, words, parse);
  stdinInput(node, canonicalArgv(words), ctx, parse);
}

export const tooManyExpansions = (node: Node) => `a brace expansion in "${clip(node.text)}" has more than 256 results`;

/** Pushes the command (and whatever its wrappers run). */
export function emitCommand(ctx: Ctx, assignments: string[], words: string[], parse: ParseScript): void {
  // `~-` runs $OLDPWD, `~` $HOME, `~+` $PWD, `~2` a directory-stack entry, `~u/x` under a home: a program named by
  // a value no rule can know, as `$OLDPWD` is (which asks). Set with no `$` (`for OLDPWD in /usr/bin/t?uch`), it
  // ran a denied program unasked. The words come without their quotes: a quoted `'~-'` asks too.
  if (words[0]!.startsWith('~')) ctx.state.unsafe.push(`${clip(words[0]!)} (a tilde expansion names the program)`);
  const { name, raw } = canonicalName(words[0]!);
  const argv = [name, ...words.slice(1)];
  const hidden = hiddenSubscript(name, words.slice(1));
  if (hidden !== undefined) ctx.state.errors.push(hiddenSubscriptMessage(name, hidden));
  const text = [...assignments, ...argv].join(' ');
  const forms = [text];
  if (assignments.length > 0) forms.push(argv.join(' '));
  if (raw !== undefined) forms.push([...assignments, raw, ...words.slice(1)].join(' '));
  push(ctx, { kind: 'command', text, forms, argv });
  if (name === 'alias') {
    for (const w of words.slice(1)) {
      const eq = w.indexOf('=');
      if (eq > 0) parse(ctx.state, w.slice(eq + 1), 'alias', ctx.depth + 1);
      if (eq > 0) ctx.state.defined.set(w.slice(0, eq), w.slice(eq + 1));
      if (eq > 0) laterReader(w.slice(0, eq), w.slice(eq + 1), ctx, true);
    }
  }
  for (const refused of [reservedName(argv), enableProblem(argv)]) if (refused) ctx.state.errors.push(refused);
  for (const script of [...assignments.flatMap((a) => assignedScript(a) ?? []), ...laterScripts(argv)])
    parse(ctx.state, script, name, ctx.depth + 1);
  const runs = hiddenRun(argv) ?? evaluatesNames(argv);
  if (runs) ctx.state.unsafe.push(`${clip(text)} (${runs})`);
  const later = laterProblem(argv, assignments);
  if (later) ctx.state.errors.push(later);
  for (const run of unwrapCommand(argv)) {
    const inner: Ctx = { ...ctx, via: ctx.via ? `${ctx.via} > ${run.via}` : run.via, depth: ctx.depth + 1 };
    if (inner.depth > SHELL_LIMITS.maxDepth) {
      ctx.state.errors.push(`commands are nested more than ${SHELL_LIMITS.maxDepth} levels deep`);
      return;
    }
    if (run.script !== undefined) parse(ctx.state, run.script, inner.via, inner.depth);
    else if (run.argv && run.argv.length > 0) {
      const innerAssign: string[] = [];
      let k = 0;
      while (k < run.argv.length - 1 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(run.argv[k]!)) innerAssign.push(run.argv[k++]!);
      // `nice /bin/r? -f x` runs what the glob matches, as `/bin/r? -f x` does (the top-level check); the
      // wrapper's words come without their quotes, so any glob character counts.
      if (/[*?[]/.test(run.argv[k] ?? '')) ctx.state.unsafe.push(clip(run.argv[k]!));
      emitCommand(inner, innerAssign, run.argv.slice(k), parse);
    }
  }
}
