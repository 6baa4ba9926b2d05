/**
 * @module
 * The files a command changed, recorded in its agent's action log (and its ancestors'): when it ends, from its
 * tracking mark's diff; and, while it runs, what it changed so far at a path an edit is about to write
 * (`soFar`). Before that, an edit made while the agent's own command ran started from a disk holding the
 * command's change, so the planner folded it into the log's base as made outside, and the command's end then
 * credited the whole file to the edit: a reject-all left the command's change on disk (a review's probe; an agent
 * could do it on purpose). Changes the log refuses are queued (`infra/review/unrecorded.ts`) and the command's
 * exec says it ran (`shellNotRecorded`).
 */
import type { AgentId } from '../../schemas/index.ts';
import { type ErrorCode, RuntimeError, reasonOf, toErrorInfo } from '../../schemas/index.ts';
import { isInside } from '../../machines/common/confine.ts';
import { attributeShellChanges } from '../../machines/review/shell-attribution.ts';
import { recordShellChanges, type ShellRecords, type SnapshotDiff } from '../../actors/review/workspace-snapshot.ts';
import type { TrackMark, WorkspaceTracker } from '../../actors/review/workspace-tracker.ts';
import type { AgentDirectory } from '../../actors/agent/agent-directory.ts';
import type { Host } from '../kernel/host.ts';
import type { ReviewRecorder } from '../review/wiring.ts';

/** A command whose workspace is tracked, from its exec until its changes are recorded. */
export type ShellEntry = {
  agentId: string;
  command: string;
  terminalId: string;
  workspace: string;
  before: TrackMark;
  since: number;
  /** The mark's diff, taken as soon as the command ended (before its finish was appended). */
  ending?: Promise<SnapshotDiff>;
  /** Paths whose change a writer holding their locks recorded first (`collect`): left out of the record. */
  taken?: Set<string>;
  /** When it ended, in the order commands ended. */
  endSeq?: number;
};

