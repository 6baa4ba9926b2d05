/**
 * @module
 * What an ask shows besides the judged input: a detail bounded for the log (a 5 MB write's content would bloat
 * it), and what reads a terminal's input, in words.
 */
import { detailCutNote } from '../../schemas/ask-labels.ts';
import type { TerminalForeground } from '../../machines/permission/permission-input.ts';
import { type ContentBytes, contentHead } from '../transport/json-thread.ts';

/** A terminal's reader in words: the program (or prompt), and raw mode. */
/** What reads a terminal's input: the foreground program (or the prompt), and whether its lines are edited. */
export type TerminalView = { foreground: TerminalForeground | undefined; canonical: boolean };

export function describeState(s: TerminalView): string {
  const who = s.foreground?.kind === 'program' ? JSON.stringify(s.foreground.name) : 'the shell prompt';
  return s.canonical ? who : `${who} (raw mode)`;
}

/** An ask's detail is shown to a person and logged: a 5 MB write's content would bloat the log. */
const DETAIL_MAX_CHARS = 16_384;

/**
 * `detail` cut to `DETAIL_MAX_CHARS`. A big file.write's content (`content.text`, the very same string) is cut
 * from its bytes: slicing that rope would first copy all of it into one flat string (json-thread.ts).
 */
export function boundDetail(detail: string, content: ContentBytes | undefined): string {
  if (detail.length <= DETAIL_MAX_CHARS) return detail;
  const head = content?.text === detail ? contentHead(content, DETAIL_MAX_CHARS) : detail.slice(0, DETAIL_MAX_CHARS);
  return `${head}${detailCutNote(detail.length - DETAIL_MAX_CHARS)}`;
}
