/**
 * @module
 * Pages of `review.list`: a big review (many files, or big diffs) used to make a reply over NATS's max_payload,
 * which the broker dropped while the client waited for its timeout. Files are ordered by path and cut into pages
 * that fit the payload limit; the cursor is the last path of a page. A file whose diff cannot fit one page is
 * sent in parts, one per page (`diffPart`: which characters of the diff each holds, its hunks with the last),
 * so a diff of any size comes back whole; the cursor of a part names the path, where the next part starts and
 * the content hashes, so a file that changes between pages is refused instead of stitched from two diffs.
 * A page is at most `MAX_PAGE_BYTES` whatever the payload limit: checking, encoding and sending a 3 MB page (a
 * 50k-line diff with its hunks, under a raised limit) held the host's thread over 100 ms in one piece.
 */
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { FileReview } from '../../schemas/review.ts';

/** Room left for the reply envelope (`ok`, agentId, cursor…) and JSON escaping slack. */
const ENVELOPE_BYTES = 16 * 1024;
/** Separates a part cursor's fields: a path never holds NUL. */
const SEP = '\u0000';

/** The most a page holds, even when the payload limit is higher: its cost on the host's thread is bounded. */
export const MAX_PAGE_BYTES = 1024 * 1024;

export type ReviewPage = { files: FileReview[]; nextCursor?: string };

export function pageOfFiles(all: readonly FileReview[], cursor: string | undefined, maxBytes: number): ReviewPage {
  const budget = Math.max(1024, Math.min(maxBytes, MAX_PAGE_BYTES) - ENVELOPE_BYTES);
  const sorted = [...all].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // Every cursor starts with a path, and a logged path is absolute: anything else was never handed out, and read
  // as "the files after it" it answered that there were none.
  if (cursor !== undefined && !cursor.startsWith('/')) throw notACursor();
  const part = cursor?.includes(SEP) ? partCursor(cursor) : undefined;
  if (part) {
    const file = sorted.find((f) => f.path === part.path);
    if (!file || file.baseHash !== part.baseHash || file.currentHash !== part.currentHash) {
      throw new RuntimeError(
        ErrorCode.Conflict,
        `${part.path} changed (or left the review) while its diff was being sent in parts; ` +
          'run review.list again from the first page (no cursor)',
      );
    }
    return andAfter(partPage(file, part.start, budget), sorted, file);
  }
  const start = cursor === undefined ? 0 : sorted.findIndex((f) => f.path > cursor);
  if (start === -1) return { files: [] };
  const files: FileReview[] = [];
  let used = 2;
  for (let i = start; i < sorted.length; i++) {
    const file = sorted[i]!;
    // A JSON string takes at least a byte per UTF-16 unit: a diff longer than the budget is not encoded to know.
    const size = file.diff.length > budget ? budget + 1 : Buffer.byteLength(JSON.stringify(file)) + 1;
    if (size > budget) {
      // Too big for any page: in parts, from a page of its own (the files before it end this one).
      if (files.length > 0) return { files, nextCursor: files.at(-1)!.path };
      return andAfter(partPage(file, 0, budget), sorted, file);
    }
    if (files.length > 0 && used + size > budget) return { files, nextCursor: files.at(-1)!.path };
    files.push(file);
    used += size;
  }
  return { files };
}

/** A page ending with `file`'s last part points on to the files after it. */
function andAfter(page: ReviewPage, sorted: readonly FileReview[], file: FileReview): ReviewPage {
  if (page.nextCursor !== undefined || sorted.at(-1) === file) return page;
  return { ...page, nextCursor: file.path };
}

/**
 * The part of `file`'s diff from character `start` that fits `budget` bytes as JSON, alone on its page. The
 * last part carries the hunks when the rest of the diff and they fit; else the hunks get a part of their own,
 * with their lines left out when even alone they do not fit (they are the diff's @@ sections).
 */
function partPage(file: FileReview, start: number, budget: number): ReviewPage {
  const total = file.diff.length;
  const head = { ...file, diff: '', hunks: [] as FileReview['hunks'] };
  const bytes = (f: FileReview) => Buffer.byteLength(JSON.stringify(f)) + 3;
  const withHunks = { ...file, diff: file.diff.slice(start), diffPart: { start, end: total, total } };
  // At least a byte a UTF-16 unit: a rest longer than the budget cannot fit, and is not encoded to know.
  if (total - start <= budget && bytes(withHunks) <= budget) return { files: [withHunks] };
  if (start >= total) {
    // Only the hunks are left, and they do not fit whole: ids and ranges, their lines are the diff's.
    const hunks = file.hunks.map((h) => ({ ...h, lines: [] }));
    return { files: [{ ...head, hunks, hunkLinesLeftOut: true, diffPart: { start: total, end: total, total } }] };
  }
  const room = budget - bytes({ ...head, diffPart: { start, end: total, total } });
  const end = fitEnd(file.diff, start, Math.max(64, room));
  const files = [{ ...head, diff: file.diff.slice(start, end), diffPart: { start, end, total } }];
  return { files, nextCursor: [file.path, end, file.baseHash ?? '', file.currentHash ?? ''].join(SEP) };
}

/** The end of the longest slice of `text` from `start` whose JSON string takes at most `room` bytes. */
function fitEnd(text: string, start: number, room: number): number {
  let end = Math.min(text.length, start + room);
  for (;;) {
    const size = Buffer.byteLength(JSON.stringify(text.slice(start, end)));
    if (size <= room || end - start <= 1) break;
    end = start + Math.max(1, Math.floor(((end - start) * room) / size) - 16);
  }
  // Never between the two halves of a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (end < text.length && end - start > 1 && last >= 0xd800 && last <= 0xdbff) end--;
  return end;
}

function partCursor(cursor: string): {
  path: string;
  start: number;
  baseHash: string | null;
  currentHash: string | null;
} {
  const fields = cursor.split(SEP);
  const [path = '', start = '', baseHash = '', currentHash = ''] = fields;
  const n = Number(start);
  if (fields.length !== 4 || !/^\d+$/.test(start) || !Number.isSafeInteger(n)) throw notACursor();
  return { path, start: n, baseHash: baseHash || null, currentHash: currentHash || null };
}

function notACursor(): RuntimeError {
  return new RuntimeError(
    ErrorCode.InvalidMessage,
    'review.list cursor is not one review.list returned; omit it to start over',
  );
}
