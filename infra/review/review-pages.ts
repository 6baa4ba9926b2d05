/**
 * @module
 * Pages of `review.list`: a big review (many files, or big diffs) used to make
 * a reply over NATS's max_payload, which the broker dropped while the client
 * waited for its timeout. Files are ordered by path and cut into pages that fit
 * the payload limit; the cursor is the last path of a page. A single file too
 * big for any page keeps its place with its diff and hunks left out and a note
 * saying how to act on it (by path), so paging never stalls.
 */
import type { FileReview } from '../../schemas/review.ts';

/** Room left for the reply envelope (`ok`, agentId, cursor…) and JSON escaping slack. */
const ENVELOPE_BYTES = 16 * 1024;

export type ReviewPage = { files: FileReview[]; nextCursor?: string };

export function pageOfFiles(all: readonly FileReview[], cursor: string | undefined, maxBytes: number): ReviewPage {
  const budget = Math.max(1024, maxBytes - ENVELOPE_BYTES);
  const sorted = [...all].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const start = cursor === undefined ? 0 : sorted.findIndex((f) => f.path > cursor);
  if (start === -1) return { files: [] };
  const files: FileReview[] = [];
  let used = 2;
  for (let i = start; i < sorted.length; i++) {
    let file = sorted[i]!;
    let size = Buffer.byteLength(JSON.stringify(file)) + 1;
    if (size > budget) {
      file = tooBig(file, size);
      size = Buffer.byteLength(JSON.stringify(file)) + 1;
    }
    if (files.length > 0 && used + size > budget) return { files, nextCursor: files.at(-1)!.path };
    files.push(file);
    used += size;
  }
  return { files };
}

function tooBig(file: FileReview, size: number): FileReview {
  return {
    ...file,
    diff:
      `(diff of ${file.path} left out: ${size} bytes do not fit one message; ` +
      `its ${file.hunks.length} hunk(s) can still be accepted or rejected together by path, ` +
      'e.g. review.reject {"paths":["…"]})\n',
    hunks: [],
    diffLeftOut: true,
  };
}
