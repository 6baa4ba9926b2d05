import { PlanWorld } from '../../support/action-log-world.ts';
import { sha256 } from '../../support/action-log-text.ts';
import { type LogView, planNeedsTexts, planRecord, sameChanges } from '../../../machines/review/action-log-plan.ts';
import type { LogEntry } from '../../../schemas/review.ts';
import { entry, listed, swap, TWENTY } from '../../support/action-log-scenes.ts';

// planRecord when someone else changed the file in between: outside edits folded into the base or not,
// files re-created or deleted outside, and logs outside the lineage told of the change.
const TEN = 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\n';

describe('action-log planning: changes made over someone else’s', () => {
  it('planNeedsTexts: only an outside edit to fold, or logs outside the lineage, need contents', () => {
    const c = { path: '/w/f', beforeHash: 'h1' };
    const log = (e: LogEntry | undefined): LogView => ({ agentId: 'a', files: e ? { '/w/f': e } : {} });
    const e = (baseHash: string | null, currentHash: string | null) =>
      ({ status: 'modified', baseHash, currentHash, agents: ['a'] }) as LogEntry;
    expect(planNeedsTexts(c, [])).toBe(false);
    expect(planNeedsTexts(c, [log(undefined)])).toBe(false);
    expect(planNeedsTexts(c, [log(undefined)], [log(undefined)])).toBe(true);
    expect(planNeedsTexts(c, [log(e('h0', 'h1'))])).toBe(false);
    expect(planNeedsTexts(c, [log(e('h0', 'h2'))])).toBe(true);
    expect(planNeedsTexts(c, [log(e('h0', 'h1')), log(e('h0', 'h2'))])).toBe(true);
    expect(planNeedsTexts(c, [log(e('h0', null))])).toBe(false);
    expect(planNeedsTexts(c, [log(e(null, 'h2'))])).toBe(false);
    expect(planNeedsTexts({ path: '/w/f', beforeHash: null }, [log(e('h0', 'h2'))])).toBe(false);
  });

  it("an outside edit over the agent's line stays the agent's; the rest of it is folded into the base", () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TEN;
    w.write('root', '/w/f', TEN.replace('l1\n', 'R\n'));
    // Outside: R→U (does not fit the base, which has l1) and l12→V (fits). Until 7 December neither was folded: the
    // agent owned V too, and its reject-all undid a person's edit far from its own lines.
    w.disk['/w/f'] = TEN.replace('l1\n', 'U\n').replace('l12\n', 'V\n');
    const after = w.disk['/w/f']!.replace('l6\n', 'X\n');
    const plan = w.write('root', '/w/f', after);
    const folded = TEN.replace('l12\n', 'V\n');
    expect(plan.blobs).toEqual({ [sha256(folded)]: folded });
    expect(w.view('root').files['/w/f']).toEqual(entry(folded, after, ['root']));
    w.reject('root');
    expect(w.disk['/w/f']).toBe(folded);
  });

  it('an outside edit that fits is folded into the base (stored as a blob), so the agent’s edits are its own', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TEN;
    w.write('root', '/w/f', TEN.replace('l1\n', 'R\n'));
    w.disk['/w/f'] = TEN.replace('l1\n', 'R\n').replace('l12\n', 'V\n');
    const plan = w.write('root', '/w/f', w.disk['/w/f']!.replace('l6\n', 'X\n'));
    const folded = TEN.replace('l12\n', 'V\n');
    expect(plan.blobs).toEqual({ [sha256(folded)]: folded });
    expect(w.view('root').files['/w/f']!.baseHash).toBe(sha256(folded));
  });

  it('a created file edited outside is still created; a deleted one re-created outside restarts tracking', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.write('kid', '/w/n', 'a\n');
    w.disk['/w/n'] = 'b\n';
    w.write('root', '/w/n', 'c\n');
    expect(w.view('root').files['/w/n']).toEqual(entry(null, 'c\n', ['kid', 'root']));
    w.accept('root');
    w.disk['/w/d'] = 'd\n';
    w.write('kid', '/w/d', null);
    expect(w.summary('root')).toEqual({ '/w/d': 'deleted by kid' });
    w.disk['/w/d'] = 'user\n';
    const plan = w.write('root', '/w/d', 'root\n');
    expect(w.view('root').files['/w/d']).toEqual(entry('user\n', 'root\n', ['root']));
    expect(plan.facts[0]!.data).toMatchObject({ status: 'modified', baseHash: sha256('user\n') });
  });

  it('a file deleted outside and written again by the agent is created anew, by that agent alone', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.write('kid', '/w/n', 'a\n');
    w.disk['/w/n'] = null; // outside, not recorded
    w.write('root', '/w/n', 'c\n');
    expect(w.view('root').files['/w/n']).toEqual(entry(null, 'c\n', ['root']));
    w.disk['/w/m'] = 'a\n';
    w.write('kid', '/w/m', 'b\n');
    w.disk['/w/m'] = null;
    w.write('root', '/w/m', 'c\n');
    expect(w.view('root').files['/w/m']).toEqual(entry(null, 'c\n', ['root']));
  });

  it('a sibling’s log is told of a change it did not make: folded into base and current when it fits', () => {
    const w = new PlanWorld();
    w.chain('root', 'a');
    w.chain('root', 'b');
    w.disk['/w/f'] = TEN;
    w.write('a', '/w/f', TEN.replace('l1\n', 'A\n'));
    const after = w.disk['/w/f']!.replace('l12\n', 'B\n');
    const plan = w.write('b', '/w/f', after);
    expect(plan.facts.map((f) => [f.type, f.agentId])).toEqual([
      ['action-log.change.recorded', 'b'],
      ['action-log.change.recorded', 'root'],
      ['action-log.files.updated', 'a'],
    ]);
    const folded = TEN.replace('l12\n', 'B\n');
    expect(plan.facts[2]!.data).toEqual({
      agentId: 'a',
      by: 'b',
      cause: 'change',
      files: [{ path: '/w/f', entry: entry(folded, after, ['a']) }],
    });
    expect(plan.blobs).toEqual({ [sha256(folded)]: folded });
    expect(plan.writes).toEqual([]);
    expect(plan.reply).toBeNull();
  });

  it('a sibling’s log keeps its own change when another does not fit its base, and ends tracking on a deletion', () => {
    const w = new PlanWorld();
    w.chain('root', 'a');
    w.chain('root', 'b');
    w.disk['/w/f'] = 'x\n';
    w.write('a', '/w/f', 'y\n');
    // Followed, a's reject would restore x over b's z: it keeps y, and its reject meets the disk changed.
    w.write('b', '/w/f', 'z\n');
    expect(w.view('a').files['/w/f']).toEqual(entry('x\n', 'y\n', ['a']));
    w.disk['/w/f'] = 'y\n';
    const plan = w.write('b', '/w/f', null);
    expect(plan.facts[2]!.data).toEqual({
      agentId: 'a',
      by: 'b',
      cause: 'change',
      files: [{ path: '/w/f', entry: null }],
    });
    expect(w.summary('a')).toEqual({});
  });

  it('a sibling’s created file changed by another keeps its content; a stale or unchanged one is not told', () => {
    const w = new PlanWorld();
    w.chain('root', 'a');
    w.chain('root', 'b');
    w.chain('root', 'c');
    w.write('a', '/w/n', 'a\n');
    w.write('c', '/w/other', 'c\n');
    // Followed, a's reject would delete the file with b's content in it.
    const plan = w.write('b', '/w/n', 'b\n');
    expect(plan.facts.map((f) => f.agentId)).toEqual(['b', 'root']);
    expect(w.view('a').files['/w/n']).toEqual(entry(null, 'a\n', ['a']));
    w.disk['/w/n'] = 'user\n';
    expect(w.write('b', '/w/n', 'b2\n').facts.map((f) => f.agentId)).toEqual(['b', 'root']);
    expect(w.view('a').files['/w/n']).toEqual(entry(null, 'a\n', ['a']));
    // A change that leaves the content as the sibling has it is no news to it.
    w.disk['/w/n'] = 'a\n';
    expect(w.write('b', '/w/n', 'a\n').facts.map((f) => f.agentId)).toEqual(['b', 'root']);
    expect(w.view('a').files['/w/n']).toEqual(entry(null, 'a\n', ['a']));
  });

  it('a sibling keeps its own change when only part of another fits; a re-creation over its deletion ends it', () => {
    const w = new PlanWorld();
    w.chain('root', 'a');
    w.chain('root', 'b');
    w.disk['/w/f'] = TWENTY;
    w.disk['/w/g'] = 'g\n';
    w.write('a', '/w/f', swap(TWENTY, 1, 'A'));
    const after = swap(swap(TWENTY, 1, 'B'), 20, 'Z');
    const plan = w.write('b', '/w/f', after);
    expect(plan.blobs).toEqual({});
    expect(w.view('a').files['/w/f']).toEqual(entry(TWENTY, swap(TWENTY, 1, 'A'), ['a']));
    w.write('a', '/w/g', null);
    w.write('b', '/w/g', 'again\n');
    expect(w.facts.at(-1)!.data).toEqual({
      agentId: 'a',
      by: 'b',
      cause: 'change',
      files: [{ path: '/w/g', entry: null }],
    });
    expect(w.summary('a')).toEqual({ '/w/f': 'modified by a' });
  });

  it('sameChanges compares the added and removed lines only, not context or position', () => {
    const env = { texts: { [sha256('a\nb\n')]: 'a\nb\n', [sha256('a\nc\n')]: 'a\nc\n' } };
    const a: [string, string] = [sha256('a\nb\n'), sha256('a\nc\n')];
    expect(sameChanges('/w/f', env, a, ['a\nb\n', 'a\nc\n'])).toBe(true);
    expect(sameChanges('/w/f', env, a, ['z\nb\n', 'z\nc\n'])).toBe(true);
    expect(sameChanges('/w/f', env, a, ['a\nb\n', 'a\nd\n'])).toBe(false);
    expect(sameChanges('/w/f', env, a, ['a\nq\n', 'a\nc\n'])).toBe(false);
    expect(sameChanges('/w/f', env, a, ['a\nb\n', 'a\nc\nd\n'])).toBe(false);
    expect(sameChanges('/w/f', env, a, ['a\nb\nc\n', 'a\nc\n'])).toBe(false);
    expect(sameChanges('/w/f', env, [null, sha256('a\nb\n')], ['', 'a\nb\n'])).toBe(true);
    expect(sameChanges('/w/f', env, [null, sha256('a\nb\n')], ['', 'a\n\nb\n'])).toBe(false);
    // Line by line: removing the line 'b+a' is not removing 'b' and adding 'a'.
    const env2 = { texts: { [sha256('b+a\n')]: 'b+a\n' } };
    expect(sameChanges('/w/f', env2, [sha256('b+a\n'), null], ['b\n', 'a\n'])).toBe(false);
  });

  it('planRecord without logs outside the lineage diffs nothing for them', () => {
    const plan = planRecord(
      {
        changeId: 'c1',
        agentId: 'a',
        lineage: [],
        path: '/w/f',
        beforeHash: null,
        resultHash: sha256('x'),
        source: { kind: 'write' },
      },
      [{ agentId: 'a', files: {} }],
      { texts: {}, hash: sha256 },
    );
    expect(plan).toEqual({ writes: [], blobs: {}, facts: [expect.objectContaining({ agentId: 'a' })], reply: null });
  });
});

