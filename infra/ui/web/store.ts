/**
 * @module
 * What the agent tree, approvals and review views show, fetched with the
 * root's read commands (`agent.tree`, `agent.get`, `permission.pending`,
 * `review.list`) and refetched shortly after any fact that may change it.
 */
import type { ConsoleBus } from './bus.ts';

export type AgentRow = {
  agentId: string;
  parentId: string | null;
  label: string;
  status: string;
  depth: number;
  workspace: string;
  task?: string;
};
export type Ask = {
  requestId: string;
  agentId: string;
  /** The agent's ancestors, nearest first. */
  ancestors?: string[];
  tool: string;
  /** What the gate judged: the command line, the typed line or the path. */
  input: string;
  subCommands: string[];
  reason: string;
  options: Array<{ id: string; label: string; decision: string; pattern?: string }>;
  deadline: string;
  /** A write's content or an edit's old/new text: shown, not judged. */
  detail?: string;
};
export type Hunk = {
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
};
export type ReviewFile = {
  path: string;
  status: string;
  agents: string[];
  /** The content the listing shows (null: deleted): what an Accept of the file sends as seen. */
  currentHash: string | null;
  diff: string;
  hunks: Hunk[];
  /** Too big for a plain listing: `diff` says why, `hunks` is empty (review.list with `full` has it). */
  diffLeftOut?: true;
  /** The diff came in parts (`diffPart`); the store joins them into one entry. */
  diffPart?: { start: number; end: number; total: number };
  /** The hunks' lines are left out: each is the lines of its @@ section in `diff`. */
  hunkLinesLeftOut?: true;
};
export type Snapshot = {
  agents: AgentRow[];
  asks: Ask[];
  /** Whose action log the review shows (its own and its subtree's changes). */
  reviewAgent: string;
  files: ReviewFile[];
  undoAvailable: boolean;
  /** The root's files (the whole tree), for the per-agent counts. */
  allFiles: ReviewFile[];
};

const REFRESH_DELAY_MS = 150;
const MAX_REVIEW_PAGES = 20;

/** What a refresh refetches: the tree (with each agent's task), the pending asks, the review. */
export type Part = 'tree' | 'asks' | 'review';
const ALL_PARTS: readonly Part[] = ['tree', 'asks', 'review'];

/**
 * The parts a fact can change, by its type: an agent's facts the tree, the gate's the asks, file changes and
 * reviews the review; a terminal's none (its panel follows it itself). An agent that sends cheap facts in a
 * stream (resizes) then costs no refetch at all: each refetch of a big review downloaded megabytes and
 * rebuilt the page (the console review of 3 December).
 */
export function partsOf(type: string): readonly Part[] {
  if (type.startsWith('terminal.')) return [];
  if (type.startsWith('agent.')) return ['tree', 'asks', 'review'];
  if (type.startsWith('permission.')) return ['asks'];
  if (type.startsWith('action-log.') || type.startsWith('review.') || type.startsWith('edit.')) return ['review'];
  return ALL_PARTS;
}

export class Store {
  snapshot: Snapshot;
  #reviewAgent: string;
  readonly #bus: ConsoleBus;
  readonly #listeners: Array<(s: Snapshot) => void> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  /** Parts to refetch at the next refresh. */
  readonly #dirty = new Set<Part>(ALL_PARTS);
  /** Files of the reviewed log the operator asked to see in full. */
  readonly #fullPaths = new Set<string>();
  onError: (err: Error) => void = () => undefined;

  constructor(bus: ConsoleBus) {
    this.#bus = bus;
    this.#reviewAgent = bus.root;
    this.snapshot = { agents: [], asks: [], reviewAgent: bus.root, files: [], undoAvailable: false, allFiles: [] };
  }

  /** Reviews `agentId`'s log (its subtree's changes) from now on. */
  reviewOf(agentId: string): void {
    this.#reviewAgent = agentId;
    this.#fullPaths.clear();
    void this.refresh(['review']);
  }

  /** Lists `path` with its whole diff from now on (a file too big for the plain listing: `diffLeftOut`). */
  loadFull(path: string): void {
    this.#fullPaths.add(path);
    void this.refresh(['review']);
  }

  subscribe(fn: (s: Snapshot) => void): void {
    this.#listeners.push(fn);
    fn(this.snapshot);
  }

