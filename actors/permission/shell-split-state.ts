/**
 * @module
 * What a shell split accumulates while the parse walks (`shell-parse.ts`): its state, the limits it is held to,
 * and `push`, which adds one sub-command within them.
 */
import type { Parser } from 'web-tree-sitter';
import type { ShellSubCommand } from '../../machines/permission/shell-words.ts';

/**
 * Limits: longer inputs are not parsed (the policy denies them); deeper wrapper/script nesting is an error, and so
 * are more sub-commands, or more characters in all of them (texts, forms and words) than `maxSplitChars`: a
 * command inside 600 nested `$(` repeats the text around it in each, 88 MB of split for a 48 KB input.
 */
export const SHELL_LIMITS = {
  maxSourceChars: 65_536,
  maxDepth: 8,
  maxCommands: 2_000,
  maxSplitChars: 262_144,
} as const;

export type State = {
  parser: Parser;
  commands: ShellSubCommand[];
  unsafe: string[];
  errors: string[];
  /** A function that starts itself in the background or a pipeline (`ShellSplit.forkBomb`). */
  forkBomb?: string;
  /** The text being parsed (the top-level input, or a nested script while it is parsed). */
  source: string;
  /** Characters in the sub-commands so far (`SHELL_LIMITS.maxSplitChars`). */
  chars: number;
  /** Functions and aliases defined so far, by name: the text each runs (`shell-stdin.ts`). */
  defined: Map<string, string>;
};
export type Ctx = { state: State; via: string | undefined; depth: number };
/** The split's own parse of a nested script (a wrapper's, an alias's, a here-doc fed to a shell), as `via`. */
export type ParseScript = (state: State, script: string, via: string | undefined, depth: number) => void;

/** Adds one sub-command to the split, within `SHELL_LIMITS` (past them, an error and nothing more). */
export function push(ctx: Ctx, entry: ShellSubCommand): void {
  const { state } = ctx;
  if (state.commands.length >= SHELL_LIMITS.maxCommands) {
    if (state.commands.length === SHELL_LIMITS.maxCommands)
      state.errors.push(`more than ${SHELL_LIMITS.maxCommands} sub-commands`);
    return;
  }
  if (state.chars > SHELL_LIMITS.maxSplitChars) return;
  let chars = entry.text.length;
  for (const f of entry.forms) chars += f.length;
  for (const a of entry.argv) chars += a.length;
  state.chars += chars;
  if (state.chars > SHELL_LIMITS.maxSplitChars) {
    state.errors.push(
      `its sub-commands hold more than ${SHELL_LIMITS.maxSplitChars} characters (commands nested in each other ` +
        'repeat the text around them); split it into simpler commands',
    );
    return;
  }
  state.commands.push(ctx.via ? { ...entry, via: ctx.via } : entry);
}
