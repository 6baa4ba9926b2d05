/**
 * @module
 * The fact writer and facts it did not append itself, over the real JSONL log (temp dir): a fact another host
 * appended (`observe`), a fact id another host stored first (a foreign duplicate), the facts a fact carries
 * (`edit.applied`'s action-log records), the `textJsonSafe` hint of output facts, and the text of a final
 * failure whose cause is no Error. Two writers on one log stand for two hosts.
 */
import { describe, expect, it, vi } from 'vitest';
import type { AgentId, StoredFact } from '../../../schemas/index.ts';
import { Fold } from '../../../machines/kernel/projection.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { carriedFacts, FactWriter, foldStored } from '../../../infra/kernel/fact-writer.ts';
import { digestOf } from '../../../infra/kernel/digest.ts';
import { replayLog } from '../../../infra/kernel/replay.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { outputFact, spawnedData, spawnedFact } from '../../support/agent-facts.ts';
import { brokerLogs, storedFacts, type BrokerLog } from '../../support/broker-log.ts';
import { editAppliedCarrying } from '../../support/fact-writer.ts';

const nextLog = brokerLogs('skein-fact-writer-foreign-');

function writerOn(b: BrokerLog, hostId: string) {
  const fold = new Fold(AGGREGATES);
  const w = new FactWriter({
    log: b.log,
    fold,
    logger: memoryLogger('silent').logger,
    hostId,
    retries: 0,
    retryDelayMs: 1,
  });
  const heard: Array<[string, string, boolean]> = [];
  w.onFact((f, foreign) => heard.push([f.id, f.type, foreign]));
  return { w, fold, heard };
}

async function twoHosts() {
  const b = await nextLog();
  return { b, a: writerOn(b, 'ha'), other: writerOn(b, 'hb') };
}

const main = { agentId: 'main' as AgentId };
const cancelled = (agentId: string, reason: string) => ({
  type: 'agent.cancelled',
  data: { agentId, reason, by: 'main' },
});

describe('FactWriter.observe', () => {
  it('folds a fact another host appended once, tells listeners it is foreign, and appends after it', async () => {
    const { b, a, other } = await twoHosts();
    const theirs = await other.w.write(spawnedFact('o1'), main);
    expect(other.heard).toEqual([[theirs.id, 'agent.spawned', false]]);
    await a.w.observe(theirs);
    await a.w.observe(theirs);
    expect(a.heard).toEqual([[theirs.id, 'agent.spawned', true]]);
    expect({ facts: a.w.facts, lastSeq: a.w.lastSeq }).toEqual({ facts: 1, lastSeq: 1 });
    expect(a.fold.get(theirs.subject)?.value).toBe('running');
    const mine = await a.w.write(cancelled('o1', 'stop'), main);
    expect(b.requests.at(-1)?.expectedLastSubjectSeq).toBe(1);
    expect(mine.seq).toBe(2);
    // Its own fact, seen again by following the log, is not folded twice.
    await a.w.observe(mine);
    expect(a.w.facts).toBe(2);
    expect(digestOf(a.fold)).toBe((await replayLog(b.real, AGGREGATES)).digest);
    expect(b.reads).toEqual([]);
  });
});

describe('FactWriter and a fact id another host stored first', () => {
  it('is not folded or claimed: the subject is re-read before the next append, and live equals replay', async () => {
    const { b, a, other } = await twoHosts();
    await other.w.write(
      { ...spawnedFact('d1'), data: { ...spawnedData('d1'), label: 'theirs' } },
      {
        ...main,
        id: 'cmd:0',
      },
    );
    const dup = await a.w.write(
      { ...spawnedFact('d1'), data: { ...spawnedData('d1'), label: 'mine' } },
      {
        ...main,
        id: 'cmd:0',
      },
    );
    expect(dup.seq).toBe(1);
    expect({ facts: a.w.facts, heard: a.heard, folded: a.fold.size }).toEqual({ facts: 0, heard: [], folded: 0 });
    await a.w.write(cancelled('d1', 'stop'), main);
    expect(b.reads).toEqual([{ subject: 'skein.evt.main.agent.d1', fromSeq: 1, onInvalid: expect.any(Function) }]);
    expect(b.requests.map((r) => r.expectedLastSubjectSeq)).toEqual([0, 0, 1]);
    expect(a.heard.map(([id]) => id)).toEqual(['cmd:0', expect.stringMatching(/^f-/)]);
    expect(digestOf(a.fold)).toBe((await replayLog(b.real, AGGREGATES)).digest);
  });

  it('is folded by the background re-read when no other append comes', async () => {
    const { b, a, other } = await twoHosts();
    await other.w.write(spawnedFact('d2'), { ...main, id: 'cmd:1' });
    await a.w.write(spawnedFact('d2'), { ...main, id: 'cmd:1' });
    expect(a.fold.size).toBe(0);
    await vi.advanceTimersByTimeAsync(500);
    await vi.waitFor(() => expect(a.fold.get('skein.evt.main.agent.d2')?.value).toBe('running'));
    expect(b.reads).toEqual([{ subject: 'skein.evt.main.agent.d2', fromSeq: 1, onInvalid: expect.any(Function) }]);
  });

  it('a duplicate of its own last fact is no stranger: no re-read, the next append expects its sequence', async () => {
    const { b, a } = await twoHosts();
    await a.w.write(spawnedFact('d3'), { ...main, id: 'own:0' });
    const again = await a.w.write(spawnedFact('d3'), { ...main, id: 'own:0' });
    expect(again.seq).toBe(1);
    await a.w.write(cancelled('d3', 'stop'), main);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(b.reads).toEqual([]);
    expect(b.requests.map((r) => r.expectedLastSubjectSeq)).toEqual([0, 1, 1]);
    expect(a.w.facts).toBe(2);
  });
});

