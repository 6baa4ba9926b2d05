/**
 * @module
 * Accept planning for action logs (`action-log-plan.ts` for the shared rules): the log's base moves forward
 * (the whole file, or by applying the chosen hunks to it), and descendants' bases follow, so that an accept
 * only ever takes changes out of a review, in every log it touches.
 */
import type { UnstampedFact } from '../../schemas/message.ts';
import type { FileUpdate, LogEntry } from '../../schemas/review.ts';
import { heldHunks } from './accept-held.ts';
import { applyHunks, computeHunks } from './action-log-hunks.ts';
import {
  type AcceptReply,
  fact,
  type LogView,
  makeEntry,
  narrows,
  type Plan,
  type PlanEnv,
  put,
  resolveSelection,
  type Selection,
  text,
} from './action-log-plan.ts';

/** review.accept: the log's base moves forward; descendants' logs follow. */
export function planAccept(log: LogView, descendants: LogView[], sel: Selection, env: PlanEnv): Plan<AcceptReply> {
  const blobs: Record<string, string> = {};
  const own: Array<FileUpdate & { hunkIds: string[] }> = [];
  const perDesc = new Map<string, Array<FileUpdate & { hunkIds: string[] }>>();
  const accepted: AcceptReply['accepted'] = [];
  for (const t of resolveSelection(log, sel, env)) {
    const e = t.entry;
    let newBase: string | null;
    if (t.whole) newBase = e.currentHash;
    else {
      const base = text(env, e.baseHash) ?? '';
      newBase = put(blobs, env, applyHunks(base, t.selected, 'forward', base).text);
    }
    const entry = makeEntry(newBase, e.currentHash, e.agents);
    const hunkIds = t.selected.map((h) => h.id);
    own.push({ path: t.path, entry, hunkIds });
    accepted.push({ path: t.path, hunkIds, remaining: t.hunks.length - t.selected.length });
    for (const d of descendants) {
      const de = d.files[t.path];
      if (!de) continue;
      // An accept of every hunk of the path takes all of the descendant's there, created or deleted files too:
      // each of its changes was recorded in this log's entry too, so nothing of it is left for its review.
      if (t.whole) {
        if (de.currentHash === de.baseHash) continue;
        const list = perDesc.get(d.agentId) ?? [];
        list.push({ path: t.path, entry: null, hunkIds });
        perDesc.set(d.agentId, list);
        continue;
      }
      let descBase = de.baseHash;
      let refused = false;
      if (de.baseHash === e.baseHash) descBase = newBase;
      else if (de.baseHash !== null && e.baseHash !== null && e.currentHash !== null) {
        const r = applyHunks(text(env, de.baseHash)!, t.selected, 'forward', text(env, e.baseHash)!);
        if (r.applied.length > 0) descBase = put(blobs, env, r.text);
        refused = r.failed.length > 0;
      }
      // An accept only takes changes out of a descendant's review. Its base moved by the accepted hunks lists
      // more when its entry did not follow this log's change (its current lacks it: the descendant would list
      // removing it), or when a hunk was placed again where its base already held the lines (jsdiff finds the
      // context further on): a line twice, written twice by the descendant's reject-all. Then only its own
      // hunks that the accepted content holds are taken in; else its base stays. So too when no hunk fitted its
      // base (a line of its own beside them, or one already there): it would go on listing what was accepted.
      // A hunk of its own that the accepted content holds but this log's review never showed (it cancels out
      // against this log's base: a line a sibling added and it removed) is taken in too: accepted as it stands.
      const unmoved = descBase === de.baseHash;
      // Moved by only some of the accepted hunks (one that also held a line of its base did not fit): its own
      // hunks that the accepted content holds are taken in on top, as when none fitted.
      if (refused && !unmoved) {
        descBase = acceptedOwn(t.path, env, blobs, { ...de, baseHash: descBase }, newBase) ?? descBase;
      }
      if (
        (unmoved && refused) ||
        (!unmoved && !narrows(t.path, env, [de.baseHash, de.currentHash], [descBase, de.currentHash]))
      ) {
        descBase = acceptedOwn(t.path, env, blobs, de, newBase) ?? de.baseHash;
      }
      if (descBase === de.baseHash) continue;
      const list = perDesc.get(d.agentId) ?? [];
      list.push({ path: t.path, entry: makeEntry(descBase, de.currentHash, de.agents), hunkIds });
      perDesc.set(d.agentId, list);
    }
  }
  const facts: UnstampedFact[] = [accepted_(log.agentId, log.agentId, own)];
  for (const [id, files] of perDesc) facts.push(accepted_(id, log.agentId, files));
  return { writes: [], blobs, facts, reply: { accepted } };
}

/**
 * A descendant's base with those of its own hunks that `accepted` (the content an ancestor accepted) holds as
 * they are, by position (`heldHunks`, accept-held.ts). Undefined when none is. (An accept of every hunk of the
 * path takes all of them, in planAccept.)
 */
function acceptedOwn(
  path: string,
  env: PlanEnv,
  blobs: Record<string, string>,
  de: LogEntry,
  accepted: string | null,
): string | undefined {
  const base = text(env, de.baseHash);
  const current = text(env, de.currentHash);
  const target = text(env, accepted);
  if (base === null || current === null || target === null) return undefined;
  const taken = heldHunks(current, target, computeHunks(path, base, current));
  if (taken.length === 0) return undefined;
  const r = applyHunks(base, taken, 'forward', base);
  if (r.failed.length > 0) return undefined;
  return put(blobs, env, r.text);
}

function accepted_(agentId: string, by: string, files: Array<FileUpdate & { hunkIds: string[] }>): UnstampedFact {
  return fact('review.accepted', agentId, { agentId, by, files });
}
