/**
 * @module
 * How many commands each agent has in progress on this host (`limits.maxInFlightPerAgent`). A command that
 * waits (terminal.wait, a long exec, an ask) holds its decoded payload, its promise and its reply slot until
 * it ends, so without a bound one agent firing thousands at once grows the host's memory and slows every
 * other agent's calls. A slot is taken when the host starts handling a command and given back after its reply.
 */
import { PerAgentSlots } from '../../machines/common/per-agent-slots.ts';

export function agentInFlight(limit: number): PerAgentSlots {
  return new PerAgentSlots(
    limit,
    (agentId, held, max) =>
      `Agent '${agentId}' already has ${held} commands in progress, the limit limits.maxInFlightPerAgent = ` +
      `${max}; wait for some to reply before sending more.`,
  );
}
