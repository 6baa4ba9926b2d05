import { applyHunks, computeHunks } from '../../../machines/review/action-log-hunks.ts';
import { listed, TWENTY } from '../../support/action-log-scenes.ts';
import { PlanWorld } from '../../support/action-log-world.ts';

// In repetitive text (runs of '}', identical 'return x;' lines) a hunk's context occurs many times. jsdiff's
// nearest-match search placed a hunk whose own context a person's line had disturbed at another copy further
// on: a root's partial reject took back its kid's identical line and kept its own, an undo re-inserted a line
// four lines away from where it was. A hunk is now placed only where a line diff of the text it came from to
// the disk puts it, and reported as a conflict when its lines are not all there.

const RUN = `m1\n${'}\n'.repeat(20)}m2\n`;

/** `text` with `lines` inserted before its 0-based line `at`. */
function insert(text: string, at: number, ...lines: string[]): string {
  const all = text.split('\n');
  all.splice(at, 0, ...lines);
  return all.join('\n');
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

  // The position may slip as far as edits touching the hunk make it unsure, but only onto lines the alignment
  // brought from the hunk's own: 8 lines of a person's pushed the root's X as far as the kid's (a review's grid).
  it("a person's long block beside the root's X does not let its reject slip onto the kid's X", () => {
    const run = `m1\n${'}\n'.repeat(30)}m2\n`;
    for (const side of [1, 0]) {
      const w = new PlanWorld();
      w.chain('root', 'kid');
      w.disk['/w/f'] = run;
      w.write('root', '/w/f', insert(run, 15, 'X'));
      w.write('kid', '/w/f', insert(w.disk['/w/f']!, 23, 'X')); // seven braces below the root's
      const person = Array.from({ length: 8 }, (_, i) => `P${i}`);
      w.disk['/w/f'] = insert(w.disk['/w/f']!, 15 + side, ...person);
      const before = w.disk['/w/f'];
      const rootX = w.list('root')[0]!.hunks.find((h) => h.newStart === 13)!;
      const plan = w.reject('root', { hunkIds: [rootX.id] });
      expect(plan.reply.conflicts.map((c) => c.hunkIds)).toEqual([[rootX.id]]);
      expect(w.disk['/w/f']).toBe(before);
      expect(listed(w, 'kid')).toEqual([['+X']]);
    }
  });

  it("a kid's undo does not write its line twice where it is back already", () => {
    for (const edit of [
      (t: string) => t,
      (t: string) => t.replace('l4\n', 'P\n'),
      (t: string) => `K\nP\n${t.slice(2)}`,
    ]) {
      const w = new PlanWorld();
      w.chain('root', 'kid');
      w.disk['/w/f'] = TWENTY;
      w.write('kid', '/w/f', `K\n${TWENTY}`);
      w.reject('kid');
      w.write('root', '/w/f', `K\n${TWENTY}`); // the root writes the same line at the same place
      w.disk['/w/f'] = edit(w.disk['/w/f']!);
      const before = w.disk['/w/f'];
      const plan = w.undoReject('kid');
      expect(w.disk['/w/f']).toBe(before);
      expect(plan.reply.conflicts).toHaveLength(1);
    }
  });

  it('applies no hunk whose change the text holds already, with an edit beside it or a line typed after it', () => {
    const source = 'b1\nb2\nb3\nb4\nb5\nb6\n';
    const hunks = computeHunks('/w/f', source, `${source}A\n`);
    for (const text of [`${source}A\n`, `${source.replace('b3', 'P')}A\n`, `${source}A\nP\n`]) {
      const r = applyHunks(text, hunks, 'forward', source);
      expect(r.failed).toEqual(hunks);
      expect(r.text).toBe(text);
    }
  });
});

describe("action-log planning: a person's block at a file's end that ends like the agent's line", () => {
  it("a reject puts back the last '}' before a person's appended block", () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = 'a\nb\nc\n}\n';
    w.write('root', '/w/f', 'a\nb\nc\n');
    w.disk['/w/f'] = 'a\nb\nc\nfunction g() {\n}\n';
    const plan = w.reject('root');
    expect(plan.reply.conflicts).toEqual([]);
    expect(w.disk['/w/f']).toBe('a\nb\nc\n}\nfunction g() {\n}\n');
  });

  it("an undo puts the agent's line back where it was, before a person's block appended since", () => {
    const cases = [
      { before: 'a\n}\n}\n}\n', line: 'X', block: 'foo() {\n}\n}\n}\n' }, // the block repeats the context
      { before: 'a\nb\nc\n', line: '}', block: 'function g() {\n}\n' }, // the block ends like the line
    ];
    for (const { before, line, block } of cases) {
      const w = new PlanWorld();
      w.chain('root');
      w.disk['/w/f'] = before;
      w.write('root', '/w/f', `${before}${line}\n`);
      w.reject('root');
      w.disk['/w/f'] = `${before}${block}`;
      const plan = w.undoReject('root');
      expect(plan.reply.conflicts).toEqual([]);
      expect(w.disk['/w/f']).toBe(`${before}${line}\n${block}`);
      expect(listed(w, 'root')).toEqual([[`+${line}`]]);
    }
  });
});

describe("action-log planning: an ancestor's accept over a descendant's base its hunks do not fit", () => {
  it("the kid's own change that the accepted content holds leaves its review", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', `R\n${TWENTY.replace('l9\n', '')}`);
    w.write('kid', '/w/f', w.disk['/w/f']!.replace('l10\n', ''));
    w.accept('root');
    expect(listed(w, 'root')).toEqual([]);
    expect(listed(w, 'kid')).toEqual([]);
    const before = w.disk['/w/f'];
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(before);
  });
});
