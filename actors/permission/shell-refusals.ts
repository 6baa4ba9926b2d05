/**
 * @module
 * Why `shell-parse.ts` refuses an input, where bash and tree-sitter-bash could read it differently: a here-doc
 * whose end they could place apart, two words bash joins, a syntax error; and `clip`, the one way a message
 * quotes the input.
 */
import type { Node } from 'web-tree-sitter';
import { clip as clipText } from '../../schemas/clip.ts';

/**
 * Whether tree-sitter-bash ended a here-doc (quoted whole, or `<<-`'s) where bash does: at a line that is the
 * word (after tabs, which `<<-` strips), with no earlier line that is (it also ends `<<'EOF'` at a line `EOF2`).
 */
function endAgrees(start: Node, source: string, word: string, stripsTabs: boolean): boolean {
  const end = start.parent?.namedChildren.find((c) => c?.type === 'heredoc_end');
  const body = start.parent?.namedChildren.find((c) => c?.type === 'heredoc_body')?.text ?? '';
  if (!end || end.text !== word) return false;
  const tabs = stripsTabs ? '\t*' : '';
  const lineStart = source.lastIndexOf('\n', end.startIndex - 1) + 1;
  if (lineStart === 0 || !new RegExp(`^${tabs}$`).test(source.slice(lineStart, end.startIndex))) return false;
  if (!/^\n?$/.test(source.slice(end.endIndex, end.endIndex + 1))) return false;
  const endLine = new RegExp(`^${tabs}${word.replace(/[.-]/g, '\\$&')}$`);
  return !body.split('\n').some((l) => endLine.test(l));
}

