/**
 * @module
 * The file `skein replay --export` writes: one `{seq, subject, fact}` line per fact
 * of the event log, in order, then the output stream's facts (terminal output on
 * `skein.out.…`, numbered by their own stream) after the last event. One file
 * holds both, so `replay --screen --from-file` renders what the terminals showed;
 * readers of the events (digest, timeline) skip the output lines.
 */
import type { StoredFact } from '../../schemas/index.ts';
import type { ReadOptions } from './event-log.ts';
import { readJsonlFile } from './jsonl-log.ts';

/** Subjects of the output stream (`skein.out.<agentId>.<id>`). */
const OUTPUT_SUBJECTS = 'skein.out.>';

export function isOutputFact(fact: Pick<StoredFact, 'subject'>): boolean {
  return fact.subject.startsWith('skein.out.');
}

/** Reads one stream of an export (or of a bare events.jsonl, whose output stream is empty). */
export async function* readExportFile(path: string, options: ReadOptions = {}): AsyncIterable<StoredFact> {
  if ((options.stream ?? 'events') === 'events') {
    // Events come first; output lines after them are skipped (their own numbering may look "earlier").
    for await (const fact of readJsonlFile(path, options)) if (!isOutputFact(fact)) yield fact;
    return;
  }
  const from = options.fromSeq ?? 1;
  const until = options.untilSeq ?? Number.POSITIVE_INFINITY;
  const { onInvalid } = options;
  // No range here: readJsonlFile stops at the first line past `untilSeq`, which may be an event line.
  for await (const fact of readJsonlFile(path, {
    subject: options.subject ?? OUTPUT_SUBJECTS,
    ...(onInvalid ? { onInvalid } : {}),
  })) {
    if (!isOutputFact(fact) || fact.seq < from) continue;
    if (fact.seq > until) break;
    yield fact;
  }
}
