/**
 * An undo that creates a file and leaves it alone (one was made at the path meanwhile) gives its logs back the
 * entries they had, so none lists the agent's content over the other file. Reviews of ac8d7e1 and 4dc8baf
 * (7 December) found the journal's finish of it wrong five ways, each a test here: a file the undo linked in and
 * someone edited before a start finished it was taken for another's, and the agent's line was then listed
 * nowhere (also after a start had put the file in place and was cut short); a kill before the give-back facts was
 * not finished, since the undo's own facts made the path look moved on; an undo in doubt whose path a sibling's
 * recorded creation took since gave nothing back; and one whose own agent recorded a creation since gave back
 * over it. The log and the service are driven as `review-journal.integration.test.ts` does, with the start's
 * `seqOf` and `touchedAt` as the wiring reads them back (the last fact naming a path).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { ActionLogService, type EmitOptions } from '../../../actors/review/action-log.ts';
import { pathsOf } from '../../../actors/review/review-commit.ts';
import { ReviewJournal } from '../../../actors/review/review-journal.ts';
import { ErrorCode, RuntimeError } from '../../../schemas/errors.ts';
import type { UnstampedFact } from '../../../schemas/message.ts';
import { makeFixture, type Fixture } from '../../support/action-log-fs.ts';

const logger = pino({ level: 'silent' });
type Logged = { fact: UnstampedFact; id: string };

describe('the review journal: what an undo that left a file alone gives back', () => {
  let f: Fixture;
  let journal: ReviewJournal;
  let log: Logged[];
  beforeEach(() => {
    f = makeFixture();
    journal = new ReviewJournal(join(f.data, 'review-journal'));
    log = [];
  });
  afterEach(() => f.cleanup());

  const service = (emit: (fact: UnstampedFact, o?: EmitOptions) => Promise<void>, wrote?: () => void) =>
    new ActionLogService({ blobs: f.blobs, journal, roots: () => [f.ws], emit, ...(wrote ? { wrote } : {}) });
  const record = (s: ActionLogService, agentId: string, after: string) => {
    f.write('new.txt', after);
    const ancestors = agentId === 'root' ? [] : ['root'];
    return s.recordChange({ agentId, ancestors, path: f.p('new.txt'), before: null, after, source: { kind: 'edit' } });
  };
  /** A start over the log so far: the service restored from it finishes the journal, appending to it. */
  const start = async () => {
    const seqs = new Map(log.map((l, i) => [l.id, i + 1]));
    const touched = new Map<string, number>();
    log.forEach((l, i) => {
      for (const p of pathsOf(l.fact)) touched.set(p, Math.max(i + 1, touched.get(p) ?? 0));
    });
    const restarted = service(async (fact, o) => void log.push({ fact, id: o!.id! }));
    restarted.restore(log.map((l) => l.fact as never));
    await restarted.finishInterrupted({ seqOf: (id) => seqs.get(id), touchedAt: (p) => touched.get(p) }, logger);
    expect(await journal.pending()).toEqual([]);
    return async (agentId: string) => (await restarted.list(agentId)).files.map((x) => x.path);
  };

  it('a file the undo linked in, edited before a start finished it, stays listed', async () => {
    let kill = false;
    const s = service(
      async (fact, o) => void log.push({ fact, id: o?.id ?? `x-${log.length}` }),
      () => {
        if (kill) throw new Error('killed');
      },
    );
    await record(s, 'root', 'AGENT\n');
    await s.reject('root', {});
    kill = true;
    await expect(s.undoReject('root')).rejects.toThrow(/killed/);
    expect(f.read('new.txt')).toBe('AGENT\n');
    writeFileSync(f.p('new.txt'), 'AGENT\nPERSON\n'); // while the host is down, recorded by nobody
    const facts = log.length;
    const listed = await start();
    expect(log.slice(facts)).toEqual([]);
    expect(await listed('root')).toEqual([f.p('new.txt')]);
  });

  for (const killAt of [1, 2]) {
    it(`a kill before its give-back <id>/${killAt}: a start gives back those not stored`, async () => {
      let undoId: string | undefined;
      const s = service(async (fact, o) => {
        const id = o!.id!;
        if (fact.type === 'review.reject-undone') {
          undoId = id;
          writeFileSync(f.p('new.txt'), 'PERSON CANARY\n'); // made while the undo commits
        }
        if (undoId && id === `${undoId}/${killAt}`) throw new Error('killed');
        log.push({ fact, id });
      });
      await record(s, 'kid', 'AGENT\n');
      await s.reject('root', {});
      await expect(s.undoReject('root')).rejects.toThrow(/killed/);
      const listed = await start();
      expect([await listed('root'), await listed('kid')]).toEqual([[], []]);
      expect(f.read('new.txt')).toBe('PERSON CANARY\n');
    });
  }

  it("an undo in doubt whose path a sibling's recorded creation took since gives its entries back", async () => {
    const s = service(async (fact, o) => {
      log.push({ fact, id: o?.id ?? `r-${log.length}` });
      if (fact.type === 'review.reject-undone')
        throw new RuntimeError(ErrorCode.InDoubt, 'the append timed out; it may be stored', { retryable: true });
    });
    await record(s, 'kid', 'KID\n');
    await s.reject('kid', {});
    await expect(s.undoReject('kid')).rejects.toThrow(/may be stored/);
    await record(s, 'kid2', 'KID2 CANARY\n');
    const listed = await start();
    expect(f.read('new.txt')).toBe('KID2 CANARY\n');
    expect(await listed('kid')).toEqual([]);
    expect(await listed('kid2')).toEqual([f.p('new.txt')]);
  });
  // A review of 4dc8baf: two more ways a finish gave back over an agent's own change.
  const inDoubt = () =>
    new RuntimeError(ErrorCode.InDoubt, 'the append timed out; it may be stored', { retryable: true });

  it('an undo in doubt whose files a start put in place and was cut short: later edits stay listed', async () => {
    let undoId = '';
    const s = service(async (fact, o) => {
      const id = o?.id ?? `r-${log.length}`;
      log.push({ fact, id });
      if (fact.type === 'review.reject-undone') {
        undoId = id;
        throw inDoubt();
      }
    });
    await record(s, 'kid', 'AGENT\n');
    await s.reject('root', {});
    await expect(s.undoReject('root')).rejects.toThrow(/may be stored/);
    // A start links the file in, then is killed before it appends the undo's other facts.
    const seqs = new Map(log.map((l, i) => [l.id, i + 1]));
    const killed = service(async (_fact, o) => {
      if (o!.id!.startsWith(`${undoId}/`)) throw new Error('killed');
    });
    killed.restore(log.map((l) => l.fact as never));
    await killed.finishInterrupted({ seqOf: (id) => seqs.get(id), touchedAt: () => seqs.size }, logger);
    expect(f.read('new.txt')).toBe('AGENT\n');
    writeFileSync(f.p('new.txt'), 'AGENT\nAGENT LINE WHILE DOWN\n');
    const listed = await start();
    expect([...(await listed('root')), ...(await listed('kid'))]).toContain(f.p('new.txt'));
  });

  it('an undo in doubt whose own agent recorded a creation at the path since: that stays listed', async () => {
    const s = service(async (fact, o) => {
      log.push({ fact, id: o?.id ?? `r-${log.length}` });
      if (fact.type === 'review.reject-undone') throw inDoubt();
    });
    await record(s, 'kid', 'KID\n');
    await s.reject('kid', {});
    await expect(s.undoReject('kid')).rejects.toThrow(/may be stored/);
    await record(s, 'kid', 'KID AGAIN CANARY\n');
    const listed = await start();
    expect(f.read('new.txt')).toBe('KID AGAIN CANARY\n');
    expect(await listed('kid')).toEqual([f.p('new.txt')]);
  });
});
