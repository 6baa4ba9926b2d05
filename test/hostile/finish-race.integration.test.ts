/**
 * A finished agent's terminals and edits are closed as it finishes (finished-agents.integration.test.ts);
 * this file races them: the agent sends a burst of `terminal.open` and `edit.begin` and, in the same turn,
 * its `agent.complete`. A call that passed the gate's "is it finished?" check while the finish was on its
 * way, and registered its terminal or edit after the finish had released the agent's, would leave it open
 * for the runtime's life with nobody to close it (the agent can no longer call, its tokens are revoked).
 * The canary is such a survivor: a `terminal.opened` or `edit.started` of the agent with no end in the log
 * once everything has settled. On the old code every round left its edits open (24 of 24): the finish
 * cancelled the edits the edit wiring knew, which learnt of a begin only after its path was resolved again.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

const ROUNDS = 6;
const BURST = 4;

let rt: TestRuntime;
const sockets = agentSockets(() => rt);

beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    policy: { default: 'allow' },
    flags: { domains: { terminal: { maxPerAgent: BURST }, edit: { maxOpenPerAgent: BURST } } },
  });
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('finish-race');

/** Terminals and edits of `agentId` that were opened and never ended, from the log. */
async function survivors(agentId: string): Promise<string[]> {
  const open = new Set<string>();
  await rt.log.scan({ stream: 'events' }, (f) => {
    const d = f.data as { terminalId?: string; editId?: string; agentId?: string };
    if (f.type === 'terminal.opened' && f.agentId === agentId) open.add(`terminal ${d.terminalId}`);
    if (f.type === 'terminal.closed' || f.type === 'terminal.lost') open.delete(`terminal ${d.terminalId}`);
    if (f.type === 'edit.started' && f.agentId === agentId) open.add(`edit ${d.editId}`);
    if (['edit.applied', 'edit.failed', 'edit.abandoned'].includes(f.type)) open.delete(`edit ${d.editId}`);
  });
  return [...open];
}

describe('hostile: opening while finishing', { timeout: 180_000 }, () => {
  attack(
    'finish-race',
    `${ROUNDS} agents each open ${BURST} terminals and ${BURST} edits in the turn they complete`,
    async () => {
      const left: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const agentId = `racer-${round}`;
        ok(await rt.call('agent.spawn', { label: agentId, agentId }));
        const socket = await sockets.as(agentId);
        const opens = Array.from({ length: BURST }, (_, i) => [
          call(socket, agentId, 'terminal.open', {}, { timeoutMs: 30_000 }).catch((e: Error) => e),
          call(socket, agentId, 'edit.begin', { path: `race-${round}-${i}.txt`, mode: 'write' }).catch((e: Error) => e),
        ]).flat();
        // Later rounds give the opens a head start of a few turns, so the finish lands at different points.
        for (let t = 0; t < round; t++) await new Promise((r) => setImmediate(r));
        const done = await rt.call('agent.complete', { result: 'raced' }, { agentId });
        expect(done.ok).toBe(true);
        // Most are refused (the finish revokes the agent's connection, or the gate or the registration refuses
        // them); some ran before the finish. Either way none may outlive it.
        await Promise.all(opens);
        // The releases of the finish have run; give a late open's effects time to land as facts.
        await new Promise((r) => setTimeout(r, 300));
        left.push(...(await survivors(agentId)).map((s) => `${agentId}: ${s}`));
      }
      expect(left, 'terminals or edits of finished agents still open').toEqual([]);
    },
    180_000,
  );
});
