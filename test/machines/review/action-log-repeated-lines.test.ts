import { listed } from '../../support/action-log-scenes.ts';
import { PlanWorld } from '../../support/action-log-world.ts';

// In repetitive text (runs of '}', identical 'return x;' lines) a hunk's context occurs many times. jsdiff's
// nearest-match search placed a hunk whose own context a person's line had disturbed at another copy further
// on: a root's partial reject took back its kid's identical line and kept its own, an undo re-inserted a line
// four lines away from where it was. A hunk is now placed only where a line diff of the text it came from to
// the disk puts it, and reported as a conflict when its lines are not all there.

const RUN = `m1\n${'}\n'.repeat(20)}m2\n`;

/** `text` with `line` inserted before its 0-based line `at`. */
function insert(text: string, at: number, line: string): string {
  const lines = text.split('\n');
  lines.splice(at, 0, line);
  return lines.join('\n');
}

describe('action-log planning: hunks in repeated lines', () => {
  it("a root's reject of its line beside a person's does not take the kid's identical line", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = RUN;
    w.write('root', '/w/f', insert(RUN, 5, 'X')); // after four braces
    w.write('kid', '/w/f', insert(w.disk['/w/f']!, 15, 'X')); // nine braces further on, the same line
    w.disk['/w/f'] = insert(w.disk['/w/f']!, 6, 'P'); // a person's line right after the root's X
    const before = w.disk['/w/f'];
    const rootX = w.list('root')[0]!.hunks[0]!;
    expect(rootX.newStart).toBe(3);
    const plan = w.reject('root', { hunkIds: [rootX.id] });
    // The root's X cannot be told from its context now: reported, and the kid's X is not taken instead.
    expect(plan.reply.conflicts.map((c) => c.hunkIds)).toEqual([[rootX.id]]);
    expect(w.disk['/w/f']).toBe(before);
    expect(listed(w, 'kid')).toEqual([['+X']]);
    expect(listed(w, 'root')).toEqual([['+X', '+X']]);
  });

  it('an undo of a reject does not re-insert a line at another copy of its context', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = RUN;
    w.write('root', '/w/f', insert(RUN, 5, 'X'));
    w.reject('root');
    expect(w.disk['/w/f']).toBe(RUN);
    w.disk['/w/f'] = insert(RUN, 5, 'P'); // a person's line where X was
    const plan = w.undoReject('root');
    expect(plan.reply.reapplied).toEqual([]);
    expect(plan.reply.conflicts).toHaveLength(1);
    expect(w.disk['/w/f']).toBe(insert(RUN, 5, 'P'));
  });

  it("a reject keeps a person's line after a final line whose newline the agent added", () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = 'a';
    w.write('root', '/w/f', 'a\n');
    w.disk['/w/f'] = 'a\nPERSON\n';
    const plan = w.reject('root');
    // Taking the newline back would run the person's line into 'a': reported instead.
    expect(plan.reply.conflicts).toHaveLength(1);
    expect(w.disk['/w/f']).toBe('a\nPERSON\n');
  });
});
