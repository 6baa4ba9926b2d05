/**
 * @module
 * `skein policy check --policy <file>… --tool <tool> --input <value>
 * [--workspace <dir>] [--json]`: decides one tool call against policy files,
 * standalone (no runtime). Prints the decision, reason, matched rule and the
 * sub-commands it saw. Exit 0 allow, 3 confirm, 4 deny, 2 bad usage.
 * Without `--policy`, the global and project files are used.
 */
import type { Command } from 'commander';

export const POLICY_EXIT = { allow: 0, confirm: 3, deny: 4, usage: 2 } as const;

export type PolicyCheckOptions = { policy?: string[]; tool: string; input: string; workspace?: string; json?: boolean };

/** Registers `skein policy check` on the program. */
export function registerPolicyCommands(program: Command): void {
  const policy = program.command('policy').description('Inspect and test permission policies.');
  policy
    .command('check')
    .description('Decide one tool call against policy files (exit 0 allow, 3 confirm, 4 deny, 2 bad usage).')
    .option('--policy <file...>', 'policy file(s), merged in order (default: global + project files)')
    .requiredOption('--tool <tool>', 'terminal, terminal_input, read_file, edit_file, write_file or spawn_agent')
    .requiredOption('--input <value>', 'the command line, path or input to check')
    .option('--workspace <dir>', 'workspace root for file paths and the project policy (default: current directory)')
    .option('--json', 'print the decision as JSON')
    .action(async (opts: PolicyCheckOptions) => {
      const result = await runPolicyCheck(opts);
      if (result.stdout) process.stdout.write(result.stdout);
      if (result.stderr) process.stderr.write(result.stderr);
      process.exitCode = result.code;
    });
}

/** The check itself, returning output and exit code (testable without a process). */
export async function runPolicyCheck(
  opts: PolicyCheckOptions,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { PolicyTool } = await import('../../schemas/policy.ts');
  const tool = PolicyTool.safeParse(opts.tool);
  if (!tool.success) {
    return usage(`unknown tool '${opts.tool}'; use one of ${PolicyTool.options.join(', ')}`);
  }
  const { resolve } = await import('node:path');
  const files = await import('../../actors/permission/policy-files.ts');
  const { mergePolicies } = await import('../../machines/permission/policy.ts');
  const workspace = resolve(opts.workspace ?? process.cwd());
  let layers: Awaited<ReturnType<typeof files.loadPolicyLayers>>;
  try {
    if (opts.policy && opts.policy.length > 0) {
      layers = [] as typeof layers;
      for (const file of opts.policy) {
        const p = await files.loadPolicyFile(resolve(file));
        if (!p) return usage(`policy file '${file}' does not exist; give an existing file`);
        layers.push({ name: file, policy: p });
      }
    } else {
      layers = await files.loadPolicyLayers({ workspace });
    }
  } catch (err) {
    return usage((err as Error).message);
  }
  const merged = mergePolicies(layers);
  const d = await decideLikeRuntime({
    tool: tool.data,
    input: opts.input,
    workspace,
    policy: merged,
    sensitive: (opts.policy ?? []).map((f) => resolve(f)),
  });
  const code = POLICY_EXIT[d.outcome];
  if (opts.json)
    return { code, stdout: `${JSON.stringify({ ...d, tool: tool.data, input: opts.input }, null, 2)}\n`, stderr: '' };
  const lines = [`decision: ${d.outcome} (${d.level})`, `reason: ${d.reason}`];
  if (d.rule)
    lines.push(
      `rule: ${d.rule.list} "${d.rule.pattern}"${d.rule.layer ? ` from ${d.rule.layer}` : ''} ` +
        `matched "${d.rule.matched}"`,
    );
  if (d.scope) lines.push(`scope: ${d.scope}`);
  lines.push(`sub-commands (${d.subCommands.length}):`, ...d.subCommands.map((s) => `  ${s}`));
  if (d.patterns.length > 0) lines.push(`"always" would persist: ${d.patterns.join('  ')}`);
  return { code, stdout: `${lines.join('\n')}\n`, stderr: '' };
}

type Decision = import('../../machines/permission/permission-policy.ts').Decision;

/**
 * One tool call decided by the runtime's own code path, for the root agent of `workspace`: file paths first
 * go through the workspace confinement the runtime applies before any policy (`resolveInWorkspace`, the
 * function behind the edit service's `resolvePath`: a path outside is refused, not asked about), then the
 * permission gate builds the request (shell split, path facts, terminal-input class) and `decide` judges it.
 */
export async function decideLikeRuntime(args: {
  tool: import('../../schemas/policy.ts').PolicyTool;
  input: string;
  workspace: string;
  policy: import('../../machines/permission/policy.ts').MergedPolicy;
  sensitive?: string[];
}): Promise<Decision> {
  const { decide, inputProblem } = await import('../../machines/permission/permission-policy.ts');
  const { createPermissionGate } = await import('../../actors/permission/policy-gate.ts');
  if (args.tool === 'read_file' || args.tool === 'edit_file' || args.tool === 'write_file') {
    const bad = inputProblem(args.input);
    if (bad) return { outcome: 'deny', level: 'input', reason: bad, subCommands: [], patterns: [] };
    const { resolveInWorkspace } = await import('../../actors/edit/file-io.ts');
    try {
      await resolveInWorkspace([args.workspace], args.input);
    } catch (err) {
      const why = (err as Error).message;
      const reason = `Refused before the policy (the runtime confines files to the workspace): ${why}`;
      return { outcome: 'deny', level: 'builtin', reason, subCommands: [args.input], patterns: [] };
    }
  }
  const built = await (await createPermissionGate()).build(args.tool, args.input, {
    roots: [args.workspace],
    ...(args.sensitive ? { sensitive: args.sensitive } : {}),
  });
  if (built.kind === 'granted') {
    return { outcome: 'allow', level: 'tool_default', reason: built.reason, subCommands: [], patterns: [] };
  }
  return decide(built.request, args.policy);
}

function usage(message: string): { code: number; stdout: string; stderr: string } {
  return { code: POLICY_EXIT.usage, stdout: '', stderr: `skein policy check: ${message}\n` };
}
