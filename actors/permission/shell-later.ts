/**
 * @module
 * Code bash runs later from a string, which the gate must judge now, like an alias's value: a `trap` action
 * (run at the signal or at EXIT/RETURN/DEBUG), and the values of `PROMPT_COMMAND` (run at every prompt) and
 * `PS0`/`PS1`/`PS2`/`PS4` (expanded at every prompt or traced command: `PS4='$(rm x)'; set -x` runs rm). And
 * builtins that run a command the gate cannot see at all (`fc` re-runs history, `hash -p` makes a name run
 * another program, `bind -x` and `complete -C` run one on a key or a completion): unjudgeable, so they ask.
 * Found by a review (3 December): each ran a command past a deny rule.
 *
 * Found by an audit: those variables set without an assignment's syntax (`printf -v PS4 …`, `read PS4`,
 * `mapfile`, `getopts`, a nameref `declare -n p=PS4`), an array's elements (`PS4=('$(rm y)')`), and
 * `BASH_ENV`/`ENV`, a file every later shell runs when it starts (`BASH_ENV=/dev/stdin bash -c : <<<'rm x'`).
 * `laterRefusal` and `assignmentRefusal` say why such a command is refused. Found by a second audit: a prompt's
 * octal escapes (`PS4='\044\050rm x\051'`, decoded before it is expanded) and completion word lists
 * (`compgen -W '$(rm x)'`, expanded when they complete).
 */
import { decodeAnsiC } from '../../machines/permission/shell-words.ts';

const LATER_VARIABLE = /^(PROMPT_COMMAND|PS[0124])(\[[^\]]*\])?\+?=/;
/** BASH_ENV (bash) and ENV (sh, bash -i): the file every shell started later runs first. */
const STARTUP_VARIABLE = /^(BASH_ENV|ENV)(\[[^\]]*\])?\+?=/;
/** The variables whose value bash runs as code (or, for BASH_ENV and ENV, whose file it runs). */
const CODE_NAME = /^(PROMPT_COMMAND|PS[0124]|BASH_ENV|ENV|BASH_CMDS|BASH_ALIASES)$/;
/**
 * The variables bash 5.2 evaluates as arithmetic when they are assigned, as if declared `-i`: `RANDOM=x` evaluates
 * what x holds, and an array subscript in it runs its `$(…)` (`OPTIND='a[$(rm y)]'` runs rm). Found by the
 * differential fuzz test; the other special variables (SECONDS, LINENO, COLUMNS, HISTSIZE, TMOUT, …) do not.
 */
export const EVALUATED_NAME = /^(RANDOM|SRANDOM|OPTIND|HISTCMD)$/;

/**
 * The script an assignment word (`NAME=value`) leaves for later, or undefined. An array's value gives each
 * element (`PS4=('$(rm y)')`: bash expands `${PS4[0]}`, and runs every element of PROMPT_COMMAND), each through
 * its own eval (a prompt's through promptScript) so one element cannot run into the next. A startup file's is
 * `. "$BASH_ENV"`: what the file will hold when a shell starts is unknown, so the expansion makes it ask
 * (assignmentRefusal says why it is refused).
 */
export function assignedScript(word: string): string | undefined {
  const startup = STARTUP_VARIABLE.exec(word);
  if (startup) return `. "$${startup[1]}"`;
  const m = LATER_VARIABLE.exec(word);
  if (!m) return undefined;
  const value = word.slice(m[0].length);
  const array = /^\(.*\)$/s.test(value);
  if (m[1] !== 'PROMPT_COMMAND') {
    const scripts = (array ? [value, ...arrayElements(value.slice(1, -1))] : [value]).flatMap(
      (e) => promptScript(e) ?? [],
    );
    return scripts.length > 0 ? scripts.join('\n') : undefined;
  }
  if (!array) return value;
  return [value, ...arrayElements(value.slice(1, -1))].map((e) => `eval ${quoted(e)}`).join('\n');
}

/**
 * What a prompt string (PS0-PS4) runs, as a script: bash 5.2 first decodes its backslash escapes (`\nnn` octal,
 * `\\`: `PS4='\044\050rm x\051'` is `$(rm x)`), then expands it as in double quotes (promptvars). Undefined
 * when the decoded text holds no `$(`, backtick or `${`, which could run a command (`PS1='$ '` runs nothing).
 */
