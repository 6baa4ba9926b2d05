/**
 * @module
 * `review.list` of one agent's action log: every changed file with its diff and hunks, except that a file over
 * `REVIEW_DIFF_CUTOFF_BYTES` is listed without its diff unless asked for in full, and big diffs are computed
 * on the diff thread when one is given. The texts come from the blob store; the listing itself is the pure
 * `listReview` (`machines/review/action-log-plan.ts`).
 */
import { NotFoundError } from '../../schemas/errors.ts';
import type { FileReview } from '../../schemas/review.ts';
import { listReview } from '../../machines/review/action-log-list.ts';
import type { LogView } from '../../machines/review/action-log-plan.ts';
import { BlobMissingError, type BlobStore } from './blob-store.ts';
import type { ReviewDiffCache } from './review-diff-cache.ts';

export type ListReply = { agentId: string; files: FileReview[]; undoAvailable: boolean };

export type ListOptions = {
  includeDescendants?: boolean | undefined;
  /** Only these paths (each must be in the log). */
  paths?: readonly string[] | undefined;
  /** Diff every file, however big (off the event loop when `reviewDiff` is given). */
  full?: boolean | undefined;
};

/**
 * A file whose base and current content are over this many bytes together is listed without its diff unless
 * asked for in full: its diff (megabytes of text, then of JSON and base64) held the event loop for hundreds of
 * milliseconds on every listing. Raising it lists more diffs whole, at that cost.
 */
export const REVIEW_DIFF_CUTOFF_BYTES = 1024 * 1024;
/** Combined size from which a diff review shows runs on the diff thread (when one is given). */
export const REVIEW_OFF_THREAD_BYTES = 256 * 1024;

/** Diffs a file for review off the event loop (`DiffThread.review`); `load` gives base and current bytes. */
export type ReviewDiffer = (
  path: string,
  load: () => Promise<[Uint8Array | null, Uint8Array | null]>,
) => Promise<{ diff: string; hunks: FileReview['hunks'] }>;

/** What a listing needs: the blobs, the off-thread differ (if any), and the loader of small files' texts. */
export type ListingDeps = {
  blobs: BlobStore;
  reviewDiff: ReviewDiffer | undefined;
  /** Big diffs kept between listings (each page of a diff sent in parts lists the log again). */
  cache?: ReviewDiffCache | undefined;
  load: (view: LogView, paths: readonly string[]) => Promise<Record<string, string>>;
};

/** Lists `view` (a copy: `paths` narrows it). */
export async function listChanges(deps: ListingDeps, view: LogView, opts: ListOptions = {}): Promise<ListReply> {
  const { agentId } = view;
  if (opts.paths) {
    const missing = opts.paths.find((p) => !view.files[p]);
    if (missing !== undefined) {
      throw new NotFoundError(
        `No change to '${missing}' in the action log of agent '${agentId}'; ` +
          'run review.list without paths to see the tracked paths (absolute).',
      );
    }
    const wanted = new Set(opts.paths);
    view.files = Object.fromEntries(Object.entries(view.files).filter(([p]) => wanted.has(p)));
  }
  const size = (hash: string | null, path: string) =>
    hash === null ? Promise.resolve(0) : deps.blobs.size(hash, `content of '${path}' in review`);
  const leftOut = new Map<string, number>();
  const big: string[] = [];
  const small: string[] = [];
  for (const [path, e] of Object.entries(view.files)) {
    const bytes = (await size(e.baseHash, path)) + (await size(e.currentHash, path));
    if (bytes > REVIEW_DIFF_CUTOFF_BYTES && !opts.full) leftOut.set(path, bytes);
    else if (bytes >= REVIEW_OFF_THREAD_BYTES && deps.reviewDiff) big.push(path);
    else small.push(path);
  }
  const texts = await deps.load(view, small);
  const diffs = new Map<string, { diff: string; hunks: FileReview['hunks'] }>();
  for (const path of big) {
    const e = view.files[path]!;
    const what = `content of '${path}' in review`;
    const bytes = async (hash: string | null) => {
      if (hash === null) return null;
      const b = await deps.blobs.getBytes(hash);
      if (b === undefined) throw new BlobMissingError(hash, deps.blobs.dir, what);
      return b;
    };
    const compute = () => deps.reviewDiff!(path, async () => [await bytes(e.baseHash), await bytes(e.currentHash)]);
    diffs.set(path, await (deps.cache ? deps.cache.get(path, e.baseHash, e.currentHash, compute) : compute()));
  }
  const listOpts = {
    leftOut,
    diffs,
    ...(opts.includeDescendants === undefined ? {} : { includeDescendants: opts.includeDescendants }),
  };
  return { agentId, files: listReview(view, { texts }, listOpts), undoAvailable: view.lastReject != null };
}