/** Why a here-doc's end cannot be found reliably (see the `heredoc_start` case), or undefined. */
export function heredocProblem(start: Node, source: string): string | undefined {
  const raw = start.text;
  // Words tree-sitter-bash gives the here-doc past its line are its body misread (`sh <<EOF` + a line starting
  // with an escaped backtick): the body it then reports is empty, and what sh reads would go unjudged.
  const lineEnd = source.indexOf('\n', start.endIndex);
  const misread = start.parent
    ?.childrenForFieldName('argument')
    .some((w) => !!w && (w.text.includes('\n') || (lineEnd >= 0 && w.startIndex > lineEnd)));
  if (misread)
    return (
      `the here-doc <<${clip(raw)} has a body tree-sitter-bash reads as words of the command, so the check ` +
      'cannot read it as bash does; start its first line with another character, or write the text with file.write'
    );
  // A delimiter quoted whole (`<<'EOF'`, `<<"EOF"`, the common way to write a file verbatim) is read the same by
  // both: bash looks for the word without its quotes and leaves the body as it is (no continuation joined);
  // tree-sitter-bash must have found the end at that very word, and no earlier line may be it.
  const op = start.parent?.children.find((c) => c && !c.isNamed && c.type.startsWith('<<'))?.type;
  const whole = /^(['"])([A-Za-z0-9_.-]+)\1$/.exec(raw);
  if (whole && endAgrees(start, source, whole[2]!, op === '<<-')) return undefined;
  if (/['"\\$`]/.test(raw)) {
    return (
      `the here-doc delimiter ${clip(raw)} is quoted or escaped; bash and the permission check could ` +
      `disagree on where the here-doc ends. Use a bare delimiter (<<EOF), or write the text with file.write`
    );
  }
  // The body and its end line follow the operator's line; look from the operator to the end of the input.
  const after = source.slice(start.startIndex);
  if (/\\\r?\n/.test(after)) {
    return (
      `a line continuation (backslash at the end of a line) follows the here-doc <<${clip(raw)}; bash joins ` +
      `those lines before it looks for the delimiter, so the here-doc could end elsewhere than checked. ` +
      `Remove the continuation, or write the text with file.write`
    );
  }
  // `<<-` strips the tabs lines start with before it compares them: read the same only where tree-sitter-bash
  // ended it at the tab-indented word's own line.
  if (op === '<<-' && /\n\t/.test(after) && !endAgrees(start, source, raw, true)) {
    return (
      `the here-doc <<-${clip(raw)} has lines starting with tabs, which bash strips before it compares ` +
      `them with the delimiter; use <<${clip(raw)} without tab indentation`
    );
  }
  return undefined;
}

/**
 * The word of a builtin's arguments that names an array element whose subscript holds an expansion, which bash
 * evaluates: `printf -v 'a[$(rm x)]' %s y`, `test -v 'a[$(rm x)]'`, `read 'a[$(rm x)]'`, `declare 'a[$(rm x)]=1'`
 * run rm from what looks like a quoted string (the `[ … ]` and `[[ … ]]` forms are refused in shell-parse.ts's
 * test_command case). Only the words bash reads as names (or, for `let`, arithmetic): a value such as printf's
 * `"${a[$i]}"` is an expansion the gate already sees.
 */
export function hiddenSubscript(name: string, args: readonly string[]): string | undefined {
  const hidden = (w: string | undefined) => w !== undefined && HIDDEN_SUBSCRIPT.test(w);
  const after = (flags: readonly string[]) => args.find((_, k) => k > 0 && flags.includes(args[k - 1]!));
  let word: string | undefined;
  if (name === 'printf') word = args.find((a) => a.startsWith('-v') && a.length > 2)?.slice(2) ?? after(['-v']);
  else if (name === 'test') word = after(['-v', '-R']);
  else if (DECLARING.has(name)) word = args.filter((a) => !a.startsWith('-')).find((a) => hidden(a.split('=')[0]));
  else if (name === 'let')
    word = args.find(hidden); // every word is arithmetic, `-a[$(x)]` too
  else if (NAMING.has(name)) word = namedWords(name, args).find(hidden);
  return hidden(word) ? word : undefined;
}

/** Builtins whose operands are variable names, all of them (and `let`, whose words are arithmetic). */
const NAMING: ReadonlySet<string> = new Set(['read', 'mapfile', 'readarray', 'wait', 'unset', 'let']);
/** Their options that take a value that is not a name (`read -p '[Y/n] '`: a prompt, refused until 8 December). */
const VALUE_OPTIONS: Readonly<Record<string, string>> = { read: 'dinNptu', mapfile: 'CcdnOsu', readarray: 'CcdnOsu' };
/** Their options whose value is a name bash assigns to (`read -a NAME`, `wait -p NAME`). */
const NAME_OPTIONS: Readonly<Record<string, string>> = { read: 'a', wait: 'p' };

/**
 * The words a naming builtin reads as variable names: its operands and the values of its name options, not the
 * values of its other options (a cluster's last option takes the rest of the word, else the next word).
 */
function namedWords(name: string, args: readonly string[]): string[] {
  const values = VALUE_OPTIONS[name] ?? '';
  const names = NAME_OPTIONS[name] ?? '';
  const out: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === '--') {
      out.push(...args.slice(k + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      out.push(a);
      continue;
    }
    for (let c = 1; c < a.length; c++) {
      const flag = a[c]!;
      if (!values.includes(flag) && !names.includes(flag)) continue;
      const rest = a.slice(c + 1);
      const value = rest !== '' ? rest : args[++k];
      if (names.includes(flag) && value !== undefined) out.push(value);
      break;
    }
  }
  return out;
}
/** Builtins whose operands are `name[=value]`: the name is checked, not the value. */
const DECLARING: ReadonlySet<string> = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
/** A word holding a subscript with an expansion in it (`a[$(x)]`, `` a[`x`] ``). */
/** A subscript bash evaluates as arithmetic with something in it that runs: an expansion, or a name whose value
 * is evaluated in turn (`x='a[$(rm y)]'; unset 'arr[x]'` runs rm). */
const HIDDEN_SUBSCRIPT = /\[[^\]]*[$`A-Za-z_]/;

export function hiddenSubscriptMessage(name: string, word: string): string {
  return (
    `the argument ${JSON.stringify(clip(word))} of ${name} holds an array subscript with $, \` or a name, which ` +
    'bash evaluates (a name, as the arithmetic its value holds) and so may run a command hidden in a string; ' +
    'use a plain variable name or a number as the subscript'
  );
}

/** bash's builtins and reserved words (`compgen -b`, `compgen -k`, bash 5.2): a function by such a name replaces it. */
const SHELL_NAMES: ReadonlySet<string> = new Set(
  (
    '. : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown ' +
    'echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile ' +
    'popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true ' +
    'type typeset ulimit umask unalias unset wait if then else elif fi case esac for select while until do done ' +
    'in function time { } ! [[ ]] coproc'
  ).split(' '),
);

/**
 * Why defining a function by `name` is refused, or undefined. Each prompt runs skein's rc function, which
 * discards input left over from the command (typeahead: text an agent wrote that a program did not read,
 * which bash would otherwise run unjudged at the prompt) with `builtin read`. A function named `builtin`, or
 * any builtin it or the rc uses, or one named `__skein…`, turned that off: found live, an allowed `echo` in its
 * body passed a default-deny allow-list. The rc's own function is also read-only in the shell.
 */
export function shadowProblem(name: string): string | undefined {
  // bash runs command_not_found_handle for every name it cannot find: a body the check never ties to the call.
  if (name === 'command_not_found_handle')
    return (
      'a function named command_not_found_handle would run for every command bash cannot find, with no call to ' +
      'it the check could judge; give the function another name'
    );
  if (!SHELL_NAMES.has(name) && !name.startsWith('__skein')) return undefined;
  return (
    `a function named ${JSON.stringify(clip(name))} would replace ${
      name.startsWith('__skein') ? "skein's own shell " + 'integration' : `the shell's ${name}`
    }, which skein relies on to find where commands end and to discard ` +
    'input left at the prompt; give the function another name'
  );
}

/**
 * Why an `enable` is refused, or undefined. `enable -n read` turns a builtin off as a function by its name
 * replaces it (`shadowProblem`): the rc's drain then found no `read` and left typed-ahead input for the prompt,
 * where bash ran it unjudged (found by a review, 6 December: a `touch` denied by the policy ran). `-d` deletes a
 * loaded builtin; `-f` loads a shared object into the shell as builtins, code the check never reads, run in the
 * process that prints skein's marks. Options end at `--` or the first name, as bash's getopt reads them; listing
 * (`-a`, `-p`, `-s`) and enabling stay allowed.
 */
export function enableProblem(argv: readonly string[]): string | undefined {
  if (argv[0] !== 'enable') return undefined;
  for (const word of argv.slice(1)) {
    if (word === '--' || !word.startsWith('-') || word === '-') return undefined;
    const option = /[ndf]/.exec(word.slice(1))?.[0];
    if (!option) continue;
    const [what, remedy] =
      option === 'f'
        ? ['load a builtin into', 'run that code as a program of its own instead']
        : ['turn a builtin off in', `to run the program of that name, give its path (/usr/bin/${named(argv)})`];
    return (
      `"${clip(argv.join(' '))}" would ${what} the shell skein's integration runs in (enable -${option}), which ` +
      `it relies on to find where commands end and to discard input left at the prompt; ${remedy}`
    );
  }
  return undefined;
}