export function promptScript(value: string): string | undefined {
  const decoded = decodePrompt(value);
  return /\$\(|`|\$\{/.test(decoded) ? expansionScript(decoded) : undefined;
}

/**
 * Text bash expands as in double quotes with `"` literal (a prompt string, a completion word list), as a script
 * that makes the same substitutions: the body of an unquoted here-doc, read the same way. A `"` cannot end it
 * early, and one inside a substitution is shell quoting there (`$(echo ")"; rm y)` runs rm), as bash reads it.
 * An escaped `$`, backtick or backslash runs nothing and is dropped (tree-sitter-bash fails on `\$(` in a body).
 */
function expansionScript(text: string): string {
  const body = text.replace(/\\[\\$`]/g, '__').replace(/\\$/, '_');
  let end = 'SKEIN_EXPANDED';
  while (body.split('\n').includes(end)) end += '_';
  return `: <<${end}\n${body}\n${end}`;
}

/**
 * A prompt string's `\nnn` and `\\` escapes decoded as bash 5.2's decode_prompt_string does: three octal digits
 * (fewer only at the end) give one byte, other digits keep their backslash; the other escapes (`\u`, `\w`, `\$`…)
 * give text bash quotes, so they are left as they are.
 */
function decodePrompt(value: string): string {
  return value.replace(/\\(\\|[0-7][^\\]{0,2})/g, (all, esc: string, at: number) => {
    if (esc === '\\') return '\\';
    if (!/^[0-7]+$/.test(esc) || (esc.length < 3 && at + all.length < value.length)) return all;
    return String.fromCharCode(parseInt(esc, 8) & 0xff);
  });
}

/** The scripts a command's words leave for bash to run later (a trap's action, exported prompt variables). */
export function laterScripts(argv: readonly string[]): string[] {
  const [name, ...args] = argv;
  if (name === 'trap') {
    const rest = args[0] === '--' ? args.slice(1) : args;
    // `trap -p`, `trap -l`, `trap INT` (a reset) and `trap - INT` leave nothing to run.
    if (rest.length < 2 || rest[0]!.startsWith('-')) return [];
    return rest[0] === '' ? [] : [rest[0]!];
  }
  if (DECLARING.has(name ?? '')) {
    // A nameref to a code variable: what is assigned to it later is that variable's value, unknown here.
    const refs = nameref(name!, args) ? refTargets(args).filter((t) => CODE_NAME.test(t)) : [];
    return [...args.flatMap((a) => assignedScript(a) ?? []), ...refs.map((t) => `eval "$${t}"`)];
  }
  // mapfile's -C callback is run as `callback index line` (bash 5.2 evaluates the string).
  if (name === 'mapfile' || name === 'readarray') return optionValues(args, 'C', 'dnOsuCc');
  // The -W word list is expanded when it completes (`compgen -W '$(rm x)' a` runs rm); its quotes are read as
  // literal, which judges more.
  if (name === 'compgen' || name === 'complete')
    return optionValues(args, 'W', 'oAGWFCXPSV')
      .filter((w) => /[$`]/.test(w))
      .map(expansionScript);
  return [];
}

/** Why a command runs something the gate cannot see (it asks), or undefined. */
export function hiddenRun(argv: readonly string[]): string | undefined {
  const [name, ...args] = argv;
  if (name === 'fc') return 'fc runs commands from the history';
  if (name === 'hash' && args.some((a) => /^-[a-z]*p/.test(a))) return 'hash -p makes a name run another program';
  if (name === 'bind' && args.some((a) => /^-[a-zA-Z]*x/.test(a))) return 'bind -x runs a command on a key';
  // skein types every command line (`\\. <its file>`) through readline and the terminal's line discipline: a
  // key bound to a macro, or a byte made the kill or interrupt character, turns that fixed line into another
  // command, run in place of the next one judged (`bind '"\C-m": "…rm x\C-j"'`, `stty kill -`).
  if (name === 'bind' && bindChanges(args))
    return `bind changes what keys do, and skein types every command line through readline: ${NEXT_LINE}`;
  if (name === 'stty' && sttyChanges(args))
    return `stty changes how the terminal reads input, and skein types every command line through it: ${NEXT_LINE}`;
  if ((name === 'complete' || name === 'compgen') && args.some((a) => /^-[a-zA-Z]*C/.test(a)))
    return `${name} -C runs a command to complete`;
  return undefined;
}

const NEXT_LINE = 'the next line could run something else';

/** Whether a `bind` does more than list or query (`-p`, `-P`, `-v`, `-V`, `-s`, `-S`, `-X`, `-l`, `-q f`, `-m map`). */
function bindChanges(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // An operand: a binding (`"\C-m": …`, `Control-m: …`) or a readline variable (`set …`).
    if (!a.startsWith('-') || a.length === 1 || a === '--') return true;
    for (let j = 1; j < a.length; j++) {
      if (a[j] === 'm' || a[j] === 'q') {
        if (j + 1 === a.length) i++;
        break;
      }
      if (!'pPvVsSXl'.includes(a[j]!)) return true;
    }
  }
  return false;
}

/**
 * Whether an `stty` changes what could alter the next typed line: a special character (`kill -`, `intr x`), how
 * input bytes are mapped (`iuclc` lowercases the line's path to one the agent made in its /tmp, `igncr`,
 * `noflsh`, `-isig`…). Reporting (`-a`, `-g`, `size`, `speed`), `sane`, and the modes readline sets for itself
 * at every line (`echo`, `icanon`, `min`, `time`) or the window's size (`rows`, `cols`) do not.
 */
function sttyChanges(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-F' || a === '--file' || /^(rows|cols|columns|min|time)$/.test(a)) i++;
    else if (!/^(-F.+|--file=.*|-a|--all|-g|--save|size|speed|sane|-?echo|-?icanon)$/.test(a)) return true;
  }
  return false;
}