  /** Refetches `parts` soon; bursts of facts cost one fetch. */
  refreshSoon(parts: readonly Part[] = ALL_PARTS): void {
    for (const part of parts) this.#dirty.add(part);
    if (this.#timer || this.#dirty.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.refresh([]);
    }, REFRESH_DELAY_MS);
  }

  /** Refetches `parts` and whatever facts have marked since the last refresh. */
  async refresh(parts: readonly Part[] = ALL_PARTS): Promise<void> {
    for (const part of parts) this.#dirty.add(part);
    if (this.#running) return this.#running.then(() => (this.#dirty.size > 0 ? this.refresh([]) : undefined));
    if (this.#dirty.size === 0) return;
    const dirty = new Set(this.#dirty);
    this.#dirty.clear();
    this.#running = this.#fetch(dirty)
      .then((snapshot) => {
        this.snapshot = snapshot;
        for (const fn of this.#listeners) fn(snapshot);
      })
      .catch((err: Error) => {
        for (const part of dirty) this.#dirty.add(part);
        this.onError(err);
      })
      .finally(() => {
        this.#running = undefined;
        if (this.#dirty.size > 0) this.refreshSoon([]);
      });
    return this.#running;
  }

  async #fetch(dirty: ReadonlySet<Part>): Promise<Snapshot> {
    const root = this.#bus.root;
    const reviewAgent = this.#reviewAgent;
    const old = this.snapshot;
    const [agents, asks, review] = await Promise.all([
      dirty.has('tree') ? this.#agents() : old.agents,
      dirty.has('asks') ? this.#bus.call(root, 'permission.pending').then((p) => p['requests'] as Ask[]) : old.asks,
      dirty.has('review') || reviewAgent !== old.reviewAgent
        ? this.#reviews(reviewAgent)
        : { files: old.files, undoAvailable: old.undoAvailable, allFiles: old.allFiles },
    ]);
    return { agents, asks, reviewAgent, ...review };
  }

  async #agents(): Promise<AgentRow[]> {
    const tree = await this.#bus.call(this.#bus.root, 'agent.tree');
    const agents = tree['agents'] as AgentRow[];
    await Promise.all(
      agents.map(async (a) => {
        const got = await this.#bus.call(a.agentId, 'agent.get').catch(() => undefined);
        if (typeof got?.['task'] === 'string') a.task = got['task'];
      }),
    );
    return agents;
  }

  async #reviews(reviewAgent: string): Promise<Pick<Snapshot, 'files' | 'undoAvailable' | 'allFiles'>> {
    const root = this.#bus.root;
    const [all, review] = await Promise.all([
      this.#review(root),
      reviewAgent === root ? undefined : this.#review(reviewAgent),
    ]);
    const shown = review ?? all;
    // Only files still listed: review.list refuses a path that is no longer in the log (accepted, rejected).
    for (const path of this.#fullPaths) if (!shown.files.some((f) => f.path === path)) this.#fullPaths.delete(path);
    if (this.#fullPaths.size > 0) {
      const full = await this.#review(reviewAgent, { paths: [...this.#fullPaths], full: true });
      const byPath = new Map(full.files.map((f) => [f.path, f]));
      shown.files = shown.files.map((f) => byPath.get(f.path) ?? f);
    }
    return { ...shown, allFiles: all.files };
  }

  async #review(
    agentId: string,
    query: { paths?: string[]; full?: boolean } = {},
  ): Promise<{ files: ReviewFile[]; undoAvailable: boolean }> {
    const files: ReviewFile[] = [];
    let cursor: string | undefined;
    let undoAvailable = false;
    for (let page = 0; page < MAX_REVIEW_PAGES; page++) {
      const reply = await this.#bus.call(agentId, 'review.list', cursor ? { ...query, cursor } : query);
      for (const file of reply['files'] as ReviewFile[]) {
        // A diff too big for one message comes in parts of the same path: one entry, the last part's hunks.
        const last = files[files.length - 1];
        // Everything else from the latest part too: only the last one says its hunks' lines are left out
        // (hunkLinesLeftOut), and without it the page drew empty hunks whose Accept was on.
        if (file.diffPart && file.diffPart.start > 0 && last?.path === file.path) {
          files[files.length - 1] = { ...file, diff: last.diff + file.diff };
        } else files.push(file);
      }
      undoAvailable = reply['undoAvailable'] === true;
      cursor = reply['nextCursor'] as string | undefined;
      if (!cursor) break;
    }
    return { files, undoAvailable };
  }
}
