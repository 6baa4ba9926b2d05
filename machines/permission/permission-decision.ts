/**
 * @module
 * What a permission decision is (its levels, the request it judges, the result) and the small pure
 * helpers every precedence level builds its result with. The precedence itself is `permission-policy.ts`.
 */
import { clip as clipText } from '../../schemas/clip.ts';
import type { PolicyMode } from '../../schemas/policy.ts';
import type { ToolName } from '../../schemas/tool.ts';
import type { PathFacts } from './permission-paths.ts';
import type { CompiledRule, RuleList } from './policy.ts';
import type { ShellSplit } from './shell-words.ts';

/** Input limits: longer inputs, empty inputs and NUL bytes are denied before anything else. */
export const INPUT_LIMITS = { maxChars: 65_536 } as const;

export type DecisionLevel =
  | 'input'
  | 'builtin'
  | 'invalid_pattern'
  | 'unsafe_shell'
  | 'expansion'
  | 'deny_rule'
  | 'confirm_rule'
  | 'always_ask'
  | 'allow_rule'
  | 'tool_default'
  | 'global_default';

export type DecisionRequest = {
  tool: ToolName;
  /** The command line, path, interpreter input or spawn spec, as given. */
  input: string;
  /** Terminal tools: the split from actors/shell-parse.ts. */
  split?: ShellSplit;
  /** File tools: workspace roots and the resolved path. */
  path?: PathFacts;
  /** Shown to whoever answers (a write's content, an edit's text); never judged. */
  detail?: string;
};

export type MatchedRule = { list: RuleList; pattern: string; layer?: string; matched: string };

export type Decision = {
  outcome: PolicyMode;
  level: DecisionLevel;
  reason: string;
  rule?: MatchedRule;
  /** Sub-commands (terminal) or path forms (file tools) that were checked. */
  subCommands: string[];
  /** Set for always-ask prompts (Yes/No only, no "always"). */
  scope?: 'symlink' | 'sensitive' | 'outside';
  /** Patterns an "always" answer would persist (for entries not already allowed). */
  patterns: string[];
};

export const RANK: Record<PolicyMode, number> = { allow: 0, confirm: 1, deny: 2 };

/** The most restrictive of several decisions (ties keep the earlier one). */
export function mostRestrictive(decisions: readonly Decision[]): Decision {
  let best = decisions[0]!;
  for (const d of decisions.slice(1)) if (RANK[d.outcome] > RANK[best.outcome]) best = d;
  return best;
}

/** Why an input is refused outright, or undefined. */
export function inputProblem(input: string): string | undefined {
  if (input.trim().length === 0) return 'The input is empty; send the command or path to check.';
  if (input.includes('\0'))
    return 'The input contains a NUL byte, which cannot be checked reliably; remove it and try again.';
  if (input.length > INPUT_LIMITS.maxChars)
    return (
      `The input is ${input.length} characters long, over the limit ` +
      `of ${INPUT_LIMITS.maxChars}; split it into smaller calls.`
    );
  return undefined;
}

export function matched(list: RuleList, r: CompiledRule, text: string): MatchedRule {
  return { list, pattern: r.pattern, ...(r.layer ? { layer: r.layer } : {}), matched: text };
}

export function layerText(r: CompiledRule): string {
  return r.layer ? ` (${r.layer} policy)` : '';
}

export function result(
  outcome: PolicyMode,
  level: DecisionLevel,
  reason: string,
  subCommands: string[],
  rule?: MatchedRule,
  patterns: string[] = [],
): Decision {
  return { outcome, level, reason, subCommands: shownSubCommands(subCommands), patterns, ...(rule ? { rule } : {}) };
}

/** Sub-commands a decision carries (into its `permission.requested` fact, for whoever answers): the first ones. */
export const SHOWN_SUB_COMMANDS = 64;
/** Characters of each shown sub-command (the whole input is in the fact too). */
export const SHOWN_SUB_COMMAND_CHARS = 2_000;

/**
 * The sub-commands shown: at most `SHOWN_SUB_COMMANDS`, each cut at `SHOWN_SUB_COMMAND_CHARS`, and a last entry
 * saying how many more there were. Commands nested in each other repeat the text around them: unbounded, a 96 KB
 * input made a request fact over the broker's 1 MiB message limit, and the ask was never recorded.
 */
export function shownSubCommands(texts: string[]): string[] {
  const long = texts.some((t) => t.length > SHOWN_SUB_COMMAND_CHARS);
  if (texts.length <= SHOWN_SUB_COMMANDS && !long) return texts;
  const shown = texts
    .slice(0, SHOWN_SUB_COMMANDS)
    .map((t) => (t.length > SHOWN_SUB_COMMAND_CHARS ? `${t.slice(0, SHOWN_SUB_COMMAND_CHARS - 1)}…` : t));
  const more = texts.length - shown.length;
  return more > 0 ? [...shown, `… and ${more} more sub-commands`] : shown;
}

/** A command or path as a decision's reason quotes it (120 UTF-16 units at most). */
export function clip(text: string): string {
  return clipText(text, 120);
}
