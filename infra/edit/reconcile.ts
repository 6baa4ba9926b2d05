/**
 * @module
 * At start, before commands are served: every edit session the log leaves open (the previous host died
 * between `edit.started` and its outcome) is closed with `edit.abandoned`, saying what the disk holds. When
 * the write's intent (`edit.writing`) is there, the file is compared with the base and intended hashes; a
 * file that differs from its base is recorded in the agent's action log (so review shows it and reject can
 * restore the base, kept in the blob store before the write), and temp files the atomic write left beside
 * it are removed.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { parseEventSubject, type AgentId, type EditId, type StoredFact } from '../../schemas/index.ts';
import type { EditAggregateContext } from '../../machines/edit/edit-aggregate.ts';
import { readConfined, removeStaleTemps } from '../../actors/common/confined-fs.ts';
import type { AgentDirectory } from '../../actors/agent/agent-directory.ts';
import type { Host } from '../kernel/host.ts';
import type { ReviewRecorder } from '../review/wiring.ts';

type Disk = 'not_written' | 'unchanged' | 'written' | 'changed' | 'unreadable';

type Applied = { agentId: AgentId; editId: string; path: string; mode: 'edit' | 'write'; baseHash: string | null };

/**
 * Read back at start: the last `edit.applied` of each path and the edits the action log recorded. A host killed
 * between `edit.applied` and its action-log record leaves a change review would not show. So does one killed
 * before the retry of a change an edit wrote and could not record (`edit.failed` after its `edit.writing`,
 * counting edits applied): it counts as applied too.
 */
export class AppliedEdits {
  readonly #lastByPath = new Map<string, Applied>();
  readonly #recorded = new Set<string>();
  /** `edit.writing` of each edit: what a later `edit.failed` that says it wrote had begun. */
  readonly #writing = new Map<string, { path: string; baseHash: string | null }>();
  /** A failed edit's agent and command id → its edit id; and the agent-and-id of each recorded change. */
  readonly #aliases = new Map<string, string>();
  readonly #recordedBy = new Set<string>();

