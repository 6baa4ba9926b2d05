/**
 * @module
 * Named hosts: an agent's changes are recorded on its own host (its files
 * are there), so a parent on another host reviews them through that host.
 * For a review of a subtree, each agent of it placed on another host whose
 * parent is not on that host (a "top" there) is asked with plain commands on
 * its own subject, which only its host answers: `review.list` (all pages),
 * and for an accept-all or reject-all the same command. A selection by path
 * or hunk id is split: each top gets the paths and hunks its files hold,
 * this host keeps the rest (and whatever nobody holds, which it refuses by
 * name as on one host).
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, RuntimeError, subjectFor } from '../../schemas/index.ts';
import type { FileReview } from '../../schemas/review.ts';
import {
  checkSeen,
  type LogView,
  type Selection as MachineSelection,
  withSeenPaths,
} from '../../machines/review/action-log-plan.ts';
import type { Bus } from '../transport/bus.ts';
import { joinParts, whole } from '../transport/client.ts';
import { decodeReply, encode, type Reply } from '../transport/codec.ts';

export type RemoteReview = {
  bus: Bus;
  /** The agents of `agentId`'s subtree whose parent lives on another host than theirs. */
  tops(agentId: string): string[];
};

/** How long a review call to another host may take, in ms. */
const REMOTE_TIMEOUT_MS = 30_000;

function failed(
  agentId: string,
  type: string,
  error: { code?: string; message?: string; retryable?: boolean } | undefined,
): RuntimeError {
  // A refusal there (a conflict, a path it does not hold) keeps its code: retrying the same would not help.
  if (error?.code !== undefined && error.code !== ErrorCode.Unavailable && error.code !== ErrorCode.Timeout) {
    return new RuntimeError(
      error.code,
      `${type} of agent '${agentId}' on its host was refused: ${error.message ?? 'no reason given'} ` +
        `(this host's part is done)`,
      { retryable: error.retryable ?? false },
    );
  }
  return new RuntimeError(
    ErrorCode.Unavailable,
    `${type} of agent '${agentId}' on its host failed (${error?.message ?? 'no reply'}); this host's part is ` +
      `done: retry, or send ${type} on '${agentId}''s subject`,
    { retryable: true },
  );
}

/** A host's listing as the log view `checkSeen` reads (each file's current hash). */
function listedView(agentId: string, files: readonly FileReview[]): LogView {
  return { agentId, files: Object.fromEntries(files.map((f) => [f.path, f])) };
}

/** One command on `agentId`'s subject (answered by its host); a transport failure is a refused reply. */
async function ask(bus: Bus, agentId: string, type: string, data: unknown): Promise<Reply> {
  const subject = subjectFor({ kind: 'cmd', agentId, type });
  try {
    const bytes = await bus.request(subject, encode({ id: `c-${randomUUID()}`, data }), {
      timeoutMs: REMOTE_TIMEOUT_MS,
    });
    return decodeReply(subject, bytes);
  } catch (err) {
    return { ok: false, error: { code: ErrorCode.Unavailable, message: (err as Error).message, retryable: true } };
  }
}

/** Every file one placed top's review lists (all pages), from its host. */
async function filesOf(remote: RemoteReview, top: string): Promise<FileReview[]> {
  let files: unknown[] = [];
  let cursor: string | undefined;
  do {
    const reply = await ask(remote.bus, top, 'review.list', cursor === undefined ? {} : { cursor });
    if (!reply.ok) throw failed(top, 'review.list', reply.error);
    // A diff too big for one message comes in parts: joined, and paged again by this host.
    files = joinParts(files, (reply['files'] as FileReview[] | undefined) ?? []);
    cursor = typeof reply['nextCursor'] === 'string' ? reply['nextCursor'] : undefined;
  } while (cursor !== undefined);
  return whole(files) as FileReview[];
}

