/**
 * @module
 * The permission decision: a pure function of the request, its shell split
 * or path facts, and the compiled policy. See `decide` for the precedence.
 */
import type { PolicyMode } from '../../schemas/policy.ts';
import type { ToolName } from '../../schemas/tool.ts';
import {
  clip,
  inputProblem,
  layerText,
  matched,
  mostRestrictive,
  RANK,
  result,
  type Decision,
  type DecisionRequest,
  type MatchedRule,
} from './permission-decision.ts';
import { deepFreeze } from '../common/deep-freeze.ts';
import { builtinDenial } from './permission-builtin.ts';
import { controlProblem } from './permission-control.ts';
import { alwaysAsk, namesPolicy, pathForms } from './permission-paths.ts';
import { exactRule } from './permission-patterns.ts';
import {
  compilePolicy,
  firstMatch,
  toolDefault,
  type CompiledPolicy,
  type CompiledRule,
  type MergedPolicy,
} from './policy.ts';
import type { ShellSplit } from './shell-words.ts';

export {
  INPUT_LIMITS,
  inputProblem,
  mostRestrictive,
  type Decision,
  type DecisionLevel,
  type DecisionRequest,
  type MatchedRule,
} from './permission-decision.ts';

/**
 * Decides one tool call. Precedence, highest first:
 *
 * 0. input limits: empty, NUL bytes, longer than `INPUT_LIMITS.maxChars` → deny; terminal commands and
 *    worker command lines holding control characters other than newline and tab → deny (permission-control.ts);
 * 1. built-in rules (terminal, terminal_input): host-destroying commands → deny, never overridable;
 * 2. invalid patterns for the tool → deny naming them;
 * 3. terminal only, unless the policy is an unconditional allow-all: a parse failure → deny;
 * 4. deny rules: any sub-command (any of its forms), pipeline or the whole input matching → deny;
 * 5. file tools: outside the workspace, symlink escape, sensitive path; terminal: a word naming `.skein/` or a
 *    `skein/policy.json` (`namesPolicy`) → ask (Yes/No);
 * 6. confirm rules: any matching → ask;
 * 7. an allow rule that is the exact rule of the whole input (`exactRule`, what "always" learns) → allow;
 * 8. terminal: an expansion or substitution (`$VAR`, `${VAR}`, `$(…)`, backticks, `<(…)`, `$((…))`) → ask
 *    unless 9/10 deny, since no rule can know the value (a tool or global default deny still denies);
 * 9. allow rules: allowed only if every sub-command matches (all of its forms);
 * 10. the tool's default, then the global default (`confirm` unless configured).
 *
 * File tools check the raw and the normalized workspace-relative path and take
 * the most restrictive result.
 */
export function decide(request: DecisionRequest, policy: MergedPolicy | CompiledPolicy): Decision {
  const compiled = isCompiled(policy) ? policy : compilePolicy(policy);
  if (request.tool === 'terminal_input' && request.split) {
    // Input to a running shell: the `terminal_input` class and the command check; most restrictive wins.
    const { split, ...plain } = request;
    return mostRestrictive([decideOne(plain, compiled), decideOne({ ...request, tool: 'terminal' }, compiled)]);
  }
  return decideOne(request, compiled);
}

/**
 * Shell decisions already made, per compiled policy and split: `decideOne` is a pure function of the request
 * and the policy, and a split is frozen and shared by every request of the same text (the gate's splitter
 * remembers them), so a command run again (the test command, `git status`) is looked up, not judged again
 * (~45 µs of an exec's host time, most of it cache misses). A new policy is a new compiled object, so nothing
 * outlives the policy it was decided under; the text is compared too, so a split passed with other text is
 * judged afresh. The decision is frozen: every caller gets the same object.
 */
const decided = new WeakMap<
  CompiledPolicy,
  WeakMap<ShellSplit, Array<{ tool: ToolName; input: string; d: Decision }>>
>();

