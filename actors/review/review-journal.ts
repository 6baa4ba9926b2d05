/**
 * @module
 * The journal of review writes in flight: before a reject or undo-reject appends its fact, it writes (and syncs)
 * `<data>/review-journal/<fact id>.json` naming each file it is about to write, with the content hashes before
 * and after; once the files are in place the entry is removed. A host killed between the append and the renames
 * leaves the entry: at the next start, if the fact is in the log, each file still holding its "before" content
 * is given its "after" content (from the blob store) and the entry goes; if the fact is not in the log, nothing
 * happened, and only the temp files are removed. A file that holds neither was changed by someone else since:
 * it is left, and said so.
 */
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { removeStaleTemps } from '../common/confined-fs.ts';
import { writeFileAtomic } from '../common/atomic-write.ts';
import { type FileWrite, fact } from '../../machines/review/action-log-plan.ts';
import type { UnstampedFact } from '../../schemas/message.ts';
import type { LogEntry } from '../../schemas/review.ts';
import { applyWrites, readDisk } from './action-log-files.ts';
import { type BlobStore, contentHash } from './blob-store.ts';

/**
 * One file of a review in flight: its content hash when planned, and the one the review gives it (null: none);
 * `mode`: the permission bits a file it creates gets (an undo's of a created file).
 */
export type JournalWrite = { path: string; before: string | null; after: string | null; mode?: number };
/**
 * `rest`: the other logs' facts the review appends after its files (a sub-agent's log reverted with them);
 * `giveBack`: an undo's, the entries its logs had for the files it creates (`GiveBack`).
 */
export type JournalEntry = {
  factId: string;
  writes: JournalWrite[];
  rest?: UnstampedFact[];
  giveBack?: GiveBack[];
  /** Files it was to create that its commit left alone (one was made there): written once the commit knows. */
  leftAlone?: string[];
  /** Its append failed and its staged files were discarded: a file at a path it creates is someone else's. */
  discarded?: boolean;
};

/**
 * The entry `agentId`'s log had for `path` before an undo by `by` that creates the file: given back (an
 * `action-log.files.updated`) when the undo leaves that file alone, one made at the path while it committed, so
 * that no log lists the agent's content over it.
 */
export type GiveBack = {
  agentId: string;
  by: string;
  path: string;
  entry: LogEntry | null;
  /** The entry the undo set: given back only where the log still holds it (nothing changed it since). */
  set: LogEntry | null;
};

/**
 * The facts giving back the entries of the files left alone, with ids that follow the review's `rest`
 * (`<fact id>/<n>`, n from `from`): a start that finds some stored appends only the others.
 */
export function givenBack(
  factId: string,
  from: number,
  giveBack: readonly GiveBack[],
  leftAlone: readonly string[],
  keep: (g: GiveBack) => boolean = () => true,
): Array<{ fact: UnstampedFact; id: string }> {
  return giveBack.flatMap((g, i) => {
    if (!leftAlone.includes(g.path) || !keep(g)) return [];
    const data = { agentId: g.agentId, by: g.by, cause: 'undo-reject', files: [{ path: g.path, entry: g.entry }] };
    return [{ fact: fact('action-log.files.updated', g.agentId, data), id: restId(factId, from + i) }];
  });
}

const ID = /^[A-Za-z0-9_.:/-]{1,200}$/;

export class ReviewJournal {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  #file(factId: string): string {
    return join(this.dir, `${encodeURIComponent(factId)}.json`);
  }

  /** Records a review about to append `factId` and then write: synced, so it outlives a kill. */
  async open(entry: JournalEntry): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.#file(entry.factId), JSON.stringify(entry), 0o600);
  }

  /** The review's files are in place, or it never happened: its entry goes (a lost unlink only re-checks). */
  async close(factId: string): Promise<void> {
    await unlink(this.#file(factId)).catch(() => undefined);
  }

  /** Entries a killed host left; an unreadable one is logged and skipped (left for a person to look at). */
  async pending(logger?: Logger): Promise<JournalEntry[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const out: JournalEntry[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        out.push(await readEntry(join(this.dir, name)));
      } catch (err) {
        logger?.warn({ err, file: join(this.dir, name) }, 'a review journal entry cannot be read; left as it is');
      }
    }
    return out;
  }

  /** The entry of `factId`; undefined when there is none (finished already, or never opened). */
  async entry(factId: string): Promise<JournalEntry | undefined> {
    return readEntry(this.#file(factId)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
  }
}

async function readEntry(file: string): Promise<JournalEntry> {
  const entry = JSON.parse(await readFile(file, 'utf8')) as JournalEntry;
  if (typeof entry.factId !== 'string' || !ID.test(entry.factId) || !Array.isArray(entry.writes)) {
    throw new Error('not a journal entry');
  }
  return entry;
}

