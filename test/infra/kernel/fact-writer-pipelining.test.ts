/**
 * @module
 * The fact writer's early sends over the real JSONL event log: the next fact of a subject goes out before
 * the previous one's ack, expecting that one to be the last stored; it is stored right after it, or
 * refused and appended the usual way (with the subject's sequence) once the facts before it settle. The
 * log's acks are held back by a wrapper, so "before the ack" is certain, not a race.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentId, StoredFact } from '../../../schemas/index.ts';
import { agentAggregateDef } from '../../../machines/agent/agent.ts';
import { replay } from '../../../infra/kernel/replay.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { AppendConflictError, type AppendRequest, type EventLog } from '../../../infra/transport/event-log.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { agentWriter } from '../../support/fact-writer.ts';
import { spawnedFact } from '../../support/agent-facts.ts';

const dir = tempDir('skein-fact-writer-pipe-');
afterAll(() => dir.dispose());
let n = 0;
const main = { agentId: 'main' as AgentId };
const spawned = (agentId: string) => spawnedFact(agentId, 'main');

/**
 * The real log; the ack of a fact whose id is in `held` waits for `release()` (the append itself is made
 * at once, so the fact is stored). `failing` ids are refused before they reach the log.
 */
async function heldLog() {
  const real = await JsonlLog.open({ dir: `${dir.path}/${++n}` });
  const requests: AppendRequest[] = [];
  const held = new Set<string>();
  const failing = new Set<string>();
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  const log: EventLog = {
    kind: real.kind,
    append: async (request) => {
      requests.push(request);
      if (failing.has(request.fact.id)) throw new Error(`refused ${request.fact.id}`);
      const result = real.append(request);
      if (held.has(request.fact.id)) await released;
      return result;
    },
    read: (o) => real.read(o),
    scan: (o, v) => real.scan(o, v),
    lastSeq: (s) => real.lastSeq(s),
    close: () => real.close(),
  };
  const { w, fold } = agentWriter(log, { retries: 1 });
  const stored = async () => {
    const out: StoredFact[] = [];
    for await (const f of real.read()) out.push(f);
    return out;
  };
  /** The live fold equals a replay of what the log holds. */
  const agreesWithReplay = async () => {
    const replayed = await replay(real.read(), [agentAggregateDef]);
    expect(JSON.stringify(replayed.fold.states())).toBe(JSON.stringify(fold.states()));
  };
  return { w, fold, real, requests, held, failing, release, stored, agreesWithReplay };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('FactWriter early sends', () => {
  it('sends the next fact of a subject before the prior one is acked; stored and folded right after it', async () => {
    const { w, requests, held, release, stored, agreesWithReplay } = await heldLog();
    held.add('a:0');
    const a = w.write(spawned('p1'), { ...main, id: 'a:0' });
    const b = w.write(spawned('p1'), { ...main, id: 'b:0' });
    await tick();
    // Both went out while the first one's ack is held.
    expect(requests.map((r) => [r.fact.id, r.expectedLastSubjectSeq, r.expectedLastMsgId])).toEqual([
      ['a:0', 0, undefined],
      ['b:0', undefined, 'a:0'],
    ]);
    const heard: string[] = [];
    w.onFact((f) => heard.push(f.id));
    release();
    const [sa, sb] = await Promise.all([a, b]);
    expect([sa.seq, sb.seq]).toEqual([1, 2]);
    expect((await stored()).map((f) => f.id)).toEqual(['a:0', 'b:0']);
    expect(heard).toEqual(['a:0', 'b:0']);
    expect(w.facts).toBe(2);
    await agreesWithReplay();
    // The next append there expects the early one's sequence.
    await w.write(spawned('p1'), { ...main, id: 'c:0' });
    expect(requests.at(-1)).toMatchObject({ expectedLastSubjectSeq: 2 });
  });

  it('does not send early behind a fact of another subject, nor past a fact still waiting its turn', async () => {
    const { w, requests, held, release } = await heldLog();
    held.add('a:0');
    held.add('x:0');
    const a = w.write(spawned('q1'), { ...main, id: 'a:0' });
    const x = w.write(spawned('q2'), { ...main, id: 'x:0' });
    // The last fact sent is of q2: this one waits for a's ack, and the one after it waits its turn.
    const b = w.write(spawned('q1'), { ...main, id: 'b:0' });
    const c = w.write(spawned('q1'), { ...main, id: 'c:0' });
    await tick();
    expect(requests.map((r) => r.fact.id)).toEqual(['a:0', 'x:0']);
    release();
    await Promise.all([a, x, b, c]);
    expect(requests.map((r) => [r.fact.id, r.expectedLastSubjectSeq, r.expectedLastMsgId])).toEqual([
      ['a:0', 0, undefined],
      ['x:0', 0, undefined],
      ['b:0', 1, undefined],
      // Asked for while b waited its turn: sent after b's ack, never ahead of it.
      ['c:0', 3, undefined],
    ]);
  });

  it('refused because another fact was stored between, it is appended after that one with its sequence', async () => {
    const { w, real, requests, held, release, stored, fold } = await heldLog();
    held.add('a:0');
    const a = w.write(spawned('r1'), { ...main, id: 'a:0' });
    // Another writer's fact, of another subject, lands between the two.
    const other = real.append({ stream: 'events', subject: 'skein.evt.main.agent.r2', fact: foreign('r2', 'o:0') });
    const b = w.write(spawned('r1'), { ...main, id: 'b:0' });
    await other;
    release();
    const [, sb] = await Promise.all([a, b]);
    expect((await stored()).map((f) => f.id)).toEqual(['a:0', 'o:0', 'b:0']);
    expect(sb.seq).toBe(3);
    expect(
      requests.filter((r) => r.fact.id === 'b:0').map((r) => [r.expectedLastSubjectSeq, r.expectedLastMsgId]),
    ).toEqual([
      [undefined, 'a:0'],
      [1, undefined],
    ]);
    expect(w.facts).toBe(2);
    // The other writer's fact is not this writer's to fold; its own subject agrees with a replay.
    const replayed = await replay(real.read(), [agentAggregateDef]);
    expect(replayed.facts).toBe(3);
    const subject = 'skein.evt.main.agent.r1';
    expect(JSON.stringify(fold.get(subject)?.context)).toBe(JSON.stringify(replayed.fold.get(subject)?.context));
  });

  it('a fact of another writer on the same subject between them: the early one fails as a conflict', async () => {
    const { w, real, held, release, stored } = await heldLog();
    held.add('a:0');
    const a = w.write(spawned('s1'), { ...main, id: 'a:0' });
    const other = real.append({ stream: 'events', subject: 'skein.evt.main.agent.s1', fact: foreign('s1', 'o:0') });
    const b = w.write(spawned('s1'), { ...main, id: 'b:0' });
    await other;
    release();
    await a;
    await expect(b).rejects.toBeInstanceOf(AppendConflictError);
    // (and the health fact of the failed append)
    expect((await stored()).map((f) => f.id)).toEqual(['a:0', 'o:0', expect.stringMatching(/^f-/)]);
    expect((await stored()).at(-1)).toMatchObject({ type: 'host.append.failed', data: { factId: 'b:0' } });
  });

  it('the fact before it refused: the early one is not stored behind nothing, and is appended on its own', async () => {
    const { w, failing, requests, stored, agreesWithReplay } = await heldLog();
    failing.add('a:0');
    const a = w.write(spawned('t1'), { ...main, id: 'a:0' });
    const b = w.write(spawned('t1'), { ...main, id: 'b:0' });
    await expect(a).rejects.toThrow(/could not be appended/);
    const sb = await b;
    expect(requests.find((r) => r.fact.id === 'b:0')?.expectedLastMsgId).toBe('a:0');
    // The health fact of the refused one, then the early one alone.
    expect((await stored()).map((f) => f.type)).toEqual(['host.append.failed', 'agent.spawned']);
    expect((await stored()).at(-1)).toMatchObject({ id: 'b:0', seq: sb.seq });
    expect(w.facts).toBe(2);
    await agreesWithReplay();
  });
});

describe('FactWriter.hold', () => {
  it('appends a held fact just before the next write, in the same turn, else when released', async () => {
    const { w, requests, stored } = await heldLog();
    const held = w.hold(spawned('h1'), { ...main, id: 'held:0' });
    await tick();
    expect(requests).toEqual([]);
    const next = w.write(spawned('h2'), { ...main, id: 'next:0' });
    // Both asked for in this turn, the held one first.
    expect(requests.map((r) => r.fact.id)).toEqual(['held:0', 'next:0']);
    const [a, b] = await Promise.all([held, next]);
    expect([a.seq, b.seq]).toEqual([1, 2]);
    const alone = w.hold(spawned('h3'), { ...main, id: 'alone:0' });
    await tick();
    expect(requests).toHaveLength(2);
    w.release();
    expect((await alone).seq).toBe(3);
    expect((await stored()).map((f) => f.id)).toEqual(['held:0', 'next:0', 'alone:0']);
  });

  it('rejects a held fact whose append fails, and still writes the one that released it', async () => {
    const { w, failing, stored } = await heldLog();
    failing.add('held:0');
    const held = w.hold(spawned('h4'), { ...main, id: 'held:0' });
    const next = w.write(spawned('h5'), { ...main, id: 'next:0' });
    await expect(held).rejects.toThrow(/could not be appended/);
    await next;
    expect((await stored()).filter((f) => f.type === 'agent.spawned').map((f) => f.id)).toEqual(['next:0']);
  });
});

function foreign(agentId: string, id: string) {
  return {
    id,
    type: 'agent.spawned',
    at: new Date().toISOString(),
    agentId: 'main' as AgentId,
    data: spawned(agentId).data,
  };
}
