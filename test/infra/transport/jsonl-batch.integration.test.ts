/**
 * One bad append in a batch of the embedded log: a fact JSON cannot write (found live: an `agent.complete`
 * result nested ~6,000 deep overflowed the encoder's stack) fails alone, with an error naming its type, and
 * the batch's other appends are stored. Before, the encoder threw outside the batch's handling: every append
 * of the batch was left unsettled, and so was every later append waiting on their subjects' locks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { ErrorCode, type Fact } from '../../../schemas/index.ts';
import { tempDir } from '../../support/temp-dir.ts';

let n = 0;
function fact(result: unknown): Fact {
  n++;
  return {
    id: `f-${n}`,
    type: 'agent.completed',
    at: new Date().toISOString(),
    agentId: 'main' as Fact['agentId'],
    data: { agentId: `a${n}`, result },
  };
}

/** The promise's outcome, or 'unsettled' if it has none within `ms`. */
function settled<T>(p: Promise<T>, ms = 2_000): Promise<{ ok: T } | { err: unknown } | 'unsettled'> {
  return Promise.race([
    p.then(
      (ok) => ({ ok }),
      (err: unknown) => ({ err }),
    ),
    new Promise<'unsettled'>((r) => setTimeout(() => r('unsettled'), ms)),
  ]);
}

describe('jsonl log: a fact that cannot be written', () => {
  it('fails alone, naming its type; the rest of its batch and later appends are stored', async () => {
    const dir = tempDir('skein-batch-');
    try {
      const log = await JsonlLog.open({ dir: dir.path });
      const [a, bad, b] = [fact(1), fact({ big: 10n }), fact(2)];
      // Asked for in one turn: one batch.
      const outcomes = await Promise.all(
        [a, bad, b].map((f) =>
          settled(log.append({ stream: 'events', subject: `skein.evt.main.agent.${f.id}`, fact: f })),
        ),
      );
      expect(outcomes[0]).toMatchObject({ ok: { seq: 1, duplicate: false } });
      expect(outcomes[2]).toMatchObject({ ok: { seq: 2, duplicate: false } });
      const failed = outcomes[1] as { err: { code: string; message: string } };
      expect(failed.err.code).toBe(ErrorCode.InvalidMessage);
      expect(failed.err.message).toMatch(/fact 'agent\.completed' cannot be written as JSON: .*BigInt/);
      const later = fact(3);
      expect(
        await settled(log.append({ stream: 'events', subject: `skein.evt.main.agent.${later.id}`, fact: later })),
      ).toMatchObject({ ok: { seq: 3, duplicate: false } });
      await log.close();
      const lines = readFileSync(join(dir.path, 'events.jsonl'), 'utf8').trim().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { fact: { id: string } }).fact.id)).toEqual([a.id, b.id, later.id]);
    } finally {
      dir.dispose();
    }
  });
});
