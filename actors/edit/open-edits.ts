/**
 * @module
 * How many streaming edits each agent holds (`domains.edit.maxOpenPerAgent`). Each open edit holds its file
 * in the host's memory until it is finished or cancelled, so without a bound one agent grows the host with
 * every `edit.begin`. A slot is taken synchronously when a begin is accepted, before it reads its file, so
 * concurrent begins cannot all pass the check; it is given back when the edit ends or its begin fails.
 */
import { PerAgentSlots } from '../../machines/common/per-agent-slots.ts';

export function openEdits(limit: number): PerAgentSlots {
  return new PerAgentSlots(
    limit,
    (agentId, held, max) =>
      `Agent '${agentId}' already has ${held} streaming edits open, the limit domains.edit.maxOpenPerAgent = ` +
      `${max}; finish or cancel one (edit.finish, edit.cancel) first.`,
  );
}
