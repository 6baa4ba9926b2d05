/**
 * @module
 * Resolving one `old_text` to a single range (with zed's exact error texts)
 * and applying a list of edits sequentially, each against the result of the
 * previous one; a failing edit stops the sequence and keeps what was already
 * applied. Pure: strings in, strings and outcomes out.
 */
import { type SearchMatches, StreamingFuzzyMatcher } from './edit-matcher.ts';
import {
  computeIndentDelta,
  computeRestIndentDelta,
  convertIndent,
  type IndentConversion,
  type IndentDelta,
  indentConversion,
  indentMap,
  lineIndent,
  reindent,
} from './edit-reindent.ts';
import { editErrors, lineStarts, rowOf, textLines, type TextRange } from './edit-text.ts';

export type EditSpec = { oldText: string; newText: string };

/** How one edit landed (lines are 1-based, in the buffer as it was before this edit). */
export type EditOutcome = {
  index: number;
  matchKind: 'exact' | 'fuzzy';
  similarity: number;
  range: TextRange;
  startLine: number;
  endLine: number;
  /** The text that replaced the range (after re-indentation). */
  inserted: string;
};

export type EditFailure = {
  index: number;
  reason: 'unresolved' | 'ambiguous' | 'invalid';
  message: string;
  /** 1-based start lines of the candidates, for `ambiguous`. */
  lines?: number[];
};

/** A resolved edit: where it goes and how to re-indent its new text. */
export type EditPlan = {
  index: number;
  range: TextRange;
  matchKind: 'exact' | 'fuzzy';
  similarity: number;
  startLine: number;
  endLine: number;
  first: IndentDelta;
  rest: IndentDelta;
  conversion: IndentConversion | undefined;
  /** Query line indent → buffer line indent, for fuzzy matches. */
  indentMap: Map<string, string> | undefined;
  /** The buffer has a line ending right after the range: drop one trailing newline from new_text. */
  stripTrailingNewline: boolean;
};

export type ApplyResult = { content: string; outcomes: EditOutcome[]; failure?: EditFailure };

/** Checks an edit before matching: empty `old_text`, or a no-op. */
export function validateEdit(edit: EditSpec, index: number): EditFailure | undefined {
  if (edit.oldText === '') return { index, reason: 'invalid', message: editErrors.emptyOldText(index) };
  if (edit.oldText === edit.newText) return { index, reason: 'invalid', message: editErrors.noOp(index) };
  return undefined;
}

/**
 * Turns the matcher's verdict into one plan or a failure: none → the
 * "Could not find" text (plus the stale-read sentence), several → the
 * "matched multiple locations" text with 1-based lines.
 */
export function planEdit(
  buffer: string,
  oldText: string,
  found: SearchMatches,
  index: number,
  stale: boolean,
  shownOnly = false,
): EditPlan | EditFailure {
  const starts = lineStarts(buffer);
  if (found.tooLarge) {
    const { queryLines, bufferLines } = found.tooLarge;
    return { index, reason: 'unresolved', message: editErrors.tooLarge(index, queryLines, bufferLines) };
  }
  if (found.matches.length === 0) return { index, reason: 'unresolved', message: editErrors.noMatch(index, stale) };
  if (found.matches.length > 1) {
    const lines = found.matches.map((m) => rowOf(starts, m.range.start) + 1);
    const shared = new Set(lines).size < lines.length;
    const columns = shared ? found.matches.map((m, i) => m.range.start - starts[lines[i]! - 1]! + 1) : undefined;
    const message = editErrors.ambiguous(index, lines, found.more, columns);
    return { index, reason: 'ambiguous', message, lines };
  }
  const match = found.matches[0]!;
  const exact = found.kind === 'exact';
  const startRow = rowOf(starts, match.range.start);
  const endRow = rowOf(starts, match.range.end);
  const unshown =
    exact || !shownOnly ? undefined : unshownLine(buffer.slice(match.range.start, match.range.end), oldText);
  if (unshown) {
    const at = { start: startRow + 1, end: endRow + 1, line: startRow + 1 + unshown.row, text: unshown.text };
    return { index, reason: 'unresolved', message: editErrors.unshown(index, at, match.similarity) };
  }
  const rowText = (row: number) => {
    const s = starts[row]!;
    const e = row + 1 < starts.length ? starts[row + 1]! - 1 : buffer.length;
    return buffer.slice(s, e);
  };
  const rawQueryLines = textLines(oldText);
  const matchedRows: string[] = [];
  for (let r = startRow; r <= endRow; r++) matchedRows.push(rowText(r));
  const relPairs = match.linePairs.map(([q, b]) => [q, b - startRow] as [number, number]);
  const conversion = exact ? undefined : indentConversion(matchedRows, rawQueryLines, relPairs);
  const queryLines = conversion ? rawQueryLines.map((l) => convertIndent(l, conversion)) : rawQueryLines;
  const contextual = computeIndentDelta(lineIndent(rowText(startRow)), lineIndent(queryLines[0] ?? ''));
  const first: IndentDelta = exact ? { kind: 'spaces', delta: 0 } : contextual;
  const pairs = match.linePairs
    .filter(([q]) => q !== 0 && q < queryLines.length)
    .map(
      ([q, b]) =>
        [lineIndent(rowText(b)), lineIndent(queryLines[q]!)] as [
          ReturnType<typeof lineIndent>,
          ReturnType<typeof lineIndent>,
        ],
    );
  const rest = computeRestIndentDelta(contextual, pairs);
  const after = buffer.slice(match.range.end, match.range.end + 2);
  return {
    index,
    range: match.range,
    matchKind: found.kind,
    similarity: match.similarity,
    startLine: startRow + 1,
    endLine: endRow + 1,
    first,
    rest,
    conversion,
    indentMap: exact ? undefined : indentMap(matchedRows, rawQueryLines, relPairs),
    stripTrailingNewline: after[0] === '\n' || after === '\r\n',
  };
}