export function shellRecords(deps: {
  host: Host;
  directory: AgentDirectory;
  review: ReviewRecorder;
  tracker: WorkspaceTracker;
}) {
  const { tracker } = deps;
  /** Commands from their exec until their own record holds their paths' locks. */
  const live = new Set<ShellEntry>();
  let endings = 0;

  /** Notes `path`'s change as recorded, queued or being recorded by a writer: left out of what follows. */
  const take = (entry: ShellEntry, path: string) => {
    entry.taken ??= new Set();
    entry.taken.add(path);
  };

  /**
   * Records `all`, the changes `entry`'s command made; `lockHeld`: under the locks of their paths (a writer's);
   * `final`: `all` is from its final diff (not what a running command changed so far).
   */
  const recordDiff = async (entry: ShellEntry, all: SnapshotDiff, lockHeld: boolean, final = true) => {
    // Another agent's edit made while the command ran is that edit's change, already recorded (its plan, before
    // its write, noted it), and so is a review's restore. A writer that held the locks meanwhile took it first.
    // (A writer's own collect, under the locks, records what it took: nothing can come between.)
    const taken = (path: string) => !lockHeld && entry.taken?.has(path) === true;
    // A writer's write the mark started again from since (`WorkspaceTracker.wrote`) is out of its diff already.
    const edited = (c: { path: string; after: string | null }) =>
      deps.review.editedSince(c.path, c.after, entry.since, entry, tracker.rebasedAt(entry.before, c.path));
    const diff = { ...all, changes: all.changes.filter((c) => !edited(c) && !taken(c.path)) };
    if (diff.changes.length === 0) return;
    // Commands running at the same time in one workspace see each other's changes: the first to finish
    // records a change, the others skip it. A change made while other agents' commands were open too is
    // recorded for their nearest common ancestor (a snapshot cannot tell which process wrote a file).
    const lineage = (id: string) => [id, ...deps.directory.localAncestors(id)];
    let failure: unknown;
    const unrecorded: string[] = [];
    for (const group of attributeShellChanges(entry.agentId, diff.changes, all.sharedWith, lineage)) {
      const command = group.among
        ? `one of the commands of ${group.among.join(', ')} running at once (${entry.agentId}: ${entry.command})`
        : entry.command;
      const who = {
        agentId: group.agentId,
        ancestors: deps.directory.localAncestors(group.agentId),
        command,
        terminalId: entry.terminalId,
      };
      /** The group's changes not stored yet: a batch stored before one the log refused is not recorded again. */
      let left = group.changes;
      const store = async (b: ShellRecords, paths: readonly string[]) => {
        await deps.host.emit(
          {
            type: 'action-log.shell.recorded',
            data: {
              agentId: group.agentId,
              terminalId: entry.terminalId,
              command: command.slice(0, 4096),
              files: b.files,
              records: b.records,
              by: entry.agentId,
              contentBytes: b.contentBytes,
            },
          },
          { agentId: group.agentId as AgentId },
        );
        const stored = new Set(paths);
        left = left.filter((c) => !stored.has(c.path));
        // Recorded from the command's final diff: a writer's collect does not take it again. (What a running
        // command changed so far is taken out of its mark instead: later changes are still its own.)
        if (final) for (const path of paths) take(entry, path);
      };
      // The files changed but their records are not in the log: each kept and retried, behind any earlier change of
      // its path (queued before the locks are released), so they reach review in the order they were made.
      const failed = (err: unknown) => {
        for (const change of left) {
          const record = async () =>
            void (await recordShellChanges(deps.review.service, who, { changes: [change], reportedOnly: [] }, store, {
              lockHeld: true,
            }));
          deps.review.unrecorded.add({ path: change.path, agentId: group.agentId, record }, err);
          if (final) take(entry, change.path); // queued: recorded from there
          unrecorded.push(change.path);
        }
        failure ??= err;
      };
      // Earlier changes of these files the log refused go first (and while it still does, these wait too);
      // overlapping commands' changes are settled by the claims above, not collected.
      const first = (paths: readonly string[]) => deps.review.unrecorded.flush(paths, { collect: false });
      const keep = (c: { path: string; after: string | null }) => {
        if (taken(c.path) || edited(c)) return false;
        deps.review.claim(c.path, c.after, entry);
        return true;
      };
      await recordShellChanges(deps.review.service, who, { changes: left, reportedOnly: [] }, store, {
        first,
        failed,
        lockHeld,
        keep,
      }).catch(() => undefined);
    }
    if (failure !== undefined) throw shellNotRecorded(failure, unrecorded);
  };

  return {
    /** A command's mark was opened. */
    opened(entry: ShellEntry): void {
      live.add(entry);
    },
    /** Its command never ran: the mark is closed. */
    discard(entry: ShellEntry): void {
      live.delete(entry);
      if (!entry.ending) tracker.discard(entry.before);
    },
    /** The command ended: its diff is taken now (recorded by `record`). */
    ended(entry: ShellEntry): void {
      entry.endSeq = ++endings;
      entry.ending = tracker.end(entry.before);
      entry.ending.catch(() => undefined);
    },
    /** Records what the command changed; throws `shellNotRecorded` when the log refused some (they are queued). */
    async record(entry: ShellEntry): Promise<void> {
      try {
        await recordDiff(entry, await (entry.ending ?? tracker.end(entry.before)), false);
      } finally {
        live.delete(entry);
      }
    },
    /**
     * Under the locks of `paths`, before a writer reads and writes them: what commands changed there and did not
     * record yet is recorded as theirs now (queued if the log refuses: the writer's flush then refuses it). First
     * the commands that ended, in the order they ended, from their final diffs (left out of their own records,
     * which wait for these locks); then, for an edit (`running`), what commands still running changed so far,
     * deepest workspace first (a child's command in its nested root before its parent's), taken out of their
     * marks. A review does not take from running commands (an accept would accept it unseen, a review with
     * `seen` would be refused while a command writes); after an edit or a review writes, the marks start again
     * from what the log holds for the file (`WorkspaceTracker.wrote`).
     */
    async collect(paths: readonly string[], running: boolean): Promise<void> {
      for (const path of paths) {
        const here = [...live].filter((e) => isInside(e.workspace, path) && !e.taken?.has(path));
        const ended = here.filter((e) => e.ending !== undefined).sort((a, b) => (a.endSeq ?? 0) - (b.endSeq ?? 0));
        for (const entry of ended) {
          // A failure leaves the change to the command's own record (the writer is not refused for it).
          const all = await entry.ending?.catch(() => undefined);
          const change = all?.changes.find((c) => c.path === path);
          if (!change || entry.taken?.has(path)) continue;
          take(entry, path);
          const diff = { changes: [change], reportedOnly: [], ...sharedOf(all?.sharedWith, path) };
          await recordDiff(entry, diff, true, true).catch(() => undefined);
        }
        if (!running) continue;
        // The oldest open mark of a root saw every change a newer one did, and taking it rebases them all.
        const roots = new Set<string>();
        const open = here
          .filter((e) => e.ending === undefined)
          .sort((a, b) => b.before.root.length - a.before.root.length);
        for (const entry of open) {
          if (entry.ending || roots.has(entry.before.root)) continue;
          roots.add(entry.before.root);
          const diff = await tracker.takeSoFar(entry.before, path).catch(() => undefined);
          if (diff && diff.changes.length > 0) await recordDiff(entry, diff, true, false).catch(() => undefined);
        }
      }
    },
  };
}

/** The agents that shared `path`'s change, as a diff's `sharedWith` of that path alone. */
function sharedOf(shared: SnapshotDiff['sharedWith'], path: string): Pick<SnapshotDiff, 'sharedWith'> {
  const agents = shared?.[path];
  return agents ? { sharedWith: { [path]: agents } } : {};
}

/** A command whose file changes the log refused: it ran (not to be run again), and its changes reach review later. */
export function shellNotRecorded(err: unknown, paths: readonly string[]): RuntimeError {
  const info = toErrorInfo(err);
  const why = reasonOf(err);
  const named = paths.slice(0, 5).join(', ') + (paths.length > 5 ? ` and ${paths.length - 5} more` : '');
  return new RuntimeError(
    info.code as ErrorCode,
    `The command ran, but the files it changed (${named}) could not be recorded in the action log: ${why}. ` +
      'They stay on disk and reach review once the log can be written; do not run the command again ' +
      '(terminal.read shows its output).',
    { retryable: false, details: { ran: true, unrecorded: paths.slice(0, 100) } },
  );
}
