/**
 * @module
 * A terminal's screen as it was at an output sequence number: its output
 * chunks (stream SKEIN_OUTPUT) up to that point, with its resizes, fed into a
 * headless xterm — the same renderer the live terminal uses.
 */
import type { StoredFact } from '../../schemas/index.ts';
import type { ScreenSnapshot } from '../../schemas/terminal.ts';
import { renderScreen, type ScreenHistoryItem } from '../../actors/terminal/terminal-screen.ts';
import type { ReadOptions } from '../transport/event-log.ts';

export type StreamReader = (options: ReadOptions) => AsyncIterable<StoredFact>;

export class ScreenReplayError extends Error {
  override name = 'ScreenReplayError';
}

export async function screenAt(
  read: StreamReader,
  terminalId: string,
  atSeq?: number,
): Promise<ScreenSnapshot & { atSeq: number; chunks: number }> {
  let size: { cols: number; rows: number } | undefined;
  const resizes: Array<{ cols: number; rows: number; cursor: number }> = [];
  for await (const f of read({ stream: 'events', subject: `skein.evt.*.terminal.${terminalId}` })) {
    const d = f.data as { cols: number; rows: number; cursor: number };
    if (f.type === 'terminal.opened') size = { cols: d.cols, rows: d.rows };
    if (f.type === 'terminal.resized') resizes.push({ cols: d.cols, rows: d.rows, cursor: d.cursor });
  }
  if (!size)
    throw new ScreenReplayError(
      `terminal '${terminalId}' is not in the log; list terminals with \`skein replay | grep terminal.opened\``,
    );
  const items: ScreenHistoryItem[] = [];
  let last = 0;
  let chunks = 0;
  for await (const f of read({
    stream: 'output',
    subject: `skein.out.*.${terminalId}`,
    ...(atSeq === undefined ? {} : { untilSeq: atSeq }),
  })) {
    const d = f.data as { offset: number; data: string };
    while (resizes.length > 0 && resizes[0]!.cursor <= d.offset) items.push(resizes.shift()!);
    items.push(d.data);
    last = f.seq;
    chunks++;
  }
  if (atSeq === undefined) items.push(...resizes);
  return { ...(await renderScreen(items, size.cols, size.rows)), atSeq: last, chunks };
}
