/**
 * @module
 * Sub-agents and review. `spawn_agent` starts a child of the session agent
 * (a narrower policy, a sub-workspace, optionally a worker program);
 * `wait_agent` waits for it. `review_list` shows the action log (every file
 * the session agent and its sub-agents changed, with diffs and hunk ids, a
 * page at a time: its cursor argument takes the nextCursor of the page before);
 * `review_accept` keeps changes, `review_reject` reverses them on disk.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { AgentId } from '../../schemas/ids.ts';
import { Selection as SelectionSchema } from '../../schemas/review-values.ts';
import type { AgentSession } from './session.ts';
import { replySchema, result, runTool } from './tool-kit.ts';

/** review.accept/reject's own data schema: a hand-made copy here had no `seen`, and the SDK strips what it lacks. */
const Selection = SelectionSchema.shape;

export function registerAgentTools(server: McpServer, session: AgentSession): void {
  const me = () => session.client.agent(session.agentId);

  server.registerTool(
    'spawn_agent',
    {
      title: 'Start a sub-agent',
      description:
        'Start a sub-agent for a separate task, with its own terminals and at most your permissions. Give ' +
        'worker to run a program (another LLM CLI, a script) as that agent; then wait_agent for its result.',
      inputSchema: z.strictObject({
        label: z.string().min(1).max(200).describe('A short name, e.g. "test-fixer".'),
        task: z.string().max(100_000).optional().describe('What it should do (its worker sees SKEIN_TASK).'),
        workspace: z.string().min(1).optional().describe('A directory inside your workspace to confine it to.'),
        policy: z.record(z.string(), z.unknown()).optional().describe('A narrower policy layer (policy.json shape).'),
        worker: z
          .object({
            command: z.string().min(1),
            args: z.array(z.string()).max(1000).default([]),
            env: z.record(z.string(), z.string()).default({}),
          })
          .optional(),
      }),
      outputSchema: replySchema('agent.spawn'),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    async (args, extra) => runTool(server, session, extra, async () => result(await me().agent.spawn(args))),
  );

  server.registerTool(
    'wait_agent',
    {
      title: 'Wait for a sub-agent',
      description: 'Wait until a sub-agent completes, fails or is cancelled (or timeoutMs passes; done is then false).',
      inputSchema: z.strictObject({
        agentId: AgentId,
        timeoutMs: z
          .number()
          .int()
          .min(0)
          .max(10 * 60_000)
          .default(30_000),
      }),
      outputSchema: replySchema('agent.wait'),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () =>
        result(await me().agent.wait(args, { timeoutMs: args.timeoutMs + 30_000 })),
      ),
  );

  server.registerTool(
    'review_list',
    {
      title: 'List changes to review',
      description:
        'Every file you and your sub-agents changed (by edits or shell commands), with unified diffs and hunk ids. ' +
        'A big review comes in pages: when the result has nextCursor, call again with that cursor for the next.',
      inputSchema: z.strictObject({
        cursor: z.string().max(4096).optional().describe('nextCursor of the previous page; omit for the first page.'),
      }),
      outputSchema: replySchema('review.list'),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () => {
        const reply = await me().review.list(args.cursor === undefined ? {} : { cursor: args.cursor });
        return result(reply, reviewText(reply));
      }),
  );

  server.registerTool(
    'review_accept',
    {
      title: 'Accept changes',
      description:
        'Keep changes (all, or the given paths / hunks): they leave the review list. Pass seen (path → the ' +
        'currentHash review_list showed) to keep only what was looked at: a file changed since is refused.',
      inputSchema: z.strictObject(Selection),
      outputSchema: replySchema('review.accept'),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async (args, extra) => runTool(server, session, extra, async () => result(await me().review.accept(args))),
  );

  server.registerTool(
    'review_reject',
    {
      title: 'Reject changes',
      description:
        'Undo changes on disk (all, or the given paths / hunks). Conflicting hunks are left alone and reported.',
      inputSchema: z.strictObject(Selection),
      outputSchema: replySchema('review.reject'),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    async (args, extra) => runTool(server, session, extra, async () => result(await me().review.reject(args))),
  );
}

/** The diffs of one page, and how to get the next when there is one. */
function reviewText(reply: { files: Array<{ diff: string }>; nextCursor?: string | undefined }): string {
  const diffs = reply.files.length ? reply.files.map((f) => f.diff).join('\n') : 'no changes to review';
  if (reply.nextCursor === undefined) return diffs;
  return (
    `${diffs}\n\nMore changes follow: call review_list with cursor ${JSON.stringify(reply.nextCursor)} ` +
    'for the next page.'
  );
}
