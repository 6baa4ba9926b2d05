/**
 * @module
 * Shared fixtures for the permission tests: the bypass-suite policy and a
 * helper that splits with the real tree-sitter-bash grammar and decides.
 */
import { createShellSplitter, type ShellSplitter } from '../../actors/permission/shell-splitter.ts';
import { decide, type Decision } from '../../machines/permission/permission-policy.ts';
import { mergePolicies, type MergedPolicy } from '../../machines/permission/policy.ts';
import { Policy, type PolicyInput } from '../../schemas/policy.ts';

/** Denies recursive rm and `curl … | sh`; allows `git status`, `ls`, `npm test`. */
export const BYPASS_POLICY: PolicyInput = {
  default: 'confirm',
  tools: {
    terminal: {
      always_deny: [
        // The first flag class leaves out r: with [a-zA-Z]* on both sides of [rR] the rule took quadratic time on
        // 'rm -rrrr…' (16,000 r: 0.4 s), and is now refused (machines/permission/regex-backtracking.ts).
        { pattern: '^rm\\b.*\\s(-[a-qs-zA-QS-Z]*[rR][a-zA-Z]*|--recursive)(\\s|$)' },
        { pattern: '\\bcurl\\b.*\\|&?\\s*(ba|z|da|k)?sh\\b' },
      ],
      always_allow: [
        { pattern: '^git\\s+status(\\s|$)' },
        { pattern: '^ls(\\s|$)' },
        { pattern: '^npm\\s+test(\\s|$)' },
      ],
    },
  },
};

/** Parses and merges policy JSON layers (each validated by the schema). */
export function merged(...layers: PolicyInput[]): MergedPolicy {
  return mergePolicies(layers.map((p, i) => ({ name: `layer${i}`, policy: Policy.parse(p) })));
}

const splitters = new Map<string, Promise<ShellSplitter>>();
/**
 * The real splitter, one per test file. Keyed by the file and not held in a module variable: a mutation run
 * (vitest.mutation.config.ts) shares modules between test files, and one splitter's memo of splits would then
 * let a later file's test read an earlier file's split without parsing, so it would not reach (and could not
 * kill) the mutants of the parse. The grammar itself is loaded once either way (actors/common/tree-sitter.ts).
 */
export function shellSplitter(): Promise<ShellSplitter> {
  const file = expect.getState().testPath ?? '';
  let splitter = splitters.get(file);
  if (!splitter) {
    splitter = createShellSplitter();
    splitters.set(file, splitter);
  }
  return splitter;
}

/** Splits `command` and decides it as a terminal call under `policy`. */
export async function decideTerminal(policy: MergedPolicy, command: string): Promise<Decision> {
  const split = (await shellSplitter())(command);
  return decide({ tool: 'terminal', input: command, split }, policy);
}

/** The policy of issue 11's reproductions: default deny, a few plain commands allowed, rm and curl denied. */
export const ISSUE_11_POLICY = {
  default: 'deny',
  tools: {
    terminal: {
      always_allow: [
        { pattern: '^ls\\b' },
        { pattern: '^git\\s+status\\b' },
        { pattern: '^echo\\b' },
        { pattern: '^cat\\b' },
      ],
      always_deny: [{ pattern: '^rm\\b' }, { pattern: 'curl' }],
    },
    terminal_input: { default: 'allow' },
    spawn_agent: { always_allow: [{ pattern: '^echo\\b' }] },
  },
};