describe('action-log planning: an outside line right beside the agent’s', () => {
  it('is folded into the base by line position (its context fails), so a reject-all keeps it', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TEN;
    w.write('root', '/w/f', TEN.replace('l1\n', 'A1\n').replace('l12\n', 'A12\n'));
    w.disk['/w/f'] = w.disk['/w/f']!.replace('l11\n', 'P11\n'); // a person's line, not recorded
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l5\n', 'A5\n'));
    expect(w.view('root').files['/w/f']!.baseHash).toBe(sha256(TEN.replace('l11\n', 'P11\n')));
    expect(JSON.stringify(w.list('root')).includes('+P11')).toBe(false);
    w.reject('root');
    expect(w.disk['/w/f']).toBe(TEN.replace('l11\n', 'P11\n'));
  });

  it('one that changes the agent’s own line is still the agent’s: the base is kept', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TEN;
    w.write('root', '/w/f', TEN.replace('l6\n', 'A6\n'));
    w.disk['/w/f'] = TEN.replace('l6\n', 'P6\n');
    w.write('root', '/w/f', TEN.replace('l6\n', 'P6\n').replace('l1\n', 'A1\n'));
    expect(w.view('root').files['/w/f']!.baseHash).toBe(sha256(TEN));
  });
});

describe('action-log planning: an outside edit that moves a line to or from beside the agent’s', () => {
  // A review's probe of the fold in part (7 December): a person's move is two runs, and only the one beside the
  // agent's line was left out; the other, folded alone, hid the moved line or lost it.
  it("a line of the agent's the person moved elsewhere stays in its review, and its reject-all takes it", () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', TWENTY.replace('l12\n', 'l12\nA1\nA2\nA3\n'));
    w.disk['/w/f'] = TWENTY.replace('l3\n', 'l3\nA1\nA2\nA3\n');
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l19\n', 'l19\nX\n'));
    expect(listed(w, 'root').flat()).toEqual(['+A1', '+A2', '+A3', '+X']);
    w.reject('root');
    expect(w.disk['/w/f']).toBe(TWENTY);
  });

  it('a line the person moved to beside the agent’s is back in its place after the agent’s reject-all', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', TWENTY.replace('l12\n', 'l12\nK\n'));
    w.disk['/w/f'] = TWENTY.replace('l3\n', '').replace('l12\n', 'l12\nK\nl3\n');
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l19\n', 'l19\nX\n'));
    w.reject('root');
    expect(w.disk['/w/f']).toBe(TWENTY);
  });
});
