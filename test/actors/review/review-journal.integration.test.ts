/**
 * A reject cut short between its fact and its files (a host killed there, or an append in doubt): the journal
 * entry it left is finished at the next start when the fact is in the log, dropped when it is not, and a file
 * someone changed since is left alone. Before the journal, such a reject left the log saying "rejected" over the
 * agent's change still on disk, where review no longer showed it (durability review, issue 15's session).
 */
import { chmodSync, existsSync, linkSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pino from 'pino';
import { ActionLogService, type EmitOptions } from '../../../actors/review/action-log.ts';
import { ReviewJournal } from '../../../actors/review/review-journal.ts';
import { readExact } from '../../../actors/common/confined-fs.ts';
import { ErrorCode, RuntimeError } from '../../../schemas/errors.ts';
import type { UnstampedFact } from '../../../schemas/message.ts';
import { makeFixture, type Fixture } from '../../support/action-log-fs.ts';

const logger = pino({ level: 'silent' });

describe('the review journal', () => {
  let f: Fixture;
  let journal: ReviewJournal;
  /** Fact ids the "log" holds. */
  let stored: Set<string>;
  /** Whether the reject's append is stored before it fails in doubt. */
  let storeThenDoubt: boolean;
  let service: ActionLogService;

  beforeEach(() => {
    f = makeFixture();
    journal = new ReviewJournal(join(f.data, 'review-journal'));
    stored = new Set();
    storeThenDoubt = true;
    service = new ActionLogService({
      blobs: f.blobs,
      journal,
      emit: async (fact: UnstampedFact, options?: EmitOptions) => {
        if (fact.type !== 'review.rejected') return;
        if (storeThenDoubt) stored.add(options!.id!);
        throw new RuntimeError(ErrorCode.InDoubt, 'the append timed out; it may be stored', { retryable: true });
      },
    });
  });
  afterEach(() => f.cleanup());

  /** The root's change of `rel` from `before` (null: created) to `after`, on disk and recorded. */
  const changed = async (rel: string, before: string | null, after: string) => {
    if (before !== null) f.write(rel, before);
    f.write(rel, after);
    await service.recordChange({
      agentId: 'root',
      ancestors: [],
      path: f.p(rel),
      before,
      after,
      source: { kind: 'edit' },
    });
  };
  /** A restarted host's service over the same data dir finishing what the journal holds (`later`: paths a fact
   * after the reject touched). */
  const restart = (later: string[] = []) =>
    new ActionLogService({ blobs: f.blobs, journal, emit: async () => {}, roots: () => [f.ws] }).finishInterrupted(
      {
        seqOf: (id) => (stored.has(id) ? 10 : undefined),
        touchedAt: (path) => (later.includes(path) ? 11 : 10),
      },
      logger,
    );
  const temps = (rel: string) => readdirSync(dirname(f.p(rel))).filter((n) => n.endsWith('.tmp'));

  it('finishes a reject whose fact was stored: files restored, created ones deleted, the entry gone', async () => {
    await changed('a.txt', 'base\n', 'AGENT\n');
    await changed('new.txt', null, 'created\n');
    await expect(service.reject('root', {})).rejects.toThrow(/may be stored/);
    // The disk is as before the reject: its files were staged, not put in place.
    expect(f.read('a.txt')).toBe('AGENT\n');
    expect(f.read('new.txt')).toBe('created\n');
    expect(await journal.pending()).toHaveLength(1);
    expect(await restart()).toBe(2);
    expect(f.read('a.txt')).toBe('base\n');
    expect(existsSync(f.p('new.txt'))).toBe(false);
    expect(await journal.pending()).toEqual([]);
    expect(temps('a.txt')).toEqual([]);
  });

  it('drops the entry of a reject whose fact is not in the log: nothing changes', async () => {
    storeThenDoubt = false;
    await changed('a.txt', 'base\n', 'AGENT\n');
    await expect(service.reject('root', {})).rejects.toThrow(/may be stored/);
    expect(await restart()).toBe(0);
    expect(f.read('a.txt')).toBe('AGENT\n');
    expect(await journal.pending()).toEqual([]);
  });

  it('leaves a file changed since by someone else', async () => {
    await changed('a.txt', 'base\n', 'AGENT\n');
    await changed('b.txt', 'b base\n', 'b AGENT\n');
    await expect(service.reject('root', {})).rejects.toThrow(/may be stored/);
    writeFileSync(f.p('b.txt'), 'edited by hand\n');
    expect(await restart()).toBe(1);
    expect(f.read('a.txt')).toBe('base\n');
    expect(f.read('b.txt')).toBe('edited by hand\n');
  });

  it("appends the other logs' facts of a finished entry: a sub-agent's log is reverted with the files", async () => {
    f.write('s.txt', 'AGENT\n');
    await service.recordChange({
      agentId: 'c1',
      ancestors: ['root'],
      path: f.p('s.txt'),
      before: 'base\n',
      after: 'AGENT\n',
      source: { kind: 'edit' },
    });
    await expect(service.reject('root', {})).rejects.toThrow(/may be stored/);
    const appended: Array<{ type: string; id: string | undefined }> = [];
    const restarted = new ActionLogService({
      blobs: f.blobs,
      journal,
      roots: () => [f.ws],
      emit: async (fact: UnstampedFact, options?: EmitOptions) =>
        void appended.push({ type: fact.type, id: options?.id }),
    });
    const [entry] = await journal.pending();
    expect(
      await restarted.finishInterrupted(
        { seqOf: (id) => (stored.has(id) ? 10 : undefined), touchedAt: () => 10 },
        logger,
      ),
    ).toBe(1);
    expect(f.read('s.txt')).toBe('base\n');
    expect(appended).toEqual([{ type: 'action-log.files.updated', id: `${entry!.factId}/0` }]);
    expect(restarted.state('c1').files).toEqual({});
  });

  it('leaves a file whose review a later fact touched (an undo since): the log moved past the entry', async () => {
    await changed('a.txt', 'base\n', 'AGENT\n');
    await expect(service.reject('root', {})).rejects.toThrow(/may be stored/);
    // The disk holds the entry's "before" content again, but a later fact is about this file: not rewritten.
    expect(await restart([f.p('a.txt')])).toBe(0);
    expect(f.read('a.txt')).toBe('AGENT\n');
    expect(await journal.pending()).toEqual([]);
  });

  it('a refused append keeps its entry until the next start, which drops it; a done reject keeps none', async () => {
    const serviceWith = (refuse: boolean) =>
      new ActionLogService({
        blobs: f.blobs,
        journal,
        emit: async (fact: UnstampedFact) => {
          if (refuse && fact.type === 'review.rejected') throw new RuntimeError(ErrorCode.Unavailable, 'disk full');
        },
      });
    const record = (s: ActionLogService, rel: string) =>
      s.recordChange({
        agentId: 'root',
        ancestors: [],
        path: f.p(rel),
        before: 'x\n',
        after: 'y\n',
        source: { kind: 'edit' },
      });
    const refusing = serviceWith(true);
    f.write('a.txt', 'y\n');
    await record(refusing, 'a.txt');
    await expect(refusing.reject('root', {})).rejects.toThrow(/disk full/);
    expect(f.read('a.txt')).toBe('y\n');
    expect(temps('a.txt')).toEqual([]);
    // Refused or stored after all, the append cannot tell: the next start decides by the log.
    expect(await journal.pending()).toHaveLength(1);
    storeThenDoubt = false;
    expect(await restart()).toBe(0);
    expect(f.read('a.txt')).toBe('y\n');
    expect(await journal.pending()).toEqual([]);
    const done = serviceWith(false);
    f.write('b.txt', 'y\n');
    await record(done, 'b.txt');
    await done.reject('root', {});
    expect(f.read('b.txt')).toBe('x\n');
    expect(await journal.pending()).toEqual([]);
  });

  it('a kill between the entry and the append leaves temp files the next start removes', async () => {
    await changed('a.txt', 'base\n', 'AGENT\n');
    // The host dies while the append is in flight: the entry and the staged file are there, the fact is not.
    const dying = new ActionLogService({
      blobs: f.blobs,
      journal,
      emit: (fact: UnstampedFact) =>
        fact.type === 'review.rejected' ? new Promise<void>(() => {}) : Promise.resolve(),
    });
    await dying.recordChange({
      agentId: 'root',
      ancestors: [],
      path: f.p('a.txt'),
      before: 'base\n',
      after: 'AGENT\n',
      source: { kind: 'edit' },
    });
    void dying.reject('root', {});
    while (temps('a.txt').length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(await journal.pending()).toHaveLength(1);
    storeThenDoubt = false;
    expect(await restart()).toBe(0);
    expect(temps('a.txt')).toEqual([]);
    expect(f.read('a.txt')).toBe('AGENT\n');
    expect(await journal.pending()).toEqual([]);
  });
});

// An undo that creates a file again, cut short (a review of 7c0f8a4): the file comes back with its mode; a file made
// at the path meanwhile is kept (the redo renamed over it); a kill between linking the new file in and removing its
// temp left a second link, which every confined read refuses, so the entry failed at every start and the path was
// wedged for good.
describe('the review journal: an undo that creates a file, cut short', () => {
  let f: Fixture;
  let journal: ReviewJournal;
  const stored = new Set<string>();
  let service: ActionLogService;
  beforeEach(() => {
    f = makeFixture();
    stored.clear();
    journal = new ReviewJournal(join(f.data, 'review-journal'));
    service = new ActionLogService({
      blobs: f.blobs,
      journal,
      roots: () => [f.ws],
      emit: async (fact: UnstampedFact, o?: EmitOptions) => {
        if (fact.type !== 'review.reject-undone') return;
        stored.add(o!.id!);
        throw new RuntimeError(ErrorCode.InDoubt, 'the append timed out; it may be stored', { retryable: true });
      },
    });
  });
  afterEach(() => f.cleanup());
  const restart = () =>
    new ActionLogService({ blobs: f.blobs, journal, emit: async () => {}, roots: () => [f.ws] }).finishInterrupted(
      { seqOf: (id) => (stored.has(id) ? 10 : undefined), touchedAt: () => 10 },
      logger,
    );
  const temps = () => readdirSync(f.ws).filter((n) => n.endsWith('.tmp'));

  async function rejectThenDoubtedUndo() {
    f.write('.env', 'SECRET=1\n');
    chmodSync(f.p('.env'), 0o600);
    const change = { agentId: 'root', ancestors: [], path: f.p('.env'), before: null, after: 'SECRET=1\n' };
    await service.recordChange({ ...change, source: { kind: 'edit' } });
    await service.reject('root', {});
    await expect(service.undoReject('root')).rejects.toThrow(/may be stored/);
    expect(existsSync(f.p('.env'))).toBe(false);
    expect(await journal.pending()).toHaveLength(1);
  }

  it('a start finishes it with the mode the reject kept', async () => {
    await rejectThenDoubtedUndo();
    expect(await restart()).toBe(1);
    expect(statSync(f.p('.env')).mode & 0o7777).toBe(0o600);
    expect(f.read('.env')).toBe('SECRET=1\n');
    expect(temps()).toEqual([]);
  });

  it('a file made at the path while it finishes is kept', async () => {
    await rejectThenDoubtedUndo();
    const require = f.blobs.require.bind(f.blobs);
    f.blobs.require = async (...a: Parameters<typeof require>) => {
      writeFileSync(f.p('.env'), 'PERSON CANARY\n'); // after the read found the path free
      return require(...a);
    };
    expect(await restart()).toBe(0);
    expect(f.read('.env')).toBe('PERSON CANARY\n');
    expect(temps()).toEqual([]);
  });

  it('a kill between linking the file in and removing its temp does not wedge the path', async () => {
    await rejectThenDoubtedUndo();
    writeFileSync(f.p('.env'), 'SECRET=1\n', { mode: 0o600 });
    linkSync(f.p('.env'), f.p('..env.skein-4242-deadbeef.tmp')); // as the kill left it
    await restart();
    expect(await journal.pending()).toEqual([]);
    expect(temps()).toEqual([]);
    expect((await readExact([f.ws], f.p('.env'), 1 << 20))?.toString('utf8')).toBe('SECRET=1\n');
  });
});