  see(fact: StoredFact): void {
    const d = fact.data as Record<string, unknown>;
    if (fact.type === 'edit.writing') {
      this.#writing.set(String(d['editId']), { path: String(d['path']), baseHash: (d['baseHash'] as string) ?? null });
    } else if (fact.type === 'edit.failed') {
      const editId = String(d['editId']);
      const began = this.#writing.get(editId);
      this.#writing.delete(editId);
      // Recorded under the command's id by an older runtime's retry: counted as the edit's too.
      if (fact.causationId) this.#aliases.set(`${fact.agentId}\u0000${fact.causationId}`, editId);
      if (began && Number(d['appliedCount'] ?? 0) > 0) {
        this.#lastByPath.set(began.path, {
          agentId: fact.agentId as AgentId,
          editId,
          path: began.path,
          mode: 'edit',
          baseHash: began.baseHash,
        });
      }
    } else if (fact.type === 'edit.applied') {
      this.#writing.delete(String(d['editId']));
      const path = String(d['path']);
      // Same bytes before and after: nothing was written, and the action log records nothing for it.
      if (d['baseHash'] === d['resultHash']) return;
      this.#lastByPath.set(path, {
        agentId: fact.agentId as AgentId,
        editId: String(d['editId']),
        path,
        mode: d['mode'] === 'write' ? 'write' : 'edit',
        baseHash: (d['baseHash'] as string | null) ?? null,
      });
    } else if (fact.type === 'action-log.change.recorded') {
      const editId = (d['source'] as { editId?: string } | undefined)?.editId;
      if (editId) {
        this.#recorded.add(editId);
        this.#recordedBy.add(`${String(d['agentId'])}\u0000${editId}`);
      }
    }
  }

  /** The last applied edit of each path whose change the action log never recorded; then forgets everything. */
  take(): Applied[] {
    for (const [key, editId] of this.#aliases) if (this.#recordedBy.has(key)) this.#recorded.add(editId);
    const out = [...this.#lastByPath.values()].filter((a) => !this.#recorded.has(a.editId));
    this.#lastByPath.clear();
    this.#recorded.clear();
    this.#writing.clear();
    this.#aliases.clear();
    this.#recordedBy.clear();
    return out;
  }
}

export async function reconcileEdits(deps: {
  host: Host;
  directory: AgentDirectory;
  review: ReviewRecorder;
  logger: Logger;
  maxFileBytes: number;
  applied: AppliedEdits;
}): Promise<number> {
  let closed = 0;
  for (const a of deps.applied.take()) {
    if (!deps.host.owns(a.agentId)) continue;
    // Applied, never recorded: review gets the change from the stored base to what the disk holds now.
    const roots = [deps.directory.view(a.agentId)?.workspace ?? ''].filter(Boolean);
    const file = await readConfined(roots, a.path, deps.maxFileBytes).catch(() => null);
    if (file === null) continue;
    const recorded = await recordFound(deps, { ...a, after: file ? file.bytes.toString('utf8') : null });
    deps.logger.info({ editId: a.editId, path: a.path, recorded }, 'applied edit missing from the action log');
  }
  for (const subject of [...deps.host.subjects()]) {
    const parts = parseEventSubject(subject);
    if (parts?.aggregate !== 'edit') continue;
    const state = deps.host.state(subject);
    const c = state?.context as EditAggregateContext | undefined;
    if (state?.value !== 'matching' || !c?.editId || !c.path) continue;
    const agentId = parts.agentId as AgentId;
    // Another named host's edit session is alive there.
    if (!deps.host.owns(agentId)) continue;
    const view = deps.directory.view(agentId);
    const roots = view ? [view.workspace] : [];
    let disk: Disk = 'not_written';
    let diskHash: string | null = null;
    let recorded = false;
    let tempFilesRemoved = 0;
    if (c.intent) {
      const found = await readConfined(roots, c.path, deps.maxFileBytes).then(
        (file) => ({ file }),
        () => undefined,
      );
      if (!found) disk = 'unreadable';
      else {
        diskHash = found.file ? sha256(found.file.bytes) : null;
        disk = diskHash === c.intent.baseHash ? 'unchanged' : diskHash === c.intent.resultHash ? 'written' : 'changed';
        if (disk !== 'unchanged') {
          recorded = await recordFound(deps, {
            agentId,
            editId: c.editId,
            path: c.path,
            mode: c.mode ?? 'edit',
            baseHash: c.intent.baseHash,
            after: found.file ? found.file.bytes.toString('utf8') : null,
          });
        }
      }
      tempFilesRemoved = await removeStaleTemps(roots, c.path).catch(() => 0);
    }
    await deps.host.emit(
      {
        type: 'edit.abandoned',
        data: {
          editId: c.editId as EditId,
          path: c.path,
          reason: 'host_restarted',
          disk,
          diskHash,
          recorded,
          tempFilesRemoved,
        },
      },
      { agentId },
    );
    deps.logger.info({ editId: c.editId, path: c.path, disk, recorded, tempFilesRemoved }, 'abandoned edit closed');
    closed++;
  }
  return closed;
}

/** Records what the disk holds against the base as the agent's change; false when the base is not kept. */
async function recordFound(
  deps: { review: ReviewRecorder; logger: Logger },
  found: {
    agentId: AgentId;
    editId: string;
    path: string;
    mode: 'edit' | 'write';
    baseHash: string | null;
    after: string | null;
  },
): Promise<boolean> {
  const base = found.baseHash === null ? null : await deps.review.service.blobs.getBytes(found.baseHash);
  if (base === undefined) {
    deps.logger.warn({ path: found.path, baseHash: found.baseHash }, 'base of an abandoned edit not in the blob store');
    return false;
  }
  await deps.review.record({
    agentId: found.agentId,
    path: found.path,
    before: base === null ? null : base.toString('utf8'),
    after: found.after,
    source: { kind: found.mode, editId: found.editId as EditId },
  });
  return true;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