/**
 * Why a command is refused (a parse error) for what it makes bash run later from text the check cannot read: a
 * variable bash runs as code set by other means than a literal assignment (`laterRefusal`), BASH_ENV or ENV
 * assigned (`assignmentRefusal`), or a loop (`for`/`select`) whose variable is one of them (`loopVariable`).
 */
export function laterProblem(argv: readonly string[], assignments: readonly string[] = []): string | undefined {
  return laterRefusal(argv) ?? assignments.map(assignmentRefusal).find((r) => r !== undefined);
}

/** Why a `for` or `select` loop over `variable` is refused: each value it takes is code bash runs later. */
export function loopVariable(variable: string): string | undefined {
  if (EVALUATED_NAME.test(variable))
    return `a loop sets ${variable}, whose every value bash evaluates as arithmetic; loop over another variable`;
  if (!CODE_NAME.test(variable)) return undefined;
  return (
    `a loop sets ${variable}, whose values bash runs as code later (at a prompt, a trace or a shell's start); ` +
    'loop over another variable'
  );
}

/**
 * Why a command is refused for setting a variable whose value bash runs later, by other means than an
 * assignment word the gate reads (`printf -v`, `read`, `mapfile`/`readarray`, `getopts`, a nameref), or
 * declaring BASH_ENV/ENV; undefined when it does not.
 */
export function laterRefusal(argv: readonly string[]): string | undefined {
  const [name, ...args] = argv;
  if (name === undefined) return undefined;
  let targets: string[] = [];
  if (name === 'printf') {
    const v = args.findIndex((a) => a.startsWith('-v'));
    if (v >= 0) targets = [args[v] === '-v' ? (args[v + 1] ?? '') : args[v]!.slice(2)];
  } else if (name === 'read') targets = [...optionValues(args, 'a', 'adinNptu'), ...operands(args, 'adinNptu')];
  else if (name === 'mapfile' || name === 'readarray') targets = operands(args, 'dnOsuCc').slice(0, 1);
  else if (name === 'getopts') targets = args.slice(1, 2);
  else if (DECLARING.has(name)) {
    const startup = args.find((a) => STARTUP_VARIABLE.test(a));
    if (startup !== undefined) return assignmentRefusal(startup);
    if (nameref(name, args)) {
      targets = refTargets(args);
      // `declare -n p` with no target, or one that is no plain name: the next `p=PS4` (or the expansion) names it.
      const open = operands(args, '').find((a) => !/^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z_][A-Za-z0-9_]*$/.test(a));
      if (open !== undefined && !targets.some((t) => CODE_NAME.test(t) || EVALUATED_NAME.test(t)))
        return (
          `${name} makes ${JSON.stringify(open.slice(0, 60))} a reference to a variable the check cannot name, and ` +
          'a later assignment through it may set PROMPT_COMMAND, PS0-PS4 or BASH_ENV, which bash runs as code; ' +
          'give the reference a literal target'
        );
    }
  }
  const names = targets.map((t) => t.replace(/\[.*$/s, ''));
  const evaluated = names.find((t) => EVALUATED_NAME.test(t));
  if (evaluated !== undefined)
    return (
      `${name} sets ${evaluated}, whose value bash evaluates as arithmetic (an array subscript in it runs a ` +
      `command), from text the check cannot read; assign it a number (\`${evaluated}=1\`) instead`
    );
  const target = names.find((t) => CODE_NAME.test(t));
  if (target === undefined) return undefined;
  return `${name} sets ${target}, whose value bash ${
    /ENV$/.test(target) ? 'runs as a file when every later shell starts' : 'runs as code at a later prompt or trace'
  }, from text the check cannot read; assign it a literal value (\`${target}='…'\`) instead`;
}