function decideOne(request: DecisionRequest, compiled: CompiledPolicy): Decision {
  const { split } = request;
  if (split === undefined || request.path !== undefined || !Object.isFrozen(split)) return judge(request, compiled);
  let bySplit = decided.get(compiled);
  if (!bySplit) {
    bySplit = new WeakMap();
    decided.set(compiled, bySplit);
  }
  let known = bySplit.get(split);
  const hit = known?.find((k) => k.tool === request.tool && k.input === request.input);
  if (hit) return hit.d;
  const d = deepFreeze(judge(request, compiled));
  if (!known) {
    known = [];
    bySplit.set(split, known);
  }
  known.push({ tool: request.tool, input: request.input, d });
  return d;
}

function judge(request: DecisionRequest, compiled: CompiledPolicy): Decision {
  const { tool, input } = request;
  if (!compiled.tools[tool]) {
    return result(
      'deny',
      'input',
      `Unknown tool '${String(tool)}'; the gated tools are ${Object.keys(compiled.tools).join(', ')}.`,
      [],
    );
  }
  const bad = inputProblem(input);
  if (bad) return result('deny', 'input', bad, []);
  // Commands and worker command lines are typed into a terminal: a control byte there is acted on by the
  // tty and readline, not by the parser that judged the text. Refused even under an allow-all policy.
  if (tool === 'terminal' || tool === 'spawn_agent') {
    const control = controlProblem(input, tool === 'terminal' ? 'The command' : 'The worker command line');
    if (control) return result('deny', 'input', control, []);
  }
  if (tool === 'terminal' && !request.split) {
    return result(
      'deny',
      'unsafe_shell',
      'The terminal command was not split into sub-commands, so it cannot be ' +
        'checked; build the request with createPermissionGate (actors/policy-gate.ts).',
      [],
    );
  }
  const split = tool === 'terminal' ? request.split : undefined;
  const subjects = subjectsOf(request);
  const texts = request.path ? subjects.flatMap((s) => s.forms) : subjects.map((s) => s.forms[0]!);
  if (split) {
    const builtin = builtinDenial(input, split) ?? (split.parseError ? rawBuiltin(input) : undefined);
    if (builtin) return result('deny', 'builtin', builtin, texts);
  }
  const t = compiled.tools[tool];
  if (t.invalid.length > 0) {
    const n = t.invalid.length;
    const list = t.invalid.map((i) => `"${i.pattern}" (${i.error})`).join(', ');
    return result(
      'deny',
      'invalid_pattern',
      `The ${tool} tool cannot run because ${n} regex ${n === 1 ? 'pattern' : 'patterns'} ` +
        `failed to compile: ${list}. Please fix the invalid patterns in the policy.`,
      texts,
    );
  }
  const def = toolDefault(compiled, tool);
  const allowAll = t.rules.always_deny.length === 0 && t.rules.always_confirm.length === 0 && def.mode === 'allow';
  if (tool === 'terminal' && split?.parseError && !allowAll) {
    return result(
      'deny',
      'unsafe_shell',
      `The terminal command could not be approved because it could not be parsed (${split.parseError}); ` +
        'rewrite it in plainer shell (one command per line, quoted words) and try again.',
      texts,
    );
  }
  // 4. deny
  for (const s of [...subjects, { forms: [input], allowable: false }]) {
    for (const f of s.forms) {
      const r = firstMatch(t.rules.always_deny, f);
      if (r)
        return result(
          'deny',
          'deny_rule',
          `Denied by rule "${r.pattern}"${layerText(r)} for the ${tool} tool: it matches ` +
            `"${clip(f)}". Do not retry it; ask the user, or use a different approach.`,
          texts,
          matched('always_deny', r, f),
        );
    }
  }
  // 5. always-ask paths; a shell command naming the policy files
  const policyWord = split ? [input, ...texts].map(namesPolicy).find((w) => w !== undefined) : undefined;
  const ask =
    policyWord !== undefined
      ? {
          scope: 'sensitive' as const,
          reason:
            `\`${clip(policyWord)}\` names skein's permission policy (.skein/ or a policy file): ` +
            'a command touching it always asks',
        }
      : request.path
        ? alwaysAsk(input, request.path)
        : undefined;
  if (ask) {
    if (def.mode === 'deny' && !anyAllowed(subjects, t.rules.always_allow)) {
      return result(
        'deny',
        def.from === 'tool' ? 'tool_default' : 'global_default',
        `${tool} is disabled (default: deny).`,
        texts,
      );
    }
    return { ...result('confirm', 'always_ask', ask.reason, texts), scope: ask.scope };
  }
  // 6. confirm
  for (const s of subjects) {
    for (const f of s.forms) {
      const r = firstMatch(t.rules.always_confirm, f);
      if (r)
        return result(
          'confirm',
          'confirm_rule',
          `Rule "${r.pattern}"${layerText(r)} asks for confirmation: "${clip(f)}".`,
          texts,
          matched('always_confirm', r, f),
          patternsFor(request, t.rules.always_allow),
        );
    }
  }
  // 7. the exact rule of the whole input: what a person's "always" learned for this very call
  // (file tools match their learned path rule through the forms, below)
  const exact = request.path ? undefined : exactRule(request.input);
  const own = exact === undefined ? undefined : t.rules.always_allow.find((r) => r.pattern === exact);
  if (own) {
    return result(
      'allow',
      'allow_rule',
      `Allowed by rule "${own.pattern}"${layerText(own)} (this exact input).`,
      texts,
      {
        ...matched('always_allow', own, input),
      },
    );
  }
  const fallback = allowOrDefault(tool, subjects, texts, t.rules.always_allow, def, split);
  // 8. an expansion's value is unknown to every rule: never allowed without a person
  const hidden = split ? expansionsOf(input, split) : [];
  if (hidden.length > 0 && fallback.outcome !== 'deny') {
    return result(
      'confirm',
      'expansion',
      `The command contains ${hidden
        .slice(0, 3)
        .map((u) => `"${u}"`)
        .join(', ')}, whose value no rule can know, so it needs a person's approval. To run it without ` +
        'asking, resolve those values first and send the literal command.',
      texts,
      undefined,
      patternsFor(request, t.rules.always_allow),
    );
  }
  return fallback.outcome === 'confirm'
    ? { ...fallback, patterns: patternsFor(request, t.rules.always_allow) }
    : fallback;
}

