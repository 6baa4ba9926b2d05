/**
 * A listing asked for while a reject is being written shows the reject done. The reject wrote the files first
 * and appended its facts after (a slow broker: 100s of ms); a listing in between showed the rejected file still
 * pending, and an Accept of that listing then failed whole (the web console's flaky review test, 4 December).
 * The listing waits for the rejects and accepts writing when it came. The files are now put in place only once
 * the reject's fact is stored: while the broker holds it, the disk is unchanged.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ActionLogService } from '../../../actors/review/action-log.ts';
import type { UnstampedFact } from '../../../schemas/message.ts';
import { makeFixture, type Fixture } from '../../support/action-log-fs.ts';

/** The root changed `path` from `before` to `after` with an edit. */
const recordEdit = (service: ActionLogService, path: string, before: string, after: string) =>
  service.recordChange({ agentId: 'root', ancestors: [], path, before, after, source: { kind: 'edit' } });

describe('review listing during a reject', () => {
  let f: Fixture;
  beforeEach(() => {
    f = makeFixture();
  });
  afterEach(() => f.cleanup());

  it('waits for the facts of a reject being written; the disk changes only once its fact is stored', async () => {
    let gate: Promise<void> = Promise.resolve();
    let open = () => {};
    let held = false;
    const appended: string[] = [];
    const service = new ActionLogService({
      blobs: f.blobs,
      emit: async (fact: UnstampedFact) => {
        held = fact.type === 'review.rejected';
        await gate;
        appended.push(fact.type);
      },
    });
    f.write('a.txt', 'base\n');
    await recordEdit(service, f.p('a.txt'), 'base\n', 'changed\n');
    writeFileSync(f.p('a.txt'), 'changed\n');
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const rejected = service.reject('root', { paths: [f.p('a.txt')] });
    while (!held) await new Promise((r) => setTimeout(r, 2));
    // The reject's fact is held by the broker: the disk does not show it yet.
    expect(readFileSync(f.p('a.txt'), 'utf8')).toBe('changed\n');
    let listed: string[] | undefined;
    const listing = service.list('root').then((r) => {
      listed = r.files.map((x) => x.path);
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(listed).toBeUndefined();
    open();
    await Promise.all([rejected, listing]);
    expect(appended).toContain('review.rejected');
    expect(listed).toEqual([]);
    expect(readFileSync(f.p('a.txt'), 'utf8')).toBe('base\n');
  });

  it('waits at most a bound when the facts do not come (a broker down): the listing is answered', async () => {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let held = false;
    const service = new ActionLogService({
      blobs: f.blobs,
      emit: async (fact: UnstampedFact) => {
        if (fact.type === 'review.rejected') {
          held = true;
          await gate;
        }
      },
    });
    f.write('b.txt', 'changed\n');
    await recordEdit(service, f.p('b.txt'), 'base\n', 'changed\n');
    const rejected = service.reject('root', {});
    while (!held) await new Promise((r) => setTimeout(r, 2));
    const started = Date.now();
    const listed = await service.list('root');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(listed.files.map((x) => x.path)).toEqual([f.p('b.txt')]);
    open();
    await rejected;
  });
});
