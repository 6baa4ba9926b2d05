/**
 * @module
 * The fuzzy matcher's costs, its bounds on work and what it answers (`edit-matcher.ts`). Pure.
 */
import type { TextRange } from './edit-text.ts';

/** DP cost of a query line aligned to a buffer line that is only fuzzy equal. */
export const REPLACEMENT_COST = 1;
/** DP cost of an extra buffer line inside the match. */
export const INSERTION_COST = 3;
/** DP cost of a query line with no buffer counterpart. */
export const DELETION_COST = 10;
/** Two exact hits are enough to prove ambiguity. */
export const MAX_EXACT_MATCHES = 2;
/** A fuzzy candidate is kept when matched lines / max(buffer span, query lines) reaches this. */
export const MATCHED_RATIO = 0.8;
/**
 * Beyond zed (which keeps only exact cost ties): when the best candidate is
 * imperfect (cost > 0), a non-overlapping candidate whose cost is within this
 * of it also counts, making the edit ambiguous instead of silently picking by
 * a margin of one extra or one fuzzy line. Raising it refuses more
 * near-duplicates; 0 is zed's behaviour.
 */
export const NEAR_TIE_MARGIN = INSERTION_COST;
/** At most this many near-tie candidates are traced back (bounds time on repetitive files). */
export const MAX_NEAR_TIES = 16;
/**
 * At most this many best candidates are traced back: two already make the edit ambiguous, and a file of alike
 * lines has one at nearly every line (each a walk back through the query and similarities along it).
 */
export const MAX_BEST_TRACED = 16;
/**
 * The work (`Work` steps: DP cells, histogram checks, Levenshtein cells) a fuzzy search may take, about a quarter
 * of a second of the host's thread here; past it the search is refused (the edit fails naming the sizes) rather
 * than hold the host. Unbounded, 200 near-alike lines of old_text against a 5,000-line file of near-alike lines
 * held the host's event loop for 20 s, and 20,000 lines for minutes. It also bounds the DP's memory (2 bits a
 * cell: 16 MB). An exact match needs none of it and has no such bound.
 */
export const MAX_FUZZY_STEPS = 64_000_000;
/** Work the streaming preview may take besides; past it, no more provisional ranges until `finish`. */
export const MAX_PREVIEW_STEPS = 64_000_000;

export type SearchMatch = {
  range: TextRange;
  /** `[queryRow, bufferRow]` pairs of aligned lines (0-based). */
  linePairs: Array<[number, number]>;
  /** 0..1: 1 for exact; for fuzzy, the mean per-line similarity over max(span, query lines). */
  similarity: number;
};
export type SearchMatches = {
  kind: 'exact' | 'fuzzy';
  matches: SearchMatch[];
  /** More candidates were left untraced (`MAX_BEST_TRACED`): the match is ambiguous at more lines than listed. */
  more?: boolean;
  /** The fuzzy search was refused: it would take more than `MAX_FUZZY_STEPS` (query and buffer lines given). */
  tooLarge?: { queryLines: number; bufferLines: number };
};
