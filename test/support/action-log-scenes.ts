/**
 * @module
 * Texts, entries and hunk lookups shared by the action-log scenario tests (accept, reject across logs,
 * changes made over someone else's): a 20-line file whose lines are told apart, a one-line swap, a log entry
 * from two texts, the id of the hunk that adds a given line, and the changed lines a review lists.
 */
import type { LogEntry } from '../../schemas/review.ts';
import { sha256 } from './action-log-text.ts';
import type { PlanWorld } from './action-log-world.ts';

/** `l1\n` … `l20\n`. */
export const TWENTY = Array.from({ length: 20 }, (_, i) => `l${i + 1}\n`).join('');

/** `text` with its line `l<n>` replaced by `to`. */
export const swap = (text: string, n: number, to: string): string => text.replace(`l${n}\n`, `${to}\n`);

/** The log entry from `base` to `current` (null: created or deleted), by `agents`. */
export const entry = (base: string | null, current: string | null, agents: string[]): LogEntry => ({
  status: base === null ? 'created' : current === null ? 'deleted' : 'modified',
  baseHash: base === null ? null : sha256(base),
  currentHash: current === null ? null : sha256(current),
  agents: agents as LogEntry['agents'],
});

/** The id of the hunk in `id`'s first listed file that adds the line `plus`. */
export const hunk = (w: PlanWorld, id: string, plus: string): string =>
  w.list(id)[0]!.hunks.find((h) => h.lines.includes(`+${plus}`))!.id;

/** The changed lines each file of `id`'s review lists. */
export const listed = (w: PlanWorld, id: string): string[][] =>
  w.list(id).map((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+') || l.startsWith('-'))));
