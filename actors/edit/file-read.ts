/**
 * @module
 * `file.read` and seen-version tracking: returns a line range of a text file
 * (or, for a large file read without a range, an outline of its symbols and a
 * hint to read ranges), and remembers per agent and path which version (hash
 * + mtime) the agent has seen, for stale-read detection.
 */
import { createHash } from 'node:crypto';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { OutlineSymbol } from '../../schemas/edit.ts';
import type { TextFile } from './file-io.ts';
import { outline } from './syntax.ts';

export type SeenVersion = { hash: string; mtimeMs: number };

export type ReadReply = {
  path: string;
  content: string;
  startLine: number;
  endLine: number;
  totalLines: number;
  hash: string;
  outline?: OutlineSymbol[];
  hint?: string;
};

export type ReadLimits = {
  /** Without a range, files longer than this return an outline instead of their text. */
  outlineAboveLines: number;
  /** At most this many lines per read. */
  maxLines: number;
};

export const DEFAULT_READ_LIMITS: ReadLimits = { outlineAboveLines: 2000, maxLines: 2000 };

/** Per-agent, per-path versions the agent has seen. */
export class SeenVersions {
  readonly #map = new Map<string, SeenVersion>();
  get(agentId: string, path: string): SeenVersion | undefined {
    return this.#map.get(`${agentId}\u0000${path}`);
  }
  set(agentId: string, path: string, v: SeenVersion): void {
    this.#map.set(`${agentId}\u0000${path}`, v);
  }
  /** True when the agent read this path and the file has changed since. */
  isStale(agentId: string, file: { path: string; hash: string }): boolean {
    const seen = this.get(agentId, file.path);
    return seen !== undefined && seen.hash !== file.hash;
  }
}

/** Stable token id of a path for the `file` aggregate. */
export function fileIdOf(path: string): string {
  return `f-${createHash('sha256').update(path).digest('hex').slice(0, 16)}`;
}

/** Lines of the file as the model sees them (a final newline does not open a line). */
export function fileLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export async function readRange(
  file: TextFile,
  displayPath: string,
  range: { startLine?: number | undefined; endLine?: number | undefined },
  limits: ReadLimits = DEFAULT_READ_LIMITS,
): Promise<ReadReply> {
  const lines = fileLines(file.text);
  const total = lines.length;
  const base = { path: displayPath, totalLines: total, hash: file.hash };
  const ranged = range.startLine !== undefined || range.endLine !== undefined;
  if (!ranged && total > limits.outlineAboveLines) {
    const symbols = await outline(file.path, file.text).catch(() => undefined);
    if (symbols && symbols.length > 0) {
      return {
        ...base,
        content: '',
        startLine: 0,
        endLine: 0,
        outline: symbols,
        hint:
          `${displayPath} has ${total} lines, so this is an outline of its symbols with line ranges. ` +
          `Read the parts you need with startLine and endLine (at most ${limits.maxLines} lines per read).`,
      };
    }
  }
  const start = range.startLine ?? 1;
  if (total === 0 && start === 1) return { ...base, content: '', startLine: 0, endLine: 0 };
  if (start > total) {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `startLine ${start} is past the end of ${JSON.stringify(displayPath)}, ` +
        `which has ${total} lines. Ask for a line between 1 and ${total}.`,
    );
  }
  const wantedEnd = Math.min(range.endLine ?? total, total);
  if (wantedEnd < start) {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `endLine ${range.endLine} is before startLine ${start}. Give endLine ≥ startLine.`,
    );
  }
  const end = Math.min(wantedEnd, start + limits.maxLines - 1);
  const body = lines.slice(start - 1, end);
  // Keep the file's final newline when the range reaches the end, so the text is exactly the file's.
  const content = body.join('\n') + (end < total || file.text.endsWith('\n') ? '\n' : '');
  const reply: ReadReply = { ...base, content, startLine: start, endLine: end };
  if (end < wantedEnd) reply.hint = `Showing lines ${start}-${end} of ${total}. Read on with startLine ${end + 1}.`;
  return reply;
}