/** Why an assignment word is refused (BASH_ENV and ENV name a file every later shell runs first), or undefined. */
export function assignmentRefusal(word: string): string | undefined {
  const m = STARTUP_VARIABLE.exec(word);
  if (!m) return undefined;
  return (
    `${m[1]} names a file bash runs at the start of every later shell (\`${word.slice(0, 60)}\`), where a ` +
    "here-string or pipe can hold commands the check never reads; set it outside the agent's command"
  );
}

const DECLARING: ReadonlySet<string> = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);

/** Whether a declaration's options make namerefs (`-n`, `-gn`; export's -n un-exports). */
function nameref(name: string, args: readonly string[]): boolean {
  return name !== 'export' && name !== 'readonly' && args.some((a) => /^-[a-zA-Z]*n/.test(a));
}

/** The variables a nameref declaration's `name=target` words point at. */
function refTargets(args: readonly string[]): string[] {
  return operands(args, '').flatMap((a) => (a.includes('=') ? [a.slice(a.indexOf('=') + 1)] : []));
}

/** The values of option `letter` (attached or the next word) among words whose options `valued` take a value. */
function optionValues(args: readonly string[], letter: string, valued: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length && args[i]!.startsWith('-') && args[i] !== '--'; i++) {
    const a = args[i]!;
    for (let j = 1; j < a.length; j++) {
      if (!valued.includes(a[j]!)) continue;
      const value = j + 1 < a.length ? a.slice(j + 1) : args[++i];
      if (a[j] === letter && value !== undefined) values.push(value);
      break;
    }
  }
  return values;
}

/** The words after the options (options in `valued` take a value). */
function operands(args: readonly string[], valued: string): string[] {
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-') && args[i]!.length > 1; i++) {
    if (args[i] === '--') return args.slice(i + 1);
    const a = args[i]!;
    const j = [...a.slice(1)].findIndex((c) => valued.includes(c));
    if (j >= 0 && j + 2 === a.length) i++;
  }
  return args.slice(i);
}

/** The values of an array's elements, quotes removed (`'a b' "c" $'\x64'` → `a b`, `c`, `d`), keys dropped. */
function arrayElements(body: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) {
      while (i < body.length && body[i] !== '\n') i++;
    } else if (c === "'" || (c === '$' && body[i + 1] === "'")) {
      const start = c === '$' ? i + 2 : i + 1;
      const end = c === '$' ? closingAnsiC(body, start) : body.indexOf("'", start);
      const text = body.slice(start, end < 0 ? undefined : end);
      word = (word ?? '') + (c === '$' ? decodeAnsiC(text) : text);
      i = end < 0 ? body.length : end;
    } else if (c === '"') {
      let text = '';
      for (i++; i < body.length && body[i] !== '"'; i++) {
        if (body[i] === '\\' && body[i + 1] === '\n') i++;
        else {
          if (body[i] === '\\' && /[$`"\\]/.test(body[i + 1] ?? '')) i++;
          text += body[i] ?? '';
        }
      }
      word = (word ?? '') + text;
    } else if (c === '\\') {
      if (body[i + 1] !== '\n') word = (word ?? '') + (body[i + 1] ?? '');
      i++;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) out.push(word);
  return out.map((w) => w.replace(/^\[[^\]]*\]\+?=/, ''));
}

function closingAnsiC(body: string, from: number): number {
  for (let i = from; i < body.length; i++) {
    if (body[i] === '\\') i++;
    else if (body[i] === "'") return i;
  }
  return -1;
}

/** `w` as one literal shell word. */
function quoted(w: string): string {
  return `'${w.replaceAll("'", "'\\''")}'`;
}
