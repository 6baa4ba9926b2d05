/**
 * @module
 * What every skein MCP tool shares: turning a reply into a result with
 * `structuredContent`, a refusal into a tool error that says what happened
 * (a denial or a permission timeout says so), and running a call with the
 * session's approval bridge hooked to the client's elicitation.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { commandsByType } from '../../schemas/catalog.ts';
import { SkeinCallError } from '../client/index.ts';
import type { Elicitor } from './approvals.ts';
import type { AgentSession } from './session.ts';
import { inCall, newCallTag } from './call-scope.ts';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How long one elicitation may stay open: as long as skein keeps the request pending by default (5 min). */
export const ELICIT_TIMEOUT_MS = 5 * 60_000;

/** A command's reply schema, the output schema of the tool that calls it. */
export function replySchema(type: string) {
  const def = commandsByType.get(type);
  if (!def) throw new Error(`command '${type}' is not in the catalogue; the MCP tool table is out of date`);
  return def.reply;
}

export function result(structured: Record<string, unknown>, text?: string): CallToolResult {
  return {
    content: [{ type: 'text', text: text ?? JSON.stringify(structured, null, 2) }],
    structuredContent: structured,
  };
}

export function toolError(err: unknown): CallToolResult {
  let text: string;
  if (err instanceof SkeinCallError) {
    text =
      err.code === 'permission_denied'
        ? `permission denied: ${err.message}`
        : `${err.code}: ${err.message}${err.retryable ? ' (retryable)' : ''}`;
  } else {
    text = err instanceof Error ? err.message : String(err);
  }
  return { content: [{ type: 'text', text }], isError: true };
}

/** The client's elicitation, when it declared the capability; undefined sends requests down skein's usual paths. */
export function elicitorFor(server: McpServer, extra: ToolExtra): Elicitor | undefined {
  const caps = server.server.getClientCapabilities();
  if (!caps?.elicitation) return undefined;
  return async (message, requestedSchema) => {
    const answer = await server.server.elicitInput(
      { mode: 'form', message, requestedSchema },
      { relatedRequestId: extra.requestId, signal: extra.signal, timeout: ELICIT_TIMEOUT_MS },
    );
    return { action: answer.action, content: answer.content as Record<string, unknown> | undefined };
  };
}

/**
 * Runs one tool body: permission requests raised meanwhile become elicitations (and are withdrawn if the client
 * cancels the call); a refusal becomes a tool error; anything the body returns is the result.
 */
export async function runTool(
  server: McpServer,
  session: AgentSession,
  extra: ToolExtra,
  body: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    const tag = newCallTag();
    return await inCall(tag, () => session.approvals.during(elicitorFor(server, extra), body, tag, extra.signal));
  } catch (err) {
    return toolError(err);
  }
}
