/**
 * @module
 * Where a hunk goes in a text that is not the one it came from (the disk with a person's lines, a descendant's
 * base): a line diff of the source to the text (`align`) tells where each source line is now, and a hunk is
 * placed only where that alignment puts its lines, or a few lines off where the alignment itself is unsure (a
 * run of identical lines next to an edit). jsdiff's `applyPatch` searches outward for the nearest copy of the
 * context instead, and in repetitive text took another copy further on: a reject removed someone else's
 * identical line. Pure.
 */
import type { StructuredPatchHunk } from 'diff';
import type { Hunk } from '../../schemas/review.ts';
import { boundedStructuredPatch, splitLines } from './bounded-diff.ts';

/** Source lines re-aligned on their own around a hunk where the whole-text diff gave up (its coarse fallback). */
const WINDOW = 64;
/** Most lines a hunk is moved off where the alignment puts it (edits touching it make that position unsure). */
const MAX_SLIP = 8;

/** Where the lines of a source text are in another text. */
export type Alignment = { source: string[]; text: string[]; changes: StructuredPatchHunk[] };

export function align(source: string, text: string): Alignment {
  const changes = source === text ? [] : boundedStructuredPatch('a', 'b', source, text, 0).hunks;
  return { source: splitLines(source), text: splitLines(text), changes };
}

/** Line `i` (1-based) of the source in the text; undefined when the text changed it. */
function where(a: Alignment, i: number): number | undefined {
  return across(a, i, 'old');
}

/** The source line that line `t` (1-based) of the text came from; undefined for a line the text added. */
function whence(a: Alignment, t: number): number | undefined {
  return across(a, t, 'new');
}

/** Line `i` of one side of the alignment (`old`: the source) on the other; undefined where a change holds it. */
function across(a: Alignment, i: number, side: 'old' | 'new'): number | undefined {
  let delta = 0;
  for (const c of a.changes) {
    const [start, lines, other] =
      side === 'old' ? [c.oldStart, c.oldLines, c.newLines] : [c.newStart, c.newLines, c.oldLines];
    if (lines > 0 && i >= start && i < start + lines) return undefined;
    if (start + lines > i) break;
    delta += other - lines;
  }
  return i + delta;
}

/**
 * `lines` (the text as the hunks below were applied) with hunk `h` applied where the alignment places it, ending
 * before line `below` (where the hunk applied under it starts); undefined when it fits nowhere there.
 */
export function placeHunk(
  lines: string[],
  h: Hunk,
  direction: 'forward' | 'reverse',
  a: Alignment,
  below: number,
): { lines: string[]; at: number } | undefined {
  const s = sides(h, direction);
  const first = direction === 'forward' ? h.oldStart : h.newStart;
  // A hunk whose last line is context without a newline (the end of a file that had none) also fits where that
  // line has one and lines follow: an editor appended to the file since.
  const variants = [s, ...withNewline(s)];
  const fits = (at: number, v: Sides) => {
    if (at < 1 || at - 1 + v.from.length > Math.min(lines.length, below - 1)) return false;
    for (let k = 0; k < v.from.length; k++) if (lines[at - 1 + k] !== v.from[k]) return false;
    // A line left without its newline ends the file: not where lines follow (it would run into the next one).
    const last = v.to[v.to.length - 1];
    return last === undefined || last.endsWith('\n') || at - 1 + v.from.length === lines.length;
  };
  const place = (at: number) => {
    const v = variants.find((x) => fits(at, x));
    return v && { lines: splice(lines, at, v), at };
  };
  // The text already made this very change here (an ancestor's reject put back the line an undo re-inserts):
  // placed again, beside the context it now also matches, the line would be there twice.
  if (alreadyMade(a, first, s)) return undefined;
  const tried = new Set<number>();
  const candidates = positions(a, first, s);
  for (const at of candidates) {
    if (tried.has(at)) continue;
    tried.add(at);
    const placed = place(at);
    if (placed) return placed;
  }
  // Edits touching the hunk make its position unsure by as many lines: a run of '}' one shorter aligns anywhere.
  // A slipped position holds only lines the alignment brought from the source, the lines the hunk changes from
  // its own: never someone's line written since, nor an identical line the alignment took from elsewhere.
  const slip = Math.min(MAX_SLIP, editsNear(a, first, s.from.length));
  const changed = new Set(s.changed);
  const own = (c: number) =>
    s.from.every((_, k) => {
      const from = whence(a, c + k);
      return from !== undefined && (!changed.has(k) || (from >= first && from < first + s.from.length));
    });
  for (let d = 1; d <= slip; d++) {
    for (const at of candidates) {
      for (const c of [at - d, at + d]) {
        if (tried.has(c)) continue;
        tried.add(c);
        const placed = own(c) ? place(c) : undefined;
        if (placed) return placed;
      }
    }
  }
  return undefined;
}

