/**
 * @module
 * The tools a policy judges, and how a command says which tool call it is.
 * One enum: the CommandDefs, the policy files, the gate, `skein policy check`
 * and docs/protocol.md all use it. Each command that is a tool call declares
 * the call once (`tool` on its CommandDef): what the gate sees is what that
 * declaration computes from the command's data, nothing else.
 */
import * as z from 'zod';
import { shellQuote } from './shell-quote.ts';

/** The five gated tools, plus `terminal_input`: data written to a running terminal. */
export const TOOLS = ['terminal', 'terminal_input', 'read_file', 'edit_file', 'write_file', 'spawn_agent'] as const;
export const ToolName = z.enum(TOOLS);
export type ToolName = z.infer<typeof ToolName>;

/** What the policy is asked about: a tool and its input (`terminalId` for input written to a terminal). */
export type ToolCall = {
  tool: ToolName;
  input: string;
  terminalId?: string | undefined;
  /**
   * What a person answering an ask should see beyond `input` (which the policy judges): a write's content,
   * an edit's old and new text. Shown, never judged; the gate bounds its length.
   */
  detail?: string | undefined;
};

/**
 * How a command is a tool call. The gate runs for every command that has one (a finished agent is refused);
 * `call` gives what the policy judges, or undefined when the command runs nothing a policy could judge
 * (read a screen, resize, close…). `tools` lists every tool `call` can return, for docs and checks.
 */
export type ToolDecl<TData> = {
  tools: readonly [ToolName, ...ToolName[]];
  call?(data: TData): ToolCall | undefined;
};

/**
 * An environment as the `export` lines it amounts to: PATH=/tmp/evil would make an allowed
 * `git status` run anything, so an env is judged like the commands a shell runs first.
 */
export function envAsExports(env: Readonly<Record<string, string>>): string | undefined {
  const entries = Object.entries(env);
  if (entries.length === 0) return undefined;
  return entries.map(([k, v]) => `export ${k}=${shellQuote(v)}`).join('\n');
}
