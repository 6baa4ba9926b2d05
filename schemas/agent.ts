/**
 * @module
 * Agents: identities that act. This file holds the minimal agent aggregate
 * the foundation needs (spawn, get); lifecycle and fleets extend it.
 * An agent's lifecycle facts travel under its parent's agent id
 * (`skein.evt.<parentId>.agent.<agentId>`; the root's under its own), so a
 * parent subscribed to its own subjects sees its children come and go.
 */
import { z } from 'zod';
import { AgentId } from './ids.ts';
import { defineCommand, defineEvent } from './message.ts';

export const AgentLabel = z
  .string()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .describe('A human-readable name for the agent, e.g. "tests-runner".');

export const AgentSpawn = defineCommand('agent.spawn', {
  summary: 'Create a child of the agent in the subject. Replies with the new agent id.',
  data: z
    .object({
      label: AgentLabel,
      agentId: AgentId.optional().describe('Id for the new agent; generated when missing.'),
    })
    .strict(),
  reply: z.object({ agentId: AgentId, parentId: AgentId, workspace: z.string() }),
});

export const AgentGet = defineCommand('agent.get', {
  summary: "Return the agent's state as folded from its facts.",
  data: z.object({}).strict(),
  reply: z.object({
    agentId: AgentId,
    parentId: AgentId.nullable(),
    label: z.string(),
    workspace: z.string(),
    status: z.string(),
    children: z.array(AgentId),
  }),
});

export const AgentSpawned = defineEvent('agent.spawned', {
  summary: 'An agent now exists. The root agent has parentId null.',
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({
    agentId: AgentId,
    parentId: AgentId.nullable(),
    label: AgentLabel,
    workspace: z.string().describe('Absolute path of the agent workspace.'),
    depth: z.number().int().min(0),
  }),
  describe: (d) => `${d.agentId} "${d.label}" parent=${d.parentId ?? '-'} workspace=${d.workspace}`,
});

export const agentCommands = [AgentSpawn, AgentGet];
export const agentEvents = [AgentSpawned];
