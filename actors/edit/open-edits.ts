/**
 * @module
 * How many streaming edits each agent holds (`domains.edit.maxOpenPerAgent`). Each open edit holds its file
 * in the host's memory until it is finished or cancelled, so without a bound one agent grows the host with
 * every `edit.begin`. A slot is taken synchronously when a begin is accepted, before it reads its file, so
 * concurrent begins cannot all pass the check; it is given back when the edit ends or its begin fails. All
 * agents together are bounded too (`domains.edit.maxOpenPerHost`): a host runs up to a thousand agents.
 */
import { PerAgentSlots } from '../../machines/common/per-agent-slots.ts';

export function openEdits(limit: number, perHost: number): PerAgentSlots {
  return new PerAgentSlots(
    limit,
    (agentId, held, max) =>
      `Agent '${agentId}' already has ${held} streaming edits open, the limit domains.edit.maxOpenPerAgent = ` +
      `${max}; finish or cancel one (edit.finish, edit.cancel) first.`,
    {
      limit: perHost,
      refusal: (held, max) =>
        `This host already holds ${held} streaming edits open, the limit domains.edit.maxOpenPerHost = ${max}; ` +
        'finish or cancel one (edit.finish, edit.cancel), retry later, or raise the key in the runtime config.',
    },
  );
}