/**
 * Opens the entry of a review about to append `factId`: the new contents kept by hash (what a redo writes; a
 * deletion needs none), then each file's hash now and the one it gets. `stored(dir)` turns a failed write
 * there into the error the caller sees.
 */
export async function beginEntry(
  journal: ReviewJournal,
  factId: string,
  writes: readonly FileWrite[],
  rest: readonly UnstampedFact[],
  giveBack: readonly GiveBack[],
  deps: {
    blobs: BlobStore;
    roots: readonly string[] | undefined;
    max: number | undefined;
    stored: (dir: string) => (err: unknown) => never;
  },
): Promise<JournalEntry> {
  for (const w of writes) if (w.content !== null) await deps.blobs.put(w.content).catch(deps.stored(deps.blobs.dir));
  const entry: JournalEntry = { factId, writes: await journalWrites(writes, deps.roots, deps.max), rest: [...rest] };
  if (giveBack.length > 0) entry.giveBack = [...giveBack];
  await journal.open(entry).catch(deps.stored(journal.dir));
  return entry;
}

/** The journal's writes of a plan: each file's hash on disk now (under the path lock) and the one it gets. */
async function journalWrites(
  writes: readonly FileWrite[],
  roots: readonly string[] | undefined,
  maxReadBytes: number | undefined,
): Promise<JournalWrite[]> {
  const disk = await readDisk(
    writes.map((w) => w.path),
    roots,
    maxReadBytes,
  );
  return writes.map((w) => ({
    path: w.path,
    before: disk[w.path] == null ? null : contentHash(disk[w.path]!),
    after: w.content === null ? null : contentHash(w.content),
    ...(w.mode === undefined ? {} : { mode: w.mode }),
  }));
}

/** What finishing journal entries takes (`finishJournal`, `finishStored`). */
export type JournalDeps = {
  journal: ReviewJournal;
  seqOf: (factId: string) => number | undefined;
  touchedAt: (path: string) => number | undefined;
  /** Appends (and folds) the entry's other facts, when its own is in the log and nothing touched them since. */
  append: (facts: ReadonlyArray<{ fact: UnstampedFact; id: string }>) => Promise<void>;
  blobs: BlobStore;
  roots: readonly string[] | undefined;
  maxReadBytes?: number | undefined;
  logger: Logger;
  /** What a log holds for a path now (the fold so far): a give-back is only made over what the undo set. */
  entryOf: (logId: string, path: string) => LogEntry | null;
};

/**
 * Finishes what the entries a killed host (or a failed append) left: see the module doc. `seqOf` gives the log
 * sequence of a fact id read back at this start (undefined: not in the log), `touchedAt` the sequence of the last
 * fact that changed a path's review. A file a later fact touched is left: the log has moved past the entry (an
 * undo since put back the content the entry calls "before"). An entry that cannot be finished (its file's disk
 * full, a blob missing) is logged and kept for the next start; the runtime starts. Returns the files written.
 */
export async function finishJournal(deps: JournalDeps): Promise<number> {
  let finished = 0;
  for (const entry of await deps.journal.pending(deps.logger)) {
    try {
      finished += await finishEntry(deps, entry);
    } catch (err) {
      deps.logger.error(
        { err, factId: entry.factId, paths: entry.writes.map((w) => w.path) },
        'a review cut short could not be finished; it is tried again at the next start',
      );
      continue;
    }
    await deps.journal.close(entry.factId);
  }
  return finished;
}

/**
 * Finishes the entry of one review whose fact the log was found to hold at `seq` after its append had failed in
 * doubt (the fact writer's re-read, while serving): as a start would, then the entry goes. Returns the files
 * written; a failure throws and keeps the entry for the next start. The caller holds the entry's path locks.
 */
export async function finishStored(deps: Omit<JournalDeps, 'seqOf'>, factId: string, seq: number): Promise<number> {
  const entry = await deps.journal.entry(factId);
  if (!entry) return 0;
  // Its append failed in doubt, so its staged files were discarded: nothing it creates is on disk but by others.
  const seqOf = (id: string) => (id === factId ? seq : undefined);
  const written = await finishEntry({ ...deps, seqOf }, entry, true);
  await deps.journal.close(factId);
  return written;
}

/**
 * `inDoubt` (or the entry's `discarded`): the review's files were never put in place (its append failed): a file at
 * a path it creates is someone else's. Else (a start after a kill) only the paths its commit recorded as left
 * alone are.
 */