/** The first builtin an `enable` names (after its options), for the message's example path. */
function named(argv: readonly string[]): string {
  const rest = argv.slice(1);
  const end = rest.indexOf('--');
  const names = end >= 0 ? rest.slice(end + 1) : rest.filter((w) => !w.startsWith('-'));
  return clip(names.find((w) => /^[\w.:[-]+$/.test(w)) ?? 'printf');
}

/**
 * How a function definition's body starts the function itself (`f(){ f & f; }`, `f(){ f|f& }`): each call
 * starts two more, a fork bomb (`ShellSplit.forkBomb`, denied by the built-in rules). The built-in rule's text
 * match knows the classic `:(){ :|:& };:`; found by a review, a body with `&` instead of a pipe, or any
 * other name, passed it. Behind it, for any program: `domains.terminal.maxProcessesPerAgent` (agent-cgroups.ts).
 */
export function startsItself(name: string, body: Node): 'in the background' | 'in a pipeline' | undefined {
  const stack: Node[] = [body];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'command' && node.childForFieldName('name')?.text === name) {
      if (node.nextSibling?.type === '&') return 'in the background';
      for (let up = node.parent; up && up.id !== body.id; up = up.parent)
        if (up.type === 'pipeline') return 'in a pipeline';
    }
    for (const c of node.namedChildren) if (c) stack.push(c);
  }
  return undefined;
}

/** Where a backslash-newline is only text, to bash as to tree-sitter-bash: single quotes, `$'…'`, a comment. */
const LITERAL_CONTEXTS = new Set(['raw_string', 'ansi_c_string', 'comment']);

/**
 * Why a line continuation cannot be judged, or undefined. bash removes a backslash-newline before it reads
 * words, anywhere but in single quotes, `$'…'` and comments, so text on both sides becomes one: `a\<newline>#`
 * is the word `a#`, not a comment that hides the rest of the line, and `"$\<newline>(x)"` runs `x`.
 * tree-sitter-bash reads the pair as a blank. The two agree when a blank stands on one side of it (a
 * continuation between words, the usual kind), or in a double-quoted string's text when no `$` precedes it, so
 * only the others are refused.
 */
