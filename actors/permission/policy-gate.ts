/**
 * @module
 * Builds the `DecisionRequest` for one tool call — the effectful part of a
 * decision: tree-sitter splitting for terminal input, symlink resolution for
 * file paths, the terminal-input classification — so that the pure
 * `decideForAgent` / `permissionMachine` can take it as input.
 */
import type { DecisionRequest } from '../../machines/permission/permission-policy.ts';
import { classifyTerminalInput, type TerminalForeground } from '../../machines/permission/permission-input.ts';
import type { ToolName } from '../../schemas/tool.ts';
import { createShellSplitter, type ShellSplitter } from './shell-splitter.ts';
import { globalPolicyPath, projectPolicyPath, resolvePathFacts } from './policy-files.ts';

export type GateOptions = {
  /** Workspace roots of the agent (the first resolves relative paths). */
  roots: string[];
  /** Extra always-ask files (besides the global and project policy files). */
  sensitive?: string[];
  /** For `terminal_input`: what the terminal is running. */
  foreground?: TerminalForeground;
};

/** What a gate decides about a tool call before the policy runs. */
export type GateRequest =
  | { kind: 'decide'; request: DecisionRequest }
  /** `terminal_input` to a program that is not an interpreter: allowed under the grant that started it. */
  | { kind: 'granted'; reason: string };

export type PermissionGate = { build: (tool: ToolName, input: string, options: GateOptions) => Promise<GateRequest> };

/** Loads the bash grammar once; `build` then prepares requests. */
export async function createPermissionGate(splitter?: ShellSplitter): Promise<PermissionGate> {
  const split = splitter ?? (await createShellSplitter());
  return {
    async build(tool, input, options) {
      if (tool === 'terminal') return { kind: 'decide', request: { tool, input, split: split(input) } };
      if (tool === 'terminal_input') {
        const cls = classifyTerminalInput(options.foreground ?? { kind: 'prompt' }, input);
        if (cls.kind === 'granted') return cls;
        const lines = cls.lines.join('\n');
        if (cls.kind === 'command')
          return { kind: 'decide', request: { tool: 'terminal', input: lines, split: split(lines) } };
        // Shown whole, the unfinished line too: it is part of what was written (judged again once completed).
        const shown = input
          .split(/\r\n|\r|\n/)
          .filter((l) => l.trim().length > 0)
          .join('\n');
        return {
          kind: 'decide',
          request: {
            tool: 'terminal_input',
            input: shown || input,
            ...(cls.alsoCommand && lines ? { split: split(lines) } : {}),
          },
        };
      }
      if (tool === 'spawn_agent') return { kind: 'decide', request: { tool, input } };
      const root = options.roots[0] ?? process.cwd();
      const sensitive = [projectPolicyPath(root), globalPolicyPath(), ...(options.sensitive ?? [])];
      return {
        kind: 'decide',
        request: { tool, input, path: await resolvePathFacts(input, options.roots, sensitive) },
      };
    },
  };
}
