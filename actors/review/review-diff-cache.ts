/**
 * @module
 * Big review diffs kept between listings. A diff too big for one message is sent in parts, one `review.list`
 * page each, and every page listed the log again: the whole diff of a 50k-line file was computed once per page.
 * Diffs are kept by path and the two sides' hashes (so a change to either side is a new key, never a stale
 * diff), while being computed too (pages asked at once share one computation), within a bound on entries and
 * on characters held; the least recently used go first, and a failed computation is not kept.
 */
import type { Hunk } from '../../schemas/review.ts';

export type CachedDiff = { diff: string; hunks: Hunk[] };

/** Entries kept at most. */
export const REVIEW_DIFF_CACHE_ENTRIES = 16;
/** Diff characters kept at most (a diff over it is computed each time, as before). */
export const REVIEW_DIFF_CACHE_CHARS = 32 * 1024 * 1024;

export class ReviewDiffCache {
  readonly #entries = new Map<string, { diff: Promise<CachedDiff>; chars: number }>();
  readonly #maxEntries: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(maxEntries = REVIEW_DIFF_CACHE_ENTRIES, maxChars = REVIEW_DIFF_CACHE_CHARS) {
    this.#maxEntries = maxEntries;
    this.#maxChars = maxChars;
  }

  /** The diff of `path` from `baseHash` to `currentHash`: kept, or `compute`d and kept. */
  get(
    path: string,
    baseHash: string | null,
    currentHash: string | null,
    compute: () => Promise<CachedDiff>,
  ): Promise<CachedDiff> {
    const key = `${path}\u0000${baseHash ?? ''}\u0000${currentHash ?? ''}`;
    const kept = this.#entries.get(key);
    if (kept) {
      // Most recently used last: Map order is the eviction order.
      this.#entries.delete(key);
      this.#entries.set(key, kept);
      return kept.diff;
    }
    const entry = { diff: compute(), chars: 0 };
    this.#entries.set(key, entry);
    this.#evict();
    entry.diff.then(
      (d) => {
        if (this.#entries.get(key) !== entry) return;
        entry.chars = d.diff.length;
        this.#chars += entry.chars;
        this.#evict();
      },
      () => {
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
      },
    );
    return entry.diff;
  }

  /** Entries kept (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  #evict(): void {
    for (const [key, e] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#chars <= this.#maxChars) return;
      this.#entries.delete(key);
      this.#chars -= e.chars;
    }
  }
}