export function continuationProblem(root: Node, source: string): string | undefined {
  for (const m of source.matchAll(/(\\+)\n/g)) {
    if (m[1]!.length % 2 === 0) continue; // `\\<newline>`: an escaped backslash, then a line break
    const at = m.index + m[1]!.length - 1;
    const before = source[at - 1] ?? '\n';
    const after = source[m.index + m[0].length] ?? '\n';
    if (/[ \t\n]/.test(before) || /[ \t\n]/.test(after)) continue;
    let node: Node | null = root.descendantForIndex(at);
    // In a double-quoted string's text only `$` can start something the join makes (`$(`, `${`, `$name`).
    if ((node?.type === 'string' || node?.type === 'string_content') && before !== '$') continue;
    while (node && !LITERAL_CONTEXTS.has(node.type)) node = node.parent;
    if (node) continue;
    const line = source.slice(source.lastIndexOf('\n', at - 1) + 1, at);
    return (
      `a line continuation after ${clip(line)} joins it to the next line's ${JSON.stringify(after)} with no ` +
      'blank between: bash reads one word there (or a string with other expansions), the check would read ' +
      'two. Put a blank before the backslash, or join the lines'
    );
  }
  return undefined;
}

/** Tokens right after which bash starts a comment: a control operator, a subshell's parenthesis. */
const COMMENT_AFTER: ReadonlySet<string> = new Set([';', '&', '|', '|&', '&&', '||', ';;', ';&', ';;&', '(', ')']);

/**
 * Why a comment cannot be judged, or undefined. bash starts a comment only with a word (after a blank, a line
 * break or an operator), but tree-sitter-bash also finds one inside a word: in `a#x; rm -rf / \<newline>=0` it read
 * the assignment `a=0` holding the comment `#x; rm -rf / \`, and in `a=(1)#x; rm x` an array and a comment, where
 * bash runs `a#x` and then rm, or sets `a` to `(1)#x` and runs rm.
 */
export function commentProblem(comment: Node, source: string): string | undefined {
  const before = source[comment.startIndex - 1];
  if (before === undefined || before === ' ' || before === '\t' || before === '\n') return undefined;
  const token = comment.tree.rootNode.descendantForIndex(comment.startIndex - 1, comment.startIndex);
  if (token && !token.isNamed && COMMENT_AFTER.has(token.type) && token.parent?.type !== 'array') return undefined;
  return (
    `the comment "${clip(comment.text)}" touches the word before it: bash starts a comment only after a blank, ` +
    'so it reads none there, the check read one. Put a blank before the #, or quote it'
  );
}

/** Two words bash reads as one (`'r'\m`): refused, as the check would judge other words than bash runs. */
export function joinedMessage(text: string, prev: Node, next: Node): string {
  return (
    `"${clip(prev.text)}" and "${clip(next.text)}" in "${clip(text)}" touch with no blank between them: bash ` +
    'reads one word there, the check read two. Quote the whole word, or put a blank between the words'
  );
}

export function describeError(root: Node): string {
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'ERROR' || n.isMissing) {
      const what = n.isMissing ? `missing "${n.type}"` : `unexpected "${clip(n.text)}"`;
      return `syntax error at line ${n.startPosition.row + 1}, column ${n.startPosition.column + 1}: ${what}`;
    }
    for (let i = n.childCount - 1; i >= 0; i--) {
      const c = n.child(i);
      if (c && (c.hasError || c.isMissing)) stack.push(c);
    }
  }
  return 'syntax error';
}

/** A word or node of the command, as a refusal quotes it (80 UTF-16 units at most). */
export function clip(text: string): string {
  return clipText(text, 80);
}

const ARITHMETIC_TEST = /(^|\s)-(eq|ne|lt|le|gt|ge)(\s|$)/;
const SUBSCRIPT_TEST = /(^|\s)-[vR](\s|$)/;

/**
 * What a test (`[[ … ]]`, `[ … ]`) makes bash evaluate. `[[`'s -eq/-lt/… evaluate their operands as arithmetic
 * and -v/-R (in both forms) a subscript, so `[[ 'a[$(rm -rf x)]' -eq 0 ]]` runs a command hidden in quotes: $,
 * \` or [ there is refused (`refused`), not merely an expansion a person could approve (issue 14). A name there
 * is evaluated as the arithmetic its value holds (`x='a[$(rm y)]'; [[ x -eq 0 ]]`): a person decides
 * (`evaluates`). Other tests (`[[ -f $f ]]`, `[[ $a == b ]]`) evaluate nothing: their expansions are the walk's.
 */
