/**
 * @module
 * Review of the root's action log (its subtree's changes): per file and per
 * hunk diffs with **Accept** and **Reject** for a hunk, a file or all, and
 * **Undo reject** for the last rejection.
 */
import type { ConsoleBus } from './bus.ts';
import { fill, h } from './dom.ts';
import type { ReviewFile, Snapshot } from './store.ts';

export type ReviewAction = { verb: 'accept' | 'reject'; data: { paths?: string[]; hunkIds?: string[] } };

export function renderReview(
  el: HTMLElement,
  snapshot: Snapshot,
  act: (a: ReviewAction | 'undo') => void,
  choose: (agentId: string) => void,
) {
  const scope = h(
    'select',
    { 'aria-label': 'Review changes of', onchange: (e) => choose((e.target as HTMLSelectElement).value) },
    ...snapshot.agents.map((a) =>
      h('option', { value: a.agentId, selected: a.agentId === snapshot.reviewAgent }, `${a.agentId} and its subtree`),
    ),
  );
  const both = (label: string, data: ReviewAction['data']) =>
    h(
      'div',
      { role: 'group', 'aria-label': label, class: 'review-actions' },
      h('button', { type: 'button', onclick: () => act({ verb: 'accept', data }) }, 'Accept'),
      h('button', { type: 'button', onclick: () => act({ verb: 'reject', data }) }, 'Reject'),
    );
  fill(
    el,
    h(
      'div',
      { class: 'review-all' },
      h('label', {}, 'Changes of ', scope),
      snapshot.files.length > 0 ? both('all changes', {}) : h('p', { class: 'empty' }, 'No changes to review.'),
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
    ...snapshot.files.map((file) =>
      h(
        'section',
        { class: 'file', 'aria-label': `file ${file.path}` },
        h('h3', {}, h('span', { class: `badge file-${file.status}` }, file.status), ` ${file.path} `, agents(file)),
        both(`file ${file.path}`, { paths: [file.path] }),
        ...file.hunks.map((hunk) =>
          h(
            'div',
            { class: 'hunk', role: 'group', 'aria-label': `hunk ${hunkHeader(hunk)} of ${file.path}` },
            h('pre', { class: 'diff' }, h('span', { class: 'hunk-head' }, hunkHeader(hunk)), ...hunk.lines.map(line)),
            both(`hunk ${hunk.id}`, { hunkIds: [hunk.id] }),
          ),
        ),
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
