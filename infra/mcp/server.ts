/**
 * @module
 * One MCP server for one agent session: the tools, the resources, and the
 * instructions a model reads first. Transports (stdio, Streamable HTTP) wrap
 * it; the session (runtime link + agent) is made by the caller.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AgentSession } from './session.ts';
import { registerResources } from './resources.ts';
import { registerAgentTools } from './tools-agents.ts';
import { registerFileTools } from './tools-files.ts';
import { registerTerminalTools } from './tools-terminal.ts';

export const SERVER_NAME = 'skein';
export const SERVER_VERSION = '0.1.0';

const INSTRUCTIONS = [
  'skein runs your tool calls on this machine as one agent, under a permission policy.',
  'Run commands with terminal_exec (the shell keeps its directory and variables between calls).',
  'Read with read_file, change files with edit_file (write_file for new files); every change is recorded',
  'and can be listed with review_list and undone with review_reject.',
  'A call the policy does not allow outright waits for a person to confirm; a denial comes back as an error.',
].join(' ');

export function createMcpServer(session: AgentSession): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    { capabilities: { tools: {}, resources: {}, logging: {} }, instructions: INSTRUCTIONS },
  );
  registerTerminalTools(server, session);
  registerFileTools(server, session);
  registerAgentTools(server, session);
  registerResources(server, session);
  return server;
}