/** 9 and 10: allow rules (every sub-command, every form), then the tool's and the global default. */
function allowOrDefault(
  tool: ToolName,
  subjects: Subject[],
  texts: string[],
  allow: readonly CompiledRule[],
  def: { mode: PolicyMode; from: 'tool' | 'global' },
  split: ShellSplit | undefined,
): Decision {
  const allowable = subjects.filter((s) => s.allowable);
  const allowEnabled = !split?.parseError && allowable.length > 0;
  let last: MatchedRule | undefined;
  const allMatch =
    allowEnabled &&
    allowable.every((s) =>
      s.forms.every((f) => {
        const r = firstMatch(allow, f);
        if (r) last = matched('always_allow', r, f);
        return r !== undefined;
      }),
    );
  if (allMatch && last) {
    return result(
      'allow',
      'allow_rule',
      allowable.length === 1
        ? `Allowed by rule "${last.pattern}".`
        : `Allowed: every one of ${allowable.length} sub-commands matches an allow rule.`,
      texts,
      last,
    );
  }
  const level = def.from === 'tool' ? 'tool_default' : 'global_default';
  const reason =
    def.mode === 'deny'
      ? def.from === 'tool'
        ? `${tool} tool is disabled (its default is deny).`
        : 'Blocked by global default: deny.'
      : def.mode === 'allow'
        ? `Allowed by the ${def.from} default.`
        : `No rule allows this ${tool} call; the ${def.from} default is to ask.`;
  return result(def.mode, level, reason, texts);
}

/**
 * The expansions of a terminal command. An unparseable command (only judged under an allow-all policy) is
 * read by its raw text: any `$`, backtick or process substitution counts.
 */