/** Spaces and tabs, runs of them: what a fuzzy match may differ in from the lines a person was shown. */
const BLANKS = /[ \t\r\f\v]+/g;
const normal = (line: string) => line.replace(BLANKS, ' ').trim();

/**
 * The first line of `replaced` (the text a fuzzy match would replace) that is not one of `shown`'s lines, in
 * order, up to spaces and tabs; undefined when every replaced line was shown. A match covering a line the
 * old_text never held (the matcher tolerates a fifth of them) would replace what a person approving the edit
 * never saw.
 */
export function unshownLine(replaced: string, shown: string): { row: number; text: string } | undefined {
  const want = textLines(shown).map(normal);
  const lines = replaced.split('\n');
  let q = 0;
  for (let row = 0; row < lines.length; row++) {
    const line = normal(lines[row]!);
    while (q < want.length && want[q] !== line) q++;
    if (q === want.length) return { row, text: lines[row]!.replace(/\r$/, '') };
    q++;
  }
  return undefined;
}

export function isFailure(p: EditPlan | EditFailure): p is EditFailure {
  return 'reason' in p;
}

/** Drops one trailing line ending from the final new text when the plan says so. */
export function finalNewText(newText: string, plan: EditPlan): string {
  if (!plan.stripTrailingNewline) return newText;
  if (newText.endsWith('\r\n')) return newText.slice(0, -2);
  if (newText.endsWith('\n')) return newText.slice(0, -1);
  return newText;
}

/** Resolves and applies one edit against `buffer`. */
export function applyOne(
  buffer: string,
  edit: EditSpec,
  index: number,
  stale: boolean,
  shownOnly = false,
): { content: string; outcome: EditOutcome } | EditFailure {
  const invalid = validateEdit(edit, index);
  if (invalid) return invalid;
  const matcher = new StreamingFuzzyMatcher(buffer);
  matcher.push(edit.oldText, true);
  const plan = planEdit(buffer, edit.oldText, matcher.finish(), index, stale, shownOnly);
  if (isFailure(plan)) return plan;
  const inserted = reindent(finalNewText(edit.newText, plan), plan.first, plan.rest, plan.conversion, plan.indentMap);
  const content = buffer.slice(0, plan.range.start) + inserted + buffer.slice(plan.range.end);
  return {
    content,
    outcome: {
      index,
      matchKind: plan.matchKind,
      similarity: plan.similarity,
      range: plan.range,
      startLine: plan.startLine,
      endLine: plan.endLine,
      inserted,
    },
  };
}

/**
 * Applies `edits` in order, each against the previous result. `stale` adds
 * the "changed on disk" sentence to a no-match error; `shownOnly` (a person
 * approved the edits) refuses a fuzzy match replacing a line old_text lacks.
 */
export function applyEdits(
  buffer: string,
  edits: readonly EditSpec[],
  options: { stale?: boolean; shownOnly?: boolean } = {},
): ApplyResult {
  if (edits.length === 0)
    return { content: buffer, outcomes: [], failure: { index: 0, reason: 'invalid', message: editErrors.noEdits() } };
  let content = buffer;
  const outcomes: EditOutcome[] = [];
  for (let i = 0; i < edits.length; i++) {
    const r = applyOne(content, edits[i]!, i, options.stale ?? false, options.shownOnly ?? false);
    if ('reason' in r) return { content, outcomes, failure: r };
    content = r.content;
    outcomes.push(r.outcome);
  }
  return { content, outcomes };
}
