/**
 * @module
 * The live agent actors: the same machine as the fold, with effects. Their
 * snapshot equals the fold of the same facts; a worker's exit while its
 * agent runs is reported once, and never after the agent finished; the
 * worker-grace close is a delay computed from context, re-armed when facts
 * are read back (at once when the deadline passed while the host was down).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { LiveAgents, type LiveAgentEffects } from '../../../actors/agent/live-agents.ts';
import { agentAggregateDef, workerGraceDelay } from '../../../machines/agent/agent.ts';
import { Fold } from '../../../machines/kernel/projection.ts';
import type { StoredFact } from '../../../schemas/index.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
let seq = 0;
function fact(type: string, data: Record<string, unknown>, atMs = T0): StoredFact {
  seq += 1;
  return {
    id: `f${seq}`,
    type,
    at: new Date(atMs).toISOString(),
    agentId: 'main',
    data,
    seq,
    subject: `skein.evt.main.agent.${String(data['agentId'])}`,
  } as StoredFact;
}
const spawned = (agentId: string, worker: boolean) =>
  fact('agent.spawned', {
    agentId,
    parentId: 'main',
    label: agentId,
    workspace: '/w',
    depth: 1,
    task: 'do it',
    hasPolicy: false,
    worker: worker ? { command: 'sh', args: [] } : null,
  });
const started = (agentId: string, terminalId: string) =>
  fact('agent.worker.started', { agentId, terminalId, command: 'sh' });

/** Effects that record what the actor asked for; the clock is `clock.now`. */
function recording(graceMs: number, clock = { now: T0 }) {
  const closed: string[] = [];
  const exits: Array<{ terminalId: string; exitCode: number }> = [];
  const watching = new Map<string, (exitCode: number) => void>();
  const effects: LiveAgentEffects = {
    graceMs,
    now: () => clock.now,
    logger: pino({ level: 'silent' }),
    watchWorker: ({ terminalId }, exited) => {
      watching.set(terminalId, exited);
      return () => watching.delete(terminalId);
    },
    workerExited: async ({ terminalId }, exitCode) => void exits.push({ terminalId, exitCode }),
    closeWorker: async ({ terminalId }) => void closed.push(terminalId),
  };
  return { effects, closed, exits, watching, clock };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LiveAgents', () => {
  it('holds, per agent, the snapshot the fold of the same facts holds', () => {
    const facts = [
      spawned('a1', false),
      spawned('a2', true),
      started('a2', 't2'),
      spawned('a3', true),
      fact('agent.completed', { agentId: 'a1', result: { ok: 1 } }, T0 + 5),
      fact('agent.failed', { agentId: 'a2', error: 'worker exited', exitCode: 3 }, T0 + 6),
      fact('agent.cancelled', { agentId: 'a3', reason: 'enough', by: 'main' }, T0 + 7),
      spawned('a4', true),
      started('a4', 't4'),
    ];
    const { effects } = recording(60_000);
    const live = new LiveAgents(effects);
    const fold = new Fold([agentAggregateDef]);
    for (const f of facts) {
      fold.apply(f.subject, 'agent', f);
      live.feed(f);
    }
    expect(live.ids().sort()).toEqual(['a1', 'a2', 'a3', 'a4']);
    for (const id of live.ids()) {
      const folded = fold.get(`skein.evt.main.agent.${id}`)!;
      const snap = live.snapshot(id)!;
      expect({ id, value: snap.value, context: snap.context }).toEqual({
        id,
        value: folded.value,
        context: folded.context,
      });
    }
    expect(live.snapshot('a1')?.context.finishedAt).toBe(new Date(T0 + 5).toISOString());
    live.stop();
  });

  it('ignores facts of agents it never saw spawned, and non-agent facts', () => {
    const live = new LiveAgents(recording(10).effects);
    live.feed(fact('agent.completed', { agentId: 'ghost', result: null }));
    live.feed(fact('terminal.opened', { agentId: 'ghost', terminalId: 't' }));
    expect(live.ids()).toEqual([]);
    live.stop();
  });

  it("watches a running agent's worker, reports its exit, and stops watching once the agent finishes", async () => {
    const rec = recording(60_000);
    const live = new LiveAgents(rec.effects);
    live.feed(spawned('a1', true));
    expect(rec.watching.size).toBe(0); // spawning: no terminal yet
    live.feed(started('a1', 't1'));
    expect([...rec.watching.keys()]).toEqual(['t1']);
    rec.watching.get('t1')!(7);
    await sleep(0);
    expect(rec.exits).toEqual([{ terminalId: 't1', exitCode: 7 }]);
    // The agent completes (the worker reported): the watcher is stopped; a late exit reports nothing.
    const exitedLate = rec.watching.get('t1')!;
    live.feed(fact('agent.completed', { agentId: 'a1', result: null }));
    expect(rec.watching.size).toBe(0);
    exitedLate(0);
    await sleep(0);
    expect(rec.exits).toHaveLength(1);
    live.stop();
  });

  it('closes the worker terminal only once the grace after finishing is over', async () => {
    const rec = recording(300);
    const live = new LiveAgents(rec.effects);
    live.feed(spawned('a1', true));
    live.feed(started('a1', 't1'));
    live.feed(fact('agent.completed', { agentId: 'a1', result: null }, T0));
    await sleep(100);
    expect(rec.closed).toEqual([]);
    await sleep(400);
    expect(rec.closed).toEqual(['t1']);
    // Fires once: the targetless transition does not re-arm it.
    await sleep(400);
    expect(rec.closed).toEqual(['t1']);
    live.stop();
  });

  it('re-arms the grace from context when facts are read back: at once if passed, else what is left', async () => {
    const rec = recording(10_000, { now: T0 + 60_000 });
    const live = new LiveAgents(rec.effects);
    // Finished a minute ago with a 10 s grace: the host was down past the deadline.
    live.feed(spawned('old', true));
    live.feed(started('old', 't-old'));
    live.feed(fact('agent.cancelled', { agentId: 'old', reason: 'x', by: 'main' }, T0));
    // Finished 9.7 s ago with a 10 s grace: 300 ms are left.
    live.feed(spawned('recent', true));
    live.feed(started('recent', 't-recent'));
    live.feed(fact('agent.failed', { agentId: 'recent', error: 'e', exitCode: 1 }, T0 + 60_000 - 9_700));
    // No worker terminal: nothing to close.
    live.feed(spawned('plain', false));
    live.feed(fact('agent.completed', { agentId: 'plain', result: null }, T0));
    await sleep(50);
    expect(rec.closed).toEqual(['t-old']);
    await sleep(450);
    expect(rec.closed).toEqual(['t-old', 't-recent']);
    live.stop();
  });

  it('stops every actor with the host: no grace fires after stop', async () => {
    const rec = recording(100);
    const live = new LiveAgents(rec.effects);
    live.feed(spawned('a1', true));
    live.feed(started('a1', 't1'));
    live.feed(fact('agent.completed', { agentId: 'a1', result: null }, T0));
    live.stop();
    await sleep(250);
    expect(rec.closed).toEqual([]);
    expect(live.ids()).toEqual([]);
  });
});

describe('workerGraceDelay', () => {
  const ctx = (finishedAt: string | null) => ({ finishedAt }) as Parameters<typeof workerGraceDelay>[0];
  it('counts the grace from finishedAt and never goes below zero', () => {
    expect(workerGraceDelay(ctx(new Date(T0).toISOString()), 1000, T0 + 400)).toBe(600);
    expect(workerGraceDelay(ctx(new Date(T0).toISOString()), 1000, T0 + 5000)).toBe(0);
    expect(workerGraceDelay(ctx(null), 1000, T0)).toBe(0);
  });
});