const files = (agentId: string) => ({
  type: 'action-log.files.updated',
  data: { agentId, by: 'main', cause: 'reject', files: [] },
});
const applied = (records: unknown[]) => editAppliedCarrying('e-carrier1', records);

describe('carried facts', () => {
  it('are folded on their own subjects, heard after their carrier, with its sequence, time, causation', async () => {
    const { b, a } = await twoHosts();
    const stored = await a.w.write(applied([files('main'), files('kid')]), { ...main, id: 'x:0', causationId: 'c-1' });
    const carried = carriedFacts(stored);
    expect(carried).toEqual(
      [
        { ...files('main'), id: 'x:0/0', at: stored.at, agentId: 'main', causationId: 'c-1', seq: 1 },
        { ...files('kid'), id: 'x:0/1', at: stored.at, agentId: 'kid', causationId: 'c-1', seq: 1 },
      ].map((f, i) => ({ ...f, subject: `skein.evt.${['main', 'kid'][i]}.action-log.${['main', 'kid'][i]}` })),
    );
    expect(a.heard).toEqual([
      ['x:0', 'edit.applied', false],
      ['x:0/0', 'action-log.files.updated', false],
      ['x:0/1', 'action-log.files.updated', false],
    ]);
    expect([...a.fold.keys()].sort()).toEqual([
      'skein.evt.kid.action-log.kid',
      'skein.evt.main.action-log.main',
      'skein.evt.main.edit.e-carrier1',
    ]);
    expect(a.w.facts).toBe(1);
    expect(digestOf(a.fold)).toBe((await replayLog(b.real, AGGREGATES)).digest);
  });

  it('carry no causation when the carrier has none; none for a type that carries nothing or is unknown', () => {
    const base = { at: '2026-01-01T00:00:00.000Z', agentId: 'main' as AgentId, seq: 3, subject: 's' };
    const [first] = carriedFacts({ ...base, ...applied([files('main')]), id: 'y:0' } as StoredFact);
    expect(first && 'causationId' in first).toBe(false);
    expect(carriedFacts({ ...base, ...spawnedFact('z'), id: 'z:0' } as StoredFact)).toEqual([]);
    expect(carriedFacts({ ...base, type: 'agent.levitated', data: {}, id: 'l:0' } as StoredFact)).toEqual([]);
  });

  it('a record of an unknown or an output type (a newer writer) is skipped, the others keep their index', () => {
    const odd = [
      { type: 'action-log.teleported', data: {} },
      { type: 'terminal.output.received', data: {} },
    ];
    const stored = { ...applied([...odd, files('main')]), id: 'w:0', at: 't', agentId: 'main', seq: 5, subject: 's' };
    expect(carriedFacts(stored as StoredFact).map((f) => [f.id, f.type])).toEqual([
      ['w:0/2', 'action-log.files.updated'],
    ]);
  });

  it('foldStored folds nothing for an output fact or an unknown type', () => {
    const fold = new Fold(AGGREGATES);
    const base = { id: 'o:0', at: 't', agentId: 'main' as AgentId, seq: 1, subject: 'skein.out.main.t-1' };
    const out = { type: 'terminal.output.received', data: { terminalId: 't-1', offset: 0, bytes: 0, data: '' } };
    expect(foldStored(fold, { ...base, ...out } as StoredFact)).toEqual([]);
    expect(foldStored(fold, { ...base, type: 'agent.levitated', data: {} } as StoredFact)).toEqual([]);
    expect(fold.size).toBe(0);
  });
});

describe('output hints and failure text', () => {
  it('passes textJsonSafe with an output fact only when it is set', async () => {
    const { b, a } = await twoHosts();
    const out = outputFact();
    await a.w.write(out, { ...main, textJsonSafe: true });
    await a.w.write(out, main);
    expect(b.requests.map((r) => r.textJsonSafe)).toEqual([true, undefined]);
    expect(b.requests.map((r) => 'textJsonSafe' in r)).toEqual([true, false]);
    expect(await storedFacts(b.real, 'output')).toHaveLength(2);
  });

  it('names a cause that is no Error as it is', async () => {
    const { b, a } = await twoHosts();
    b.fault = (r) =>
      r.fact.type === 'agent.spawned' ? { throws: r.fact.id === 'u:0' ? undefined : 'gone' } : undefined;
    await expect(a.w.write(spawnedFact('u1'), { ...main, id: 'u:0' })).rejects.toThrow(
      /after 1 attempts \(undefined\);/,
    );
    await expect(a.w.write(spawnedFact('u2'), { ...main, id: 'u:1' })).rejects.toThrow(/after 1 attempts \(gone\);/);
  });
});
