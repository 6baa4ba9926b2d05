/**
 * @module
 * Requests still pending when the host restarted: their calls ended with the previous host, so they are
 * denied at start (by: cancelled) with a reason naming `host_restarted`, never granted to do nothing.
 */
import type { AgentId } from '../../schemas/ids.ts';
import type { PermissionAggregateContext } from '../../machines/permission/permission-aggregate.ts';

/** Why a request still pending when the host restarted was denied. */
export const HOST_RESTARTED =
  'host_restarted: the runtime restarted while this request waited, and the call it was for ended with ' +
  'the previous host; nothing ran. Send the call again (with a new command id) to ask again.';

/** Why a request still pending when the host stopped was denied (at its drain, so that its caller got a reply). */
export const HOST_STOPPING =
  'host_stopping: the runtime stopped while this request waited; nothing ran. Send the call again once skein ' +
  'runs again.';

/** The denial of a restored request whose agent has no live view (the fact the machine would emit). */
export function restartDenial(c: PermissionAggregateContext, why = HOST_RESTARTED) {
  const input = c.input ?? '';
  return {
    type: 'permission.denied',
    agentId: (c.agentId ?? '') as AgentId,
    data: {
      requestId: c.requestId,
      agentId: c.agentId ?? '',
      tool: c.tool,
      input,
      by: 'cancelled',
      reason: `Permission for ${c.tool} ${JSON.stringify(input.slice(0, 120))} was cancelled: ${why}`,
    },
  };
}