export function testProblem(text: string): { refused?: string; evaluates?: string } | undefined {
  const double = text.startsWith('[[');
  const inner = text.replace(/^\[\[?|\]\]?$/g, '');
  const arithmetic = double && ARITHMETIC_TEST.test(inner);
  if (!arithmetic && !SUBSCRIPT_TEST.test(inner)) return undefined;
  // What is a number whatever it holds (`$#`, `$?`, `${#arr[@]}`) is no risk; a name's value is, as arithmetic.
  const named = inner
    .replace(/\$\{#[A-Za-z_][A-Za-z0-9_]*(\[[@*]\])?\}|\$[#?$!]/g, '0')
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, 'name');
  if (/[$`[]/.test(named))
    return {
      refused:
        `the test "${clip(text)}" holds $, \` or [ in an operand, which bash evaluates as arithmetic or an array ` +
        'subscript and so may run a command hidden in a string; compare literal values instead',
    };
  const operands = named.replace(/(^|\s)(-[a-zA-Z]+|&&|\|\||!|\(|\))(?=\s|$)/g, ' ');
  if (arithmetic && /[A-Za-z_]/.test(operands)) return { evaluates: `${clip(text)} (evaluates a name as arithmetic)` };
  return undefined;
}

/**
 * Why a command makes bash evaluate what a variable holds as arithmetic, which runs any `$(…)` hidden in it
 * (`x='a[$(rm y)]'; let z=x`): `let`, and an integer declaration (`declare -i`: every later assignment to the
 * name is evaluated). A person decides; undefined for anything else.
 */
export function evaluatesNames(argv: readonly string[]): string | undefined {
  const [name, ...args] = argv;
  // `let i=1+2` evaluates no name; `let z=x`, `let i++` evaluate x's and i's values.
  const evaluated = (a: string) => a.replace(/^[A-Za-z_][A-Za-z0-9_]*(?=[-+*/%&|^]?=[^=])/, '');
  if (name === 'let' && args.some((a) => /[A-Za-z_]/.test(evaluated(a)))) return 'let evaluates names as arithmetic';
  if (DECLARING.has(name ?? '') && args.some((a) => /^[-+][a-zA-Z]*i/.test(a)))
    return `${name} -i makes every later assignment to the name arithmetic`;
  return undefined;
}

/**
 * An assignment whose subscript (`arr[x]=1`, `arr=([x]=1)`) names a variable: for an indexed array bash evaluates
 * it as arithmetic, running any `$(…)` the variable holds. A person decides; undefined for numbers.
 */
export function evaluatedSubscript(assignment: string): string | undefined {
  return /\[[^\]]*[A-Za-z_$`][^\]]*\]\+?=/.test(assignment)
    ? `${clip(assignment)} (a subscript bash evaluates as arithmetic)`
    : undefined;
}

/**
 * An assignment to a variable bash evaluates as arithmetic when it is set (RANDOM, SRANDOM, OPTIND, HISTCMD:
 * `OPTIND=x` evaluates what x holds, and `a[$(rm y)]` in it runs rm). A person decides unless the value is a
 * number; undefined for anything else.
 */
export function evaluatedAssignment(word: string): string | undefined {
  const m = /^(RANDOM|SRANDOM|OPTIND|HISTCMD)(\[[^\]]*\])?\+?=(.*)$/s.exec(word);
  if (!m || /^\s*[-+]?\d+\s*$/.test(m[3]!.replace(/['"]/g, ''))) return undefined;
  return `${clip(word)} (bash evaluates what is assigned to ${m[1]} as arithmetic)`;
}

/**
 * An assignment to INPUTRC, the file of key bindings readline reads when a shell starts (a terminal opened with it
 * in its env) or at `bind -f`: skein types every command line through readline, and a key bound to a macro there
 * turns it into another command. A person decides; undefined for anything else.
 */
export function inputrcAssignment(word: string): string | undefined {
  return /^INPUTRC(\[[^\]]*\])?\+?=/.test(word)
    ? `${clip(word)} (INPUTRC names a file of key bindings, and skein types each command line through readline)`
    : undefined;
}

/** Why an assignment word asks a person (`evaluatedAssignment`, `inputrcAssignment`), or undefined. */
export function assignmentAsk(word: string): string | undefined {
  return evaluatedAssignment(word) ?? inputrcAssignment(word);
}

/**
 * Why writing bash's command tables is refused: an element of BASH_CMDS makes a name run another program
 * (`BASH_CMDS[ls]=/bin/rm`, as `hash -p` does) and one of BASH_ALIASES defines an alias (`BASH_ALIASES[n]=nice`),
 * so a later `ls x` or `n rm x` runs what the split reads as something else; undefined when `text` does not.
 */
export function commandTableWrite(text: string): string | undefined {
  const m = /(?:^|[\s;&|('"\\])(BASH_CMDS|BASH_ALIASES)(?=\[|\+?=|['"])/.exec(text);
  if (!m) return undefined;
  return (
    `${m[1]} maps command names to ${m[1] === 'BASH_CMDS' ? 'the programs they run' : 'alias text'}, so a later ` +
    'command would run something other than what it names; define aliases or functions plainly instead'
  );
}
