/**
 * @module
 * MCP resources a client can attach to a conversation: a terminal's rendered
 * screen (`skein://terminal/{id}/screen`), its output log
 * (`skein://terminal/{id}/output`) and the action log's diffs
 * (`skein://review/diff`). Terminals are the session agent's open ones.
 */
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { TerminalId } from '../../schemas/ids.ts';
import type { AgentSession } from './session.ts';
import { readScreen } from './tools-terminal.ts';

/** The output resource returns at most this much of the log (head and tail, as terminal.read pages it). */
const OUTPUT_BYTES = 256 * 1024;
/** The review resource follows review.list's pages up to this many characters of diff. */
const DIFF_CHARS = 8 * 1024 * 1024;

export function registerResources(server: McpServer, session: AgentSession): void {
  const me = () => session.client.agent(session.agentId);
  const terminals = async () => (await me().terminal.list({})).terminals;
  const listAs = (suffix: string, what: string) => async () => ({
    resources: (await terminals()).map((t) => ({
      uri: `skein://terminal/${t.terminalId}/${suffix}`,
      name: `${t.terminalId} ${what}`,
      mimeType: 'text/plain',
    })),
  });
  const complete = {
    id: async (value: string) => (await terminals()).map((t) => t.terminalId).filter((id) => id.startsWith(value)),
  };
  const idOf = (variables: Record<string, string | string[]>) => String(variables['id']);

  server.registerResource(
    'terminal-screen',
    new ResourceTemplate('skein://terminal/{id}/screen', { list: listAs('screen', 'screen'), complete }),
    { title: 'Terminal screen', description: 'The rendered screen rows of a terminal.', mimeType: 'text/plain' },
    async (uri, variables) => {
      const screen = await readScreen(session, idOf(variables));
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: screen.lines.join('\n') }] };
    },
  );

  server.registerResource(
    'terminal-output',
    new ResourceTemplate('skein://terminal/{id}/output', { list: listAs('output', 'output log'), complete }),
    { title: 'Terminal output', description: 'The plain-text output log of a terminal.', mimeType: 'text/plain' },
    async (uri, variables) => {
      const terminalId = idOf(variables) as TerminalId;
      const page = await me().terminal.read({ terminalId, cursor: 0, maxBytes: OUTPUT_BYTES });
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: page.output }] };
    },
  );

  server.registerResource(
    'review-diff',
    'skein://review/diff',
    {
      title: 'Changes to review',
      description: 'Unified diffs of every file the session agent and its sub-agents changed.',
      mimeType: 'text/x-diff',
    },
    async (uri) => {
      // Every page up to DIFF_CHARS (a big review comes in pages, a big diff in parts): a resource has no
      // cursor, so what is left out is said at the end with the review_list call that gets it.
      let text = '';
      let last: { path: string; end?: number } | undefined;
      let cursor: string | undefined;
      do {
        const page = await me().review.list(cursor === undefined ? {} : { cursor });
        for (const f of page.files) {
          const continues = f.diffPart !== undefined && f.diffPart.start > 0 && last?.path === f.path;
          text += continues || text === '' ? f.diff : `\n${f.diff}`;
          last = { path: f.path, ...(f.diffPart ? { end: f.diffPart.end } : {}) };
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined && text.length < DIFF_CHARS);
      if (cursor !== undefined) {
        text +=
          `\n\nMore changes follow (this resource stops at ${DIFF_CHARS} characters): call review_list with ` +
          `cursor ${JSON.stringify(cursor)} for the next page.`;
      }
      return { contents: [{ uri: uri.href, mimeType: 'text/x-diff', text }] };
    },
  );
}
