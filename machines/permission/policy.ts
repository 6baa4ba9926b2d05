/**
 * @module
 * Policy layers: merging (built-in → global → project → agent; rule lists
 * accumulate, a later layer's `default` wins) and compiling patterns to
 * regexes (case-insensitive unless `case_sensitive`; Rust-style leading
 * `(?i)`/`(?-i)` honoured; patterns that do not compile are kept as
 * `invalid`, which denies the tool, and so are patterns that can backtrack
 * super-linearly: regex-backtracking.ts). Pure; compiled forms are cached per
 * merged object.
 */
import type { Policy, PolicyLayerName, PolicyMode, PolicyRule } from '../../schemas/policy.ts';
import { TOOLS, type ToolName } from '../../schemas/tool.ts';
import { compileGuardedRegex } from './regex-backtracking.ts';

export type RuleList = 'always_allow' | 'always_deny' | 'always_confirm';
export const RULE_LISTS: readonly RuleList[] = ['always_deny', 'always_confirm', 'always_allow'];

/** A rule with the layer it came from. */
export type LayeredRule = PolicyRule & { layer?: string };

export type MergedToolPolicy = { default?: PolicyMode | undefined } & Record<RuleList, LayeredRule[]>;

/** Several layers merged into one; plain JSON. */
export type MergedPolicy = {
  default?: PolicyMode | undefined;
  tools: Partial<Record<ToolName, MergedToolPolicy>>;
};

/** One layer to merge: its name (`global`, `project`, `agent:<id>`, …) and policy. */
export type PolicyLayer = { name: PolicyLayerName | string; policy: Policy | MergedPolicy };

export type CompiledRule = { pattern: string; caseSensitive: boolean; layer?: string; regex: RegExp };
export type CompiledTool = {
  default?: PolicyMode | undefined;
  rules: Record<RuleList, CompiledRule[]>;
  invalid: Array<{ pattern: string; layer?: string; error: string }>;
};
export type CompiledPolicy = { default: PolicyMode; tools: Record<ToolName, CompiledTool> };

/** The default when no layer sets one. */
export const GLOBAL_DEFAULT: PolicyMode = 'confirm';

/** Merges layers in order: lists accumulate (no layer can remove a rule), later defaults win. */
export function mergePolicies(layers: readonly PolicyLayer[]): MergedPolicy {
  const merged: MergedPolicy = { tools: {} };
  for (const { name, policy } of layers) {
    if (policy.default !== undefined) merged.default = policy.default;
    for (const tool of TOOLS) {
      const t = policy.tools[tool];
      if (!t) continue;
      const into = (merged.tools[tool] ??= { always_allow: [], always_deny: [], always_confirm: [] });
      if (t.default !== undefined) into.default = t.default;
      for (const list of RULE_LISTS) {
        for (const rule of t[list]) into[list].push({ ...rule, layer: (rule as LayeredRule).layer ?? name });
      }
    }
  }
  return merged;
}

const cache = new WeakMap<object, CompiledPolicy>();

/** Compiles every pattern of a merged policy (cached by object identity). */
export function compilePolicy(policy: MergedPolicy): CompiledPolicy {
  const hit = cache.get(policy);
  if (hit) return hit;
  const tools = {} as Record<ToolName, CompiledTool>;
  for (const tool of TOOLS) {
    const t = policy.tools[tool];
    const compiled: CompiledTool = {
      default: t?.default,
      rules: { always_allow: [], always_deny: [], always_confirm: [] },
      invalid: [],
    };
    for (const list of RULE_LISTS) {
      for (const rule of t?.[list] ?? []) {
        const result = compilePattern(rule.pattern, rule.case_sensitive ?? false);
        const base = { pattern: rule.pattern, ...(rule.layer ? { layer: rule.layer } : {}) };
        if (typeof result === 'string') compiled.invalid.push({ ...base, error: result });
        else compiled.rules[list].push({ ...base, caseSensitive: rule.case_sensitive ?? false, regex: result });
      }
    }
    tools[tool] = compiled;
  }
  const out: CompiledPolicy = { default: policy.default ?? GLOBAL_DEFAULT, tools };
  cache.set(policy, out);
  return out;
}

/** A RegExp for a Zed/Rust-style pattern, or the compile error as text. */
export function compilePattern(pattern: string, caseSensitive: boolean): RegExp | string {
  let source = pattern;
  let insensitive = !caseSensitive;
  const inline = /^\(\?(-?)i\)/.exec(source);
  if (inline) {
    insensitive = inline[1] !== '-';
    source = source.slice(inline[0].length);
  }
  return compileGuardedRegex(source, insensitive ? 'i' : '');
}

/**
 * Effective default of a tool: its own, then the global one. `terminal_input`
 * (code typed into a running interpreter) does not inherit a global `allow`:
 * unset, it is `confirm`.
 */
export function toolDefault(policy: CompiledPolicy, tool: ToolName): { mode: PolicyMode; from: 'tool' | 'global' } {
  const own = policy.tools[tool].default;
  if (own !== undefined) return { mode: own, from: 'tool' };
  if (tool === 'terminal_input' && policy.default === 'allow') return { mode: 'confirm', from: 'tool' };
  return { mode: policy.default, from: 'global' };
}

/** The first rule of `list` matching `text`. */
export function firstMatch(rules: readonly CompiledRule[], text: string): CompiledRule | undefined {
  for (const r of rules) if (r.regex.test(text)) return r;
  return undefined;
}

/** Adds learned rules to a policy layer (returns a new layer; duplicates are not added twice). */
export function addRules(policy: Policy, tool: ToolName, list: RuleList, patterns: readonly string[]): Policy {
  const current = policy.tools[tool] ?? { default: undefined, always_allow: [], always_deny: [], always_confirm: [] };
  const existing = new Set(current[list].map((r) => r.pattern));
  const added = patterns.filter((p) => !existing.has(p)).map((pattern) => ({ pattern }));
  return { ...policy, tools: { ...policy.tools, [tool]: { ...current, [list]: [...current[list], ...added] } } };
}
