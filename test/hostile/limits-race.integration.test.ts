import { afterAll, beforeAll, describe, expect } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

/** Parents racing; the host-wide limit leaves room for exactly one more agent once they all run. */
const PARENTS = 8;
const MAX_AGENTS = 1 + PARENTS + 1;
const PER_AGENT = 2;

let rt: TestRuntime;
/** Each agent connects with its own socket token, as its process would. */
const sockets = agentSockets(() => rt);
const as = sockets.as;

beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    flags: { domains: { agents: { maxAgents: MAX_AGENTS }, terminal: { maxPerAgent: PER_AGENT } } },
  });
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('limits-race');

/** Agents of the tree that are not finished (what maxAgents counts). */
async function unfinished(): Promise<number> {
  const tree = await rt.call('agent.tree', {});
  if (!tree.ok) throw new Error(JSON.stringify(tree));
  const nodes = tree['agents'];
  if (!Array.isArray(nodes)) throw new Error(`unexpected agent.tree reply: ${JSON.stringify(tree)}`);
  return nodes.filter((n: { status: string }) => !['completed', 'failed', 'cancelled'].includes(n.status)).length;
}

describe('hostile: host-wide agent limit under concurrent spawns', { timeout: 60_000 }, () => {
  attack('limit-race', `${PARENTS} parents spawn at once with room for one: exactly one child`, async () => {
    const parents: string[] = [];
    for (let i = 0; i < PARENTS; i++) {
      ok(await rt.call('agent.spawn', { label: `p${i}`, agentId: `p${i}` }));
      parents.push(`p${i}`);
    }
    const connected = await Promise.all(parents.map(async (p) => ({ p, bus: await as(p) })));
    const replies: Reply[] = await Promise.all(
      connected.map(({ p, bus }) => call(bus, p, 'agent.spawn', { label: `child of ${p}` }, { timeoutMs: 30_000 })),
    );
    const spawned = replies.filter((r) => r.ok).length;
    const refused = replies.filter((r) => !r.ok && r.error.code === 'limit_exceeded').length;
    // Canary: more unfinished agents than domains.agents.maxAgents.
    expect(await unfinished()).toBeLessThanOrEqual(MAX_AGENTS);
    expect({ spawned, refused }).toEqual({ spawned: 1, refused: PARENTS - 1 });
    for (const r of replies) {
      if (!r.ok) expect(r.error.message).toContain(`domains.agents.maxAgents = ${MAX_AGENTS}`);
    }
  });

  attack('limit-race', `one agent opens ${PER_AGENT * 3} terminals at once: ${PER_AGENT} open`, async () => {
    // p0 is one of the parents above; its terminals are its own.
    const bus = await as('p0');
    const replies: Reply[] = await Promise.all(
      Array.from({ length: PER_AGENT * 3 }, () => call(bus, 'p0', 'terminal.open', {}, { timeoutMs: 30_000 })),
    );
    expect(replies.filter((r) => r.ok).length).toBe(PER_AGENT);
    for (const r of replies) if (!r.ok) expect(r.error.message).toContain(`maxPerAgent ${PER_AGENT}`);
    // Canary: more terminals than the limit, as the host counts them.
    const list = await call(bus, 'p0', 'terminal.list', {});
    expect(list.ok ? (list['terminals'] as unknown[]).length : -1).toBe(PER_AGENT);
  });
});
