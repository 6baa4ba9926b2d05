/**
 * @module
 * Random operation sequences for the action-log planners (`action-log-fuzz.test.ts`): agents of a small tree
 * write lines, delete files and create them, a person edits, deletes and creates files (nothing recorded), agents
 * accept, reject and undo their rejects, all through `PlanWorld`. Every line ever written is unique and names its
 * writer: `f3`/`g3` (a file's first content), `root-4`, `kid-7` (agents), `person-2` (a person). Repeated
 * identical lines are never generated: a known limitation (`rebaseOutside`, and hunks applied by context, can
 * misplace a line among identical ones).
 */
import fc from 'fast-check';
import { PlanWorld } from './action-log-world.ts';

export type Shape = 'fork' | 'deep' | 'pair';
/** The agents of each tree, root first: root→kid + root→sib; root→kid→gk; root→kid. */
export const AGENTS: Record<Shape, string[]> = {
  fork: ['root', 'kid', 'sib'],
  deep: ['root', 'kid', 'gk'],
  pair: ['root', 'kid'],
};
/** `/w/h` starts absent, and so does `/w/g` in a case of one file. */
export const PATHS = ['/w/f', '/w/g', '/w/h'] as const;

/** `who`, `file`, `at`, `pick`: indexes taken modulo what exists when the step runs. */
export type Step =
  | { k: 'write'; who: number; file: number; op: 'ins' | 'del' | 'rep'; at: number }
  | { k: 'person'; file: number; op: 'ins' | 'rep'; at: number }
  /** A file deleted, or created (absent before) with `n` new lines, by an agent or a person. */
  | { k: 'agentDel' | 'agentNew'; who: number; file: number; n: number }
  | { k: 'personDel' | 'personNew'; file: number; n: number }
  | { k: 'reject' | 'rejectUndo' | 'undo' | 'accept'; who: number }
  | { k: 'acceptSel' | 'rejectSel'; who: number; pick: number; byPath: boolean };

const who = fc.nat(5);
const file = fc.nat(3);
const at = fc.nat(40);
export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ k: fc.constant('write' as const), who, file, op: fc.constantFrom('ins', 'del', 'rep'), at }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('person' as const), file, op: fc.constantFrom('ins', 'rep'), at }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constantFrom('agentDel', 'agentNew'), who, file, n: fc.integer({ min: 0, max: 3 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constantFrom('personDel', 'personNew'), file, n: fc.integer({ min: 0, max: 3 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constantFrom('reject', 'rejectUndo', 'undo', 'accept'), who }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constantFrom('acceptSel', 'rejectSel'), who, pick: fc.nat(7), byPath: fc.boolean() }),
  },
);

export type Case = { shape: Shape; files: number; sizes: [number, number]; steps: Step[] };
/** A sequence of 5-15 steps over one or two files of 10-20 lines (and one absent), in a tree of `shape`. */
export const caseArb = (shape: Shape): fc.Arbitrary<Case> =>
  fc.record({
    shape: fc.constant(shape),
    files: fc.integer({ min: 1, max: 2 }),
    sizes: fc.tuple(fc.integer({ min: 10, max: 20 }), fc.integer({ min: 10, max: 20 })),
    steps: fc.array(stepArb, { minLength: 5, maxLength: 15 }),
  });

/** Who wrote a line: an agent's id, 'person', or 'first' (the file's first content). */
export const owner = (line: string): string => (/^[fgh]\d+$/.test(line) ? 'first' : line.replace(/-\d+$/, ''));

/** A PlanWorld with the tree, the files and a counter for new unique lines. */
export class Fuzz {
  readonly w = new PlanWorld();
  readonly agents: string[];
  readonly paths: string[];
  #n = 0;

  constructor(c: Case) {
    this.agents = AGENTS[c.shape];
    this.paths = [...PATHS];
    if (c.shape === 'fork') {
      this.w.chain('root', 'kid');
      this.w.chain('root', 'sib');
    } else this.w.chain(...this.agents);
    this.paths.forEach((p, i) => {
      const tag = p.slice(-1);
      this.w.disk[p] = i < c.files ? Array.from({ length: c.sizes[i]! }, (_, j) => `${tag}${j}\n`).join('') : null;
    });
  }

  /** A new line no one wrote before. */
  fresh(by: string): string {
    return `${by}-${++this.#n}`;
  }

  /** The lines on disk of `path`, without their newlines. */
  lines(path: string): string[] {
    const t = this.w.disk[path] ?? '';
    return t === '' ? [] : t.replace(/\n$/, '').split('\n');
  }

  /** Every line on disk (they are unique, so the file does not matter). */
  onDisk(): Set<string> {
    return new Set(this.paths.flatMap((p) => this.lines(p)));
  }

  /** `lines` with one edited (positions wrap), as a file's content. */
  edited(path: string, op: 'ins' | 'del' | 'rep', at: number, by: string): string {
    const ls = this.lines(path);
    const o = ls.length === 0 ? 'ins' : op;
    if (o === 'ins') ls.splice(at % (ls.length + 1), 0, this.fresh(by));
    else ls.splice(at % ls.length, 1, ...(o === 'rep' ? [this.fresh(by)] : []));
    return ls.map((l) => `${l}\n`).join('');
  }

  /** A new file's content: `k` new lines of `by`. */
  newFile(by: string, k: number): string {
    return Array.from({ length: k }, () => `${this.fresh(by)}\n`).join('');
  }

  /** The lines `id`'s review lists as added (`+`) and removed (`-`). */
  listed(id: string): { added: Set<string>; removed: Set<string> } {
    const added = new Set<string>();
    const removed = new Set<string>();
    for (const f of this.w.list(id))
      for (const h of f.hunks)
        for (const l of h.lines) {
          if (l.startsWith('+')) added.add(l.slice(1));
          else if (l.startsWith('-')) removed.add(l.slice(1));
        }
    return { added, removed };
  }

  /**
   * The `+` lines of the hunks a selection picks from `id`'s listing, and its path; undefined when it lists
   * nothing. A listing of only files without hunks (an empty file created or deleted) is picked by path.
   */
  selection(id: string, pick: number, byPath: boolean) {
    const files = this.w.list(id);
    const hunks = files.flatMap((f) => f.hunks.map((h) => ({ path: f.path, h })));
    if (hunks.length === 0) {
      const f = files.length === 0 ? undefined : files[pick % files.length]!;
      return f && { sel: { paths: [f.path] }, plus: [] as string[], path: f.path };
    }
    const one = hunks[pick % hunks.length]!;
    const chosen = byPath ? hunks.filter((x) => x.path === one.path) : [one];
    const plus = chosen.flatMap((x) => x.h.lines.filter((l) => l.startsWith('+')).map((l) => l.slice(1)));
    return { sel: byPath ? { paths: [one.path] } : { hunkIds: [one.h.id] }, plus, path: one.path };
  }

  lineage(id: string): string[] {
    return [id, ...this.w.ancestors(id)];
  }
}
