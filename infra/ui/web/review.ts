/**
 * @module
 * Review of the root's action log (its subtree's changes): per file and per
 * hunk diffs with **Accept** and **Reject** for a hunk, a file or all, and
 * **Undo reject** for the last rejection.
 */
import type { ConsoleBus } from './bus.ts';
import { appendAll, fill, h } from './dom.ts';
import type { ReviewFile, Snapshot } from './store.ts';

export type ReviewAction = {
  verb: 'accept' | 'reject';
  data: { paths?: string[]; hunkIds?: string[]; seen?: Record<string, string | null> };
};

/**
 * What Accept sends for whole files: their paths, and the content the page shows of each (`seen`), so a file an
 * agent changed after the page was drawn is refused by the host, never accepted unseen.
 */
export function acceptFiles(files: readonly ReviewFile[]): ReviewAction['data'] {
  return { paths: files.map((f) => f.path), seen: Object.fromEntries(files.map((f) => [f.path, f.currentHash])) };
}

/**
 * Whether the page shows `file`'s whole diff: not a file left out of the plain listing for its size
 * (`diffLeftOut`), nor one whose diff parts did not all come. Only a shown file can be accepted here: an agent
 * could otherwise slip a line into a big file that the operator accepts unseen.
 */
export function diffShown(file: ReviewFile): boolean {
  return !file.diffLeftOut && (file.diffPart === undefined || file.diffPart.end >= file.diffPart.total);
}

export function renderReview(
  el: HTMLElement,
  snapshot: Snapshot,
  act: (a: ReviewAction | 'undo') => void,
  choose: (agentId: string) => void,
  load: (path: string) => void = () => undefined,
) {
  const scope = h(
    'select',
    { 'aria-label': 'Review changes of', onchange: (e) => choose((e.target as HTMLSelectElement).value) },
    ...snapshot.agents.map((a) =>
      h('option', { value: a.agentId, selected: a.agentId === snapshot.reviewAgent }, `${a.agentId} and its subtree`),
    ),
  );
  /** `accept`: what Accept sends, or null when it is off (a diff not shown); the same as Reject's by default. */
  const both = (label: string, data: ReviewAction['data'], accept: ReviewAction['data'] | null = data) =>
    h(
      'div',
      { role: 'group', 'aria-label': label, class: 'review-actions' },
      h(
        'button',
        {
          type: 'button',
          disabled: accept === null,
          title: accept === null ? 'Load the diff first: it is not shown' : undefined,
          onclick: () => accept && act({ verb: 'accept', data: accept }),
        },
        'Accept',
      ),
      h('button', { type: 'button', onclick: () => act({ verb: 'reject', data }) }, 'Reject'),
    );
  // "Accept" of all changes names the files whose diffs are on the page: never one not shown, nor one listed
  // after the page was drawn.
  const shown = snapshot.files.filter(diffShown);
  fill(
    el,
    h(
      'div',
      { class: 'review-all' },
      h('label', {}, 'Changes of ', scope),
      snapshot.files.length > 0
        ? both('all changes', {}, shown.length > 0 ? acceptFiles(shown) : null)
        : h('p', { class: 'empty' }, 'No changes to review.'),
      h(
        'button',
        {
          type: 'button',
          disabled: !snapshot.undoAvailable,
          title: 'Re-applies what the last Reject of all changes removed',
          onclick: () => act('undo'),
        },
        'Undo reject',
      ),
    ),
  );
  // Appended one by one, never spread into a call (`appendAll`): a review of 130,000 files or hunks would
  // overflow the stack.
  appendAll(
    el,
    snapshot.files.map((file) =>
      withAll(
        h(
          'section',
          { class: 'file', 'aria-label': `file ${file.path}` },
          h('h3', {}, h('span', { class: `badge file-${file.status}` }, file.status), ` ${file.path} `, agents(file)),
          both(`file ${file.path}`, { paths: [file.path] }, diffShown(file) ? acceptFiles([file]) : null),
        ),
        diffShown(file) ? hunks(file, both) : leftOut(file, load),
      ),
    ),
  );
}

/** Runs a review command on `agentId`'s log and reports the outcome in words. */
export async function runReview(bus: ConsoleBus, agentId: string, action: ReviewAction | 'undo'): Promise<string> {
  if (action === 'undo') {
    await bus.call(agentId, 'review.undo-reject');
    return 'The last rejection was undone.';
  }
  const reply = await bus.call(agentId, `review.${action.verb}`, action.data);
  const conflicts = (reply['conflicts'] as unknown[] | undefined)?.length ?? 0;
  const done = action.verb === 'accept' ? 'Accepted' : 'Rejected';
  return conflicts ? `${done} (${conflicts} conflicts left alone).` : `${done}.`;
}

type Both = (label: string, data: ReviewAction['data'], accept?: ReviewAction['data'] | null) => HTMLElement;

/** Each hunk with its diff lines and buttons; the whole diff first when the hunks' lines were left out. */
function hunks(file: ReviewFile, both: Both): HTMLElement[] {
  const whole = file.hunkLinesLeftOut || (file.hunks.length === 0 && file.diff !== '');
  const shownHunks = file.hunks.map((hunk) =>
    h(
      'div',
      { class: 'hunk', role: 'group', 'aria-label': `hunk ${hunkHeader(hunk)} of ${file.path}` },
      withAll(
        h('pre', { class: 'diff' }, h('span', { class: 'hunk-head' }, hunkHeader(hunk))),
        whole ? [] : hunk.lines.map(line),
      ),
      // Accept names the file's content too: a hunk id is its lines, not where they are.
      both(`hunk ${hunk.id}`, { hunkIds: [hunk.id] }, { hunkIds: [hunk.id], seen: { [file.path]: file.currentHash } }),
    ),
  );
  if (!whole) return shownHunks;
  const diff = withAll(h('pre', { class: 'diff', 'aria-label': `diff of ${file.path}` }), diffLines(file.diff));
  return ([diff] as HTMLElement[]).concat(shownHunks);
}

/** A file whose diff is not on the page: why (the host's words), and a button that loads it. */
function leftOut(file: ReviewFile, load: (path: string) => void): HTMLElement[] {
  return [
    h(
      'p',
      { class: 'left-out', role: 'note' },
      'The diff of this file is not shown, so it cannot be accepted here: ',
      file.diff,
    ),
    h('button', { type: 'button', onclick: () => load(file.path) }, 'Load the whole diff'),
  ];
}

/** `el` with `children` appended (`appendAll`: a diff's lines are never spread into a call). */
function withAll<E extends Element>(el: E, children: readonly HTMLElement[]): E {
  appendAll(el, children);
  return el;
}

function diffLines(diff: string): HTMLElement[] {
  return diff.split('\n').map(line);
}

function hunkHeader(hunk: ReviewFile['hunks'][number]): string {
  return `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
}

function line(text: string): HTMLElement {
  const kind = text.startsWith('+') ? 'add' : text.startsWith('-') ? 'del' : 'ctx';
  return h('span', { class: `line ${kind}` }, `\n${text}`);
}

function agents(file: ReviewFile): HTMLElement {
  return h('span', { class: 'agents' }, `by ${file.agents.join(', ')}`);
}