function expansionsOf(input: string, split: ShellSplit): string[] {
  if (split.unsafe.length > 0) return split.unsafe;
  if (!split.parseError) return [];
  const m = /\$|`|[<>]\(/.exec(input);
  return m ? [m[0]] : [];
}

type Subject = { forms: string[]; allowable: boolean };

function subjectsOf(request: DecisionRequest): Subject[] {
  const split = request.split;
  if (split) return split.commands.map((c) => ({ forms: c.forms, allowable: c.kind !== 'pipeline' }));
  if (request.path) {
    const { raw, normalized } = pathForms(request.input, request.path);
    return [{ forms: raw === normalized ? [normalized] : [normalized, raw], allowable: true }];
  }
  // Input to an interpreter runs line by line: each line is judged, as a command's sub-commands are. Matched
  // whole, `print(1)` then `__import__("os").system(…)` on the next line passed a rule `^print\(`.
  if (request.tool === 'terminal_input') {
    const lines = request.input.split(/\r\n|\r|\n/).filter((l) => l.trim().length > 0);
    if (lines.length > 1) return lines.map((line) => ({ forms: [line], allowable: true }));
  }
  return [{ forms: [request.input], allowable: true }];
}

/**
 * What an "always" answer would learn: the exact rule of the whole command line, of the workspace-relative
 * path (none outside the workspace), or of the input; none when the rules already hold it.
 */
function patternsFor(request: DecisionRequest, allow: readonly CompiledRule[]): string[] {
  const target = request.path ? pathForms(request.input, request.path) : undefined;
  if (target && !target.inside) return [];
  const rule = target ? exactRule(target.normalized, 'path') : exactRule(request.input);
  if (rule === undefined || allow.some((r) => r.pattern === rule)) return [];
  return [rule];
}

function anyAllowed(subjects: Subject[], allow: readonly CompiledRule[]): boolean {
  return subjects.length > 0 && subjects.every((s) => s.forms.every((f) => firstMatch(allow, f)));
}

/** A whitespace reading of an unparseable input, so built-ins still see `rm -rf / "` etc. */
function rawBuiltin(input: string): string | undefined {
  const commands = input
    .split(/[;&|\n()`{}]+/)
    .map((part) =>
      part
        .trim()
        .split(/\s+/)
        .map((w) => w.replace(/["'\\]/g, ''))
        .filter(Boolean),
    )
    .filter((a) => a.length > 0);
  return builtinDenial(input, {
    commands: commands.map((argv) => ({
      kind: 'command',
      text: argv.join(' '),
      forms: [argv.join(' ')],
      argv: [argv[0]!.replace(/^.*\//, ''), ...argv.slice(1)],
    })),
    unsafe: [],
  });
}

function isCompiled(p: MergedPolicy | CompiledPolicy): p is CompiledPolicy {
  const t = (p as CompiledPolicy).tools.terminal;
  return t !== undefined && 'rules' in t;
}

/**
 * A sub-agent's decision: the most restrictive of its own effective policy
 * and each ancestor's (`ancestors[0]` = parent). A sub-agent can narrow,
 * never widen. `fromParent` is set when an ancestor's decision was stricter.
 */
export function decideForAgent(
  request: DecisionRequest,
  own: MergedPolicy | CompiledPolicy,
  ancestors: ReadonlyArray<MergedPolicy | CompiledPolicy> = [],
): Decision & { fromParent: boolean } {
  const mine = decide(request, own);
  let best: Decision = mine;
  for (const p of ancestors) {
    const d = decide(request, p);
    if (RANK[d.outcome] > RANK[best.outcome]) best = d;
  }
  if (best === mine) return { ...mine, fromParent: false };
  // Keep the sub-agent's own "always" patterns so an answer persists something useful.
  return {
    ...best,
    patterns: best.patterns.length ? best.patterns : mine.patterns,
    reason: `${best.reason} (from the parent agent's policy, which a sub-agent cannot widen)`,
    fromParent: true,
  };
}