/** Every file the placed tops of `agentId`'s subtree changed, from their hosts. */
export async function remoteFiles(remote: RemoteReview, agentId: string): Promise<FileReview[]> {
  const files: FileReview[] = [];
  for (const top of remote.tops(agentId)) files.push(...(await filesOf(remote, top)));
  return files;
}

export type Selection = MachineSelection;

/**
 * A selection by path or hunk id, split between this host (`local`, undefined when the tops hold all of it)
 * and the placed tops of `agentId`'s subtree whose files hold some of it. A path or hunk this host's review
 * lists, or that no top holds, stays local.
 */
export async function splitSelection(
  remote: RemoteReview,
  agentId: string,
  selection: Selection,
  localFiles: readonly FileReview[],
): Promise<{ local: Selection | undefined; tops: Array<{ top: string; sel: Selection }> }> {
  const sel = withSeenPaths(selection);
  const part = (holds: { paths: Set<string>; hunks: Set<string> }): Selection | undefined => {
    const paths = sel.paths?.filter((p) => holds.paths.has(p));
    const hunkIds = sel.hunkIds?.filter((h) => holds.hunks.has(h));
    if ((paths && paths.length === 0) || (hunkIds && hunkIds.length === 0)) return undefined;
    // Each host checks the files it holds against what the caller saw of them.
    const seen = sel.seen && Object.fromEntries(Object.entries(sel.seen).filter(([p]) => holds.paths.has(p)));
    return { ...(paths ? { paths } : {}), ...(hunkIds ? { hunkIds } : {}), ...(seen ? { seen } : {}) };
  };
  const held = (files: readonly FileReview[]) => ({
    paths: new Set(files.map((f) => f.path)),
    hunks: new Set(files.flatMap((f) => f.hunks.map((h) => h.id))),
  });
  const claimed = { paths: new Set<string>(), hunks: new Set<string>() };
  const tops: Array<{ top: string; sel: Selection }> = [];
  for (const top of remote.tops(agentId)) {
    const files = await filesOf(remote, top);
    const mine = part(held(files));
    if (!mine) continue;
    // What the caller saw is checked against every host's listing before any host acts (each checks again).
    if (mine.seen) checkSeen(listedView(top, files), mine.seen);
    tops.push({ top, sel: mine });
    for (const p of [...(mine.paths ?? []), ...Object.keys(mine.seen ?? {})]) claimed.paths.add(p);
    for (const h of mine.hunkIds ?? []) claimed.hunks.add(h);
  }
  const here = held(localFiles);
  const local = part({
    paths: new Set(
      [...(sel.paths ?? []), ...Object.keys(sel.seen ?? {})].filter((p) => here.paths.has(p) || !claimed.paths.has(p)),
    ),
    hunks: new Set((sel.hunkIds ?? []).filter((h) => here.hunks.has(h) || !claimed.hunks.has(h))),
  });
  if (local?.seen) checkSeen(listedView(agentId, localFiles), local.seen);
  return { local, tops };
}

/** Sends each top its part of a selection; their replies, in order. */
export async function remoteEach(
  remote: RemoteReview,
  parts: ReadonlyArray<{ top: string; sel: Selection }>,
  type: 'review.accept' | 'review.reject',
): Promise<Array<Record<string, unknown>>> {
  const replies: Array<Record<string, unknown>> = [];
  for (const { top, sel } of parts) {
    const reply = await ask(remote.bus, top, type, sel);
    if (!reply.ok) throw failed(top, type, reply.error);
    replies.push(reply as Record<string, unknown>);
  }
  return replies;
}

/** Sends an accept-all or reject-all to each placed top of `agentId`'s subtree; their replies, in order. */
export async function remoteAll(
  remote: RemoteReview,
  agentId: string,
  type: 'review.accept' | 'review.reject',
): Promise<Array<Record<string, unknown>>> {
  const replies: Array<Record<string, unknown>> = [];
  for (const top of remote.tops(agentId)) {
    const reply = await ask(remote.bus, top, type, {});
    if (!reply.ok) throw failed(top, type, reply.error);
    replies.push(reply as Record<string, unknown>);
  }
  return replies;
}
