/**
 * @module
 * Code bash runs later from a string, which the gate must judge now, like an alias's value: a `trap` action
 * (run at the signal or at EXIT/RETURN/DEBUG), and the values of `PROMPT_COMMAND` (run at every prompt) and
 * `PS0`/`PS1`/`PS2`/`PS4` (expanded at every prompt or traced command: `PS4='$(rm x)'; set -x` runs rm). And
 * builtins that run a command the gate cannot see at all (`fc` re-runs history, `hash -p` makes a name run
 * another program, `bind -x` and `complete -C` run one on a key or a completion): unjudgeable, so they ask.
 * Found by a review (3 December): each ran a command past a deny rule.
 */

const LATER_VARIABLE = /^(PROMPT_COMMAND|PS[0124])(\[[^\]]*\])?\+?=/;

/** The script an assignment word (`NAME=value`) leaves for later, or undefined. */
export function assignedScript(word: string): string | undefined {
  const m = LATER_VARIABLE.exec(word);
  return m ? word.slice(m[0].length) : undefined;
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
  if (name === 'export' || name === 'declare' || name === 'typeset' || name === 'local' || name === 'readonly') {
    return args.flatMap((a) => assignedScript(a) ?? []);
  }
  return [];
}

/** Why a command runs something the gate cannot see (it asks), or undefined. */
export function hiddenRun(argv: readonly string[]): string | undefined {
  const [name, ...args] = argv;
  if (name === 'fc') return 'fc runs commands from the history';
  if (name === 'hash' && args.some((a) => /^-[a-z]*p/.test(a))) return 'hash -p makes a name run another program';
  if (name === 'bind' && args.some((a) => /^-[a-zA-Z]*x/.test(a))) return 'bind -x runs a command on a key';
  if ((name === 'complete' || name === 'compgen') && args.some((a) => /^-[a-zA-Z]*C/.test(a)))
    return `${name} -C runs a command to complete`;
  return undefined;
}