/**
 * Whether the text already holds each of the hunk's runs of changes where it makes it: a change of the text from
 * the source at the run's place taking out the same lines and putting the run's lines there (first, or last
 * when context follows the run: a person's line typed right beside merges into the same change). Other changes
 * around it do not matter. Not for a run whose lines repeat the line beside it (a '}' put in a run of '}'): the
 * alignment cannot tell where such a change was made, nor from a person's '}' typed beside it, so the hunk is
 * placed as any other.
 */
function alreadyMade(a: Alignment, first: number, s: Sides): boolean {
  if (s.runs.length === 0) return false;
  const beside = (r: Run) => [s.from[r.at - 1], s.from[r.at + r.out]];
  const repeats = (r: Run) =>
    beside(r).some((b) => b !== undefined && (r.put.includes(b) || s.from.slice(r.at, r.at + r.out).includes(b)));
  if (s.runs.some(repeats)) return false;
  const holds = (c: StructuredPatchHunk, r: Run, from: number) =>
    r.put.every((line, k) => a.text[c.newStart - 1 + from + k] === line);
  // The run's lines last only with context after it: at a file's end, a person's block appended at the agent's
  // place that merely ends in a '}' like the run's is not it (the run's line goes before the block).
  const matches = (c: StructuredPatchHunk, r: Run) => {
    if (c.oldStart !== first + r.at || c.oldLines !== r.out || c.newLines < r.put.length) return false;
    if (c.newLines === r.put.length) return holds(c, r, 0);
    if (r.put.length === 0) return false;
    return holds(c, r, 0) || (r.at + r.out < s.from.length && holds(c, r, c.newLines - r.put.length));
  };
  return s.runs.every((r) => a.changes.some((c) => matches(c, r)));
}

/** `s` with its last line, context without a newline, given one on both sides; none when it is not that. */
function withNewline(s: Sides): Sides[] {
  const from = s.from[s.from.length - 1];
  const to = s.to[s.to.length - 1];
  if (from === undefined || from !== to || from.endsWith('\n')) return [];
  return [{ ...s, from: [...s.from.slice(0, -1), `${from}\n`], to: [...s.to.slice(0, -1), `${to}\n`] }];
}

function splice(lines: string[], at: number, s: Sides): string[] {
  return [...lines.slice(0, at - 1), ...s.to, ...lines.slice(at - 1 + s.from.length)];
}

/**
 * Where the hunk starts in the text, by each of its from-side lines the alignment still finds: the lines it
 * changes first (repetitive context aligns ambiguously, a changed line seldom), then context nearest its change.
 * (Not the file's ends: held at the end, a line an undo puts back at the end went after a person's lines
 * appended since; the alignment puts it before them.)
 * A hunk whose lines all sit in a stretch the whole-text diff did not align line by line is aligned on a window.
 */
