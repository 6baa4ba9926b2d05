/**
 * @module
 * The file tools: `read_file`, `edit_file` (skein's fuzzy, reindenting
 * replace, which reports per edit whether it matched exactly or fuzzily and
 * how similar the text was) and `write_file`. Every change lands in the
 * action log, where review_list / review_reject can see and undo it.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import type { CommandReply } from '../client/index.ts';
import type { AgentSession } from './session.ts';
import { replySchema, result, runTool } from './tool-kit.ts';

const Path = z.string().min(1).describe('File path, relative to the workspace (or absolute inside it).');

export function registerFileTools(server: McpServer, session: AgentSession): void {
  const me = () => session.client.agent(session.agentId);

  server.registerTool(
    'read_file',
    {
      title: 'Read a file',
      description:
        'Read a file, or lines startLine..endLine of it. Large files return an outline of symbols: then read the ' +
        'range you need. Read before you edit.',
      inputSchema: z.strictObject({
        path: Path,
        startLine: z.number().int().min(1).optional(),
        endLine: z.number().int().min(1).optional(),
      }),
      outputSchema: replySchema('file.read'),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () => {
        const reply = await me().file.read(args);
        return result(reply, reply.content || JSON.stringify(reply.outline ?? [], null, 2));
      }),
  );

  server.registerTool(
    'edit_file',
    {
      title: 'Edit a file',
      description:
        'Replace oldText with newText in a file, one edit after another. Copy oldText from read_file with a few ' +
        'lines of context so it is unique; small whitespace or indentation drift is tolerated (the reply says ' +
        'whether each edit matched exactly or fuzzily). Use write_file only for new files or full rewrites.',
      inputSchema: z.strictObject({
        path: Path,
        edits: z
          .array(
            z.strictObject({
              oldText: z.string().min(1).describe('Text to replace, copied from the file.'),
              newText: z.string().describe('Replacement text.'),
            }),
          )
          .min(1)
          .max(100),
      }),
      outputSchema: replySchema('file.edit'),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    async (args, extra) => runTool(server, session, extra, async () => applied(await me().file.edit(args))),
  );

  server.registerTool(
    'write_file',
    {
      title: 'Write a file',
      description: 'Create a file, or replace all of its content. For changes to an existing file use edit_file.',
      inputSchema: z.strictObject({ path: Path, content: z.string().max(10 * 1024 * 1024) }),
      outputSchema: replySchema('file.write'),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    async (args, extra) => runTool(server, session, extra, async () => applied(await me().file.write(args))),
  );
}

/** The reply, with a text that says how each edit matched, so a fuzzy match is never silent. */
function applied(reply: CommandReply<'file.edit'>) {
  const matches = reply.edits.map((e) => {
    const similarity = e.similarity.toFixed(2);
    return `edit ${e.index + 1}: ${e.matchKind} match (similarity ${similarity}) at lines ${e.startLine}-${e.endLine}`;
  });
  return result(reply, [reply.message, ...matches, '', reply.diff].join('\n'));
}
