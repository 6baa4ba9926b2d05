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

export class Store {
  snapshot: Snapshot;
  #reviewAgent: string;
  readonly #bus: ConsoleBus;
  readonly #listeners: Array<(s: Snapshot) => void> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  #again = false;
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
    void this.refresh();
  }

  /** Lists `path` with its whole diff from now on (a file too big for the plain listing: `diffLeftOut`). */
  loadFull(path: string): void {
    this.#fullPaths.add(path);
    void this.refresh();
  }

  subscribe(fn: (s: Snapshot) => void): void {
    this.#listeners.push(fn);
    fn(this.snapshot);
  }

  /** Refetches soon; bursts of facts cost one fetch. */
  refreshSoon(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.refresh();
    }, REFRESH_DELAY_MS);
  }

  async refresh(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#fetch()
      .then((snapshot) => {
        this.snapshot = snapshot;
        for (const fn of this.#listeners) fn(snapshot);
      })
      .catch((err: Error) => this.onError(err))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          void this.refresh();
        }
      });
    return this.#running;
  }

  async #fetch(): Promise<Snapshot> {
    const root = this.#bus.root;
    const reviewAgent = this.#reviewAgent;
    const [tree, pending, all, review] = await Promise.all([
      this.#bus.call(root, 'agent.tree'),
      this.#bus.call(root, 'permission.pending'),
      this.#review(root),
      reviewAgent === root ? undefined : this.#review(reviewAgent),
    ]);
    const shown = review ?? all;
    if (this.#fullPaths.size > 0) {
      const full = await this.#review(reviewAgent, { paths: [...this.#fullPaths], full: true });
      const byPath = new Map(full.files.map((f) => [f.path, f]));
      shown.files = shown.files.map((f) => byPath.get(f.path) ?? f);
    }
    const agents = tree['agents'] as AgentRow[];
    await Promise.all(
      agents.map(async (a) => {
        const got = await this.#bus.call(a.agentId, 'agent.get').catch(() => undefined);
        if (typeof got?.['task'] === 'string') a.task = got['task'];
      }),
    );
    return { agents, asks: pending['requests'] as Ask[], reviewAgent, ...shown, allFiles: all.files };
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
        if (file.diffPart && file.diffPart.start > 0 && last?.path === file.path) {
          last.diff += file.diff;
          last.hunks = file.hunks;
          last.diffPart = file.diffPart;
        } else files.push(file);
      }
      undoAvailable = reply['undoAvailable'] === true;
      cursor = reply['nextCursor'] as string | undefined;
      if (!cursor) break;
    }
    return { files, undoAvailable };
  }
}