function positions(a: Alignment, first: number, s: Sides): number[] {
  if (s.from.length === 0) return [first === 1 ? 1 : (where(a, first - 1) ?? -1) + 1];
  const distance = (k: number) => (k < s.firstChange ? s.firstChange - 1 - k : k - s.firstChange);
  const isChanged = new Set(s.changed);
  const context = s.from.map((_, k) => k).filter((k) => !isChanged.has(k));
  context.sort((x, y) => distance(x) - distance(y) || x - y);
  const anchors = [...s.changed, ...context];
  const out: number[] = [];
  for (const k of s.changed) {
    const mapped = where(a, first + k);
    if (mapped !== undefined) out.push(mapped - k);
  }
  for (const k of context) {
    const mapped = where(a, first + k);
    if (mapped !== undefined) out.push(mapped - k);
  }
  return out.length > 0 ? out : windowed(a, first, anchors);
}

/**
 * Positions from a diff of a window of source lines around the hunk against the text lines where the change
 * that holds them leaves room for them (its start, moved as far as its length changed, and `WINDOW` more).
 */
function windowed(a: Alignment, first: number, anchors: number[]): number[] {
  const c = a.changes.find((x) => first >= x.oldStart && first < x.oldStart + x.oldLines);
  if (!c) return [];
  const from = Math.max(c.oldStart, first - WINDOW);
  const to = Math.min(c.oldStart + c.oldLines, first + anchors.length + WINDOW);
  const slack = WINDOW + Math.min(Math.abs(c.newLines - c.oldLines), WINDOW);
  const tFrom = Math.max(c.newStart, c.newStart + (from - c.oldStart) - slack);
  const tTo = Math.min(c.newStart + c.newLines, c.newStart + (to - c.oldStart) + slack);
  const w = align(a.source.slice(from - 1, to - 1).join(''), a.text.slice(tFrom - 1, tTo - 1).join(''));
  const out: number[] = [];
  for (const k of anchors) {
    const mapped = where(w, first + k - from + 1);
    if (mapped !== undefined) out.push(mapped + tFrom - 1 - k);
  }
  return out;
}

/** Lines the text added or changed within a hunk's from-side lines or right beside them. */
function editsNear(a: Alignment, first: number, length: number): number {
  let n = 0;
  for (const c of a.changes) {
    const end = c.oldStart + c.oldLines;
    if (end < first - 1 || c.oldStart > first + length) continue;
    n += Math.max(c.oldLines, c.newLines);
  }
  return n;
}

/** `runs`: each run of changes, where it starts in `from`, how many `from` lines it takes out, what it puts. */
type Sides = {
  from: string[];
  to: string[];
  changed: number[];
  firstChange: number;
  runs: Run[];
};
type Run = { at: number; out: number; put: string[] };

/**
 * A hunk's lines on the side it applies to (`from`) and the side it leaves (`to`), each with its newline unless
 * jsdiff's "\\ No newline at end of file" follows it; `changed`: the indices in `from` of the lines it takes out;
 * `firstChange`: how many `from` lines come before its first change.
 */
function sides(h: Hunk, direction: 'forward' | 'reverse'): Sides {
  const out: Sides = { from: [], to: [], changed: [], firstChange: -1, runs: [] };
  const fromMark = direction === 'forward' ? '-' : '+';
  let run: Run | undefined;
  h.lines.forEach((l, i) => {
    const mark = l[0];
    if (mark === '\\') return;
    const line = l.slice(1) + (h.lines[i + 1]?.startsWith('\\') ? '' : '\n');
    if (mark !== ' ' && out.firstChange < 0) out.firstChange = out.from.length;
    if (mark === ' ') run = undefined;
    else if (!run) out.runs.push((run = { at: out.from.length, out: 0, put: [] }));
    if (mark === fromMark) run!.out++;
    else if (mark !== ' ') run!.put.push(line);
    if (mark === ' ' || mark === fromMark) {
      if (mark === fromMark) out.changed.push(out.from.length);
      out.from.push(line);
    }
    if (mark !== fromMark) out.to.push(line);
  });
  if (out.firstChange < 0) out.firstChange = out.from.length;
  return out;
}
