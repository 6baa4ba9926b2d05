/**
 * @module
 * `skein policy check --policy <file>… (--tool <tool> --input <value> |
 * --command <type> --data <json>) [--workspace <dir>] [--json]`: decides one
 * tool call against policy files,
 * standalone (no runtime). Prints the decision, reason, matched rule and the
 * sub-commands it saw. Exit 0 allow, 3 confirm, 4 deny, 2 bad usage.
 * Without `--policy`, the global and project files are used. With
 * `--command`, the tool and input are what that command's CommandDef declares
 * (the gate's own view of it).
 */
import type { Command } from 'commander';
import { TOOLS } from '../../schemas/tool.ts';

export const POLICY_EXIT = { allow: 0, confirm: 3, deny: 4, usage: 2 } as const;

export type PolicyCheckOptions = {
  policy?: string[];
  tool?: string;
  input?: string;
  /** A command type (e.g. terminal.exec): the tool call is what its CommandDef declares for `data`. */
  command?: string;
  data?: string;
  workspace?: string;
  json?: boolean;
};

/** Registers `skein policy check` on the program. */
export function registerPolicyCommands(program: Command): void {
  const policy = program.command('policy').description('Inspect and test permission policies.');
  policy
    .command('check')
    .description('Decide one tool call against policy files (exit 0 allow, 3 confirm, 4 deny, 2 bad usage).')
    .option('--policy <file...>', 'policy file(s), merged in order (default: global + project files)')
    .option('--tool <tool>', TOOLS.join(', '))
    .option('--input <value>', 'the command line, path or input to check')
    .option('--command <type>', 'a command type (e.g. terminal.exec): judge the tool call it declares for --data')
    .option('--data <json>', "the command's data, as JSON (with --command)")
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
  const call = await toolCallFromOptions(opts);
  if ('error' in call) return usage(call.error);
  const { ToolName } = await import('../../schemas/tool.ts');
  const tool = ToolName.safeParse(call.tool);
  if (!tool.success) {
    return usage(`unknown tool '${call.tool}'; use one of ${ToolName.options.join(', ')}`);
  }
  const input = call.input;
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
    input,
    workspace,
    policy: merged,
    sensitive: (opts.policy ?? []).map((f) => resolve(f)),
  });
  const code = POLICY_EXIT[d.outcome];
  if (opts.json) return { code, stdout: `${JSON.stringify({ ...d, tool: tool.data, input }, null, 2)}\n`, stderr: '' };
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
  tool: import('../../schemas/tool.ts').ToolName;
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
      // As the runtime's precheck: a write may create its missing parents once allowed, so that is no refusal.
      const missingParent = err instanceof Error && (err as { code?: unknown }).code === 'not_found';
      if (!(args.tool === 'write_file' && missingParent)) {
        const why = (err as Error).message;
        const reason = `Refused before the policy (the runtime confines files to the workspace): ${why}`;
        return { outcome: 'deny', level: 'builtin', reason, subCommands: [args.input], patterns: [] };
      }
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

/** The tool call to judge: given as --tool/--input, or what --command's CommandDef declares for --data. */
async function toolCallFromOptions(
  opts: PolicyCheckOptions,
): Promise<{ tool: string; input: string } | { error: string }> {
  if (opts.command === undefined) {
    if (opts.tool === undefined || opts.input === undefined) {
      return { error: 'give --tool and --input, or --command and --data' };
    }
    return { tool: opts.tool, input: opts.input };
  }
  if (opts.tool !== undefined || opts.input !== undefined) {
    return { error: '--command takes the tool and input from the command; drop --tool and --input' };
  }
  const { commandsByType } = await import('../../schemas/catalog.ts');
  const { formatIssues } = await import('../transport/codec.ts');
  const def = commandsByType.get(opts.command);
  if (!def) {
    return { error: `unknown command '${opts.command}'; run \`skein schema ${opts.command}\` for the close matches` };
  }
  if (!def.tool) return { error: `command '${opts.command}' is not a tool call; the gate does not judge it` };
  let raw: unknown;
  try {
    raw = JSON.parse(opts.data ?? '{}');
  } catch (err) {
    return { error: `--data is not valid JSON (${(err as Error).message}); give the command's data object` };
  }
  const data = def.data.safeParse(raw);
  if (!data.success) return { error: `--data does not fit '${opts.command}': ${formatIssues(data.error, 'data')}` };
  const call = def.tool.call?.(data.data);
  if (!call) return { error: `this '${opts.command}' runs nothing a policy judges; it is allowed for a live agent` };
  return call;
}

function usage(message: string): { code: number; stdout: string; stderr: string } {
  return { code: POLICY_EXIT.usage, stdout: '', stderr: `skein policy check: ${message}\n` };
}
