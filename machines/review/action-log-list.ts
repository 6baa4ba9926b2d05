/**
 * @module
 * review.list for one log (pure): per file its status, agents, unified diff and hunks, or a note that says why
 * its diff is left out and how to get it.
 */
import type { FileReview, Hunk } from '../../schemas/review.ts';
import { reviewDiff } from './action-log-hunks.ts';
import { type LogView, type PlanEnv, text } from './action-log-plan.ts';

/** How review.list is to show a file it does not diff here. */
export type ListOptions = {
  includeDescendants?: boolean;
  /** path → bytes of base and current together: listed without a diff (over the listing's cut-off). */
  leftOut?: ReadonlyMap<string, number>;
  /** path → its diff and hunks, already computed (off the event loop, for big files). */
  diffs?: ReadonlyMap<string, { diff: string; hunks: Hunk[] }>;
};

/** The files of a log as review.list shows them; texts are needed only for files in neither `leftOut` nor `diffs`. */
export function listReview(log: LogView, env: Pick<PlanEnv, 'texts'>, opts: ListOptions = {}): FileReview[] {
  const out: FileReview[] = [];
  for (const [path, e] of Object.entries(log.files)) {
    if (opts.includeDescendants === false && !(e.agents as readonly string[]).includes(log.agentId)) continue;
    const head = { path, status: e.status, agents: e.agents, baseHash: e.baseHash, currentHash: e.currentHash };
    const bytes = opts.leftOut?.get(path);
    if (bytes !== undefined) {
      out.push({ ...head, diff: leftOutNote(path, bytes), hunks: [], diffLeftOut: true });
      continue;
    }
    const { diff, hunks } = opts.diffs?.get(path) ?? reviewDiff(path, text(env, e.baseHash), text(env, e.currentHash));
    out.push({ ...head, diff, hunks });
  }
  return out;
}

function leftOutNote(path: string, bytes: number): string {
  return (
    `(diff of ${path} left out: its base and current content are ${bytes} bytes together, over the listing's ` +
    `cut-off; get it with review.list {"paths":[${JSON.stringify(path)}],"full":true}. Its changes can be ` +
    'accepted or rejected together by path, e.g. review.reject {"paths":["…"]})\n'
  );
}