async function finishEntry(deps: JournalDeps, entry: JournalEntry, inDoubt = false): Promise<number> {
  const neverCommitted = inDoubt || entry.discarded === true;
  const seq = deps.seqOf(entry.factId);
  const paths = entry.writes.map((w) => w.path);
  const redo: FileWrite[] = [];
  /** Files it was to create that it left alone (one made there), and those of them the redo found taken. */
  const leftAlone: string[] = [];
  let linked: string[] = [];
  const recorded = new Set(
    (Array.isArray(entry.leftAlone) ? entry.leftAlone : []).filter((p) => typeof p === 'string'),
  );
  // First the temps a killed host left: one linked in as a new file and not yet removed is a second link to it,
  // and every confined read refuses a file with other links (this entry's read too, at every start).
  for (const path of paths) {
    if (deps.roots) await removeStaleTemps(deps.roots, path).catch(() => 0);
  }
  if (seq !== undefined) {
    const disk = await readDisk(paths, deps.roots, deps.maxReadBytes);
    for (const w of entry.writes) {
      const now = disk[w.path] == null ? null : contentHash(disk[w.path]!);
      if (now === w.after) continue;
      if (now !== w.before || (deps.touchedAt(w.path) ?? 0) > seq) {
        // A file it was to create, made there by someone else: left alone. (At a start, one its commit did not
        // record as left alone may be its own, linked in and edited since: its entry stays.)
        const creates = w.before === null && w.after !== null;
        if (creates && (neverCommitted || recorded.has(w.path))) leftAlone.push(w.path);
        deps.logger.warn(
          { path: w.path, factId: entry.factId },
          'a review cut short: the file or its review changed since, so it is left as it is',
        );
        continue;
      }
      const content = w.after === null ? null : await deps.blobs.require(w.after, `review content of '${w.path}'`);
      const mode = typeof w.mode === 'number' && Number.isInteger(w.mode) ? w.mode & 0o7777 : undefined;
      // A file it creates (none was there) is linked in, never put over one made there since (action-log-files.ts).
      const from = w.before === null ? { from: null } : {};
      redo.push({ path: w.path, content, ...from, ...(mode === undefined ? {} : { mode }) });
    }
    // From here its files may be in place: a later finish must not take them for another's.
    if (entry.discarded && redo.length > 0) await deps.journal.open({ ...entry, discarded: false });
    linked = redo.length > 0 ? await applyWrites(redo, deps.roots) : [];
    leftAlone.push(...linked);
    for (const path of linked) {
      deps.logger.warn(
        { path, factId: entry.factId },
        'a review cut short: a file was made at the path it creates since, so that file is kept',
      );
    }
    // The other logs' facts (ids `<fact id>/<n>`) may be stored in part: the rest are appended, unless a fact
    // other than these touched one of their paths since.
    const rest = (entry.rest ?? []).map((fact, n) => ({ fact, id: restId(entry.factId, n) }));
    const ours = new Set(rest.map((r) => deps.seqOf(r.id)).filter((s) => s !== undefined));
    const moved = rest.some((r) =>
      ((r.fact.data as { files?: Array<{ path: string }> }).files ?? []).some((x) => {
        const at = deps.touchedAt(x.path) ?? 0;
        return at > seq && !ours.has(at);
      }),
    );
    if (!moved) await deps.append(rest.filter((r) => deps.seqOf(r.id) === undefined));
    else deps.logger.warn({ factId: entry.factId }, 'a review cut short: other logs moved on since; not updated');
    // The logs' entries of the files it left alone, given back to each log that still holds the entry the undo
    // set (a later record of its own, or of a descendant, changed it: that stays).
    const giveBack = Array.isArray(entry.giveBack) ? entry.giveBack : [];
    const untouched = (g: GiveBack) => g.set !== undefined && sameEntry(deps.entryOf(g.agentId, g.path), g.set);
    const back = givenBack(entry.factId, rest.length, giveBack, leftAlone, untouched);
    await deps.append(back.filter((b) => deps.seqOf(b.id) === undefined));
    deps.logger.info(
      { factId: entry.factId, files: redo.length },
      'a review cut short (a stop, or an append in doubt) is finished',
    );
  }
  return redo.length - linked.length;
}

/** The fact id of a review's `n`th other-log fact (so a start can tell which of them are stored). */
export function restId(factId: string, n: number): string {
  return `${factId}/${n}`;
}

function sameEntry(a: LogEntry | null, b: LogEntry | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.status === b.status &&
    a.baseHash === b.baseHash &&
    a.currentHash === b.currentHash &&
    a.agents.length === b.agents.length &&
    a.agents.every((x, i) => x === b.agents[i])
  );
}
