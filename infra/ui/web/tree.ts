/**
 * @module
 * The agent tree: every agent under the root, depth-first, with its status,
 * host, task, and how many asks wait on it and files it changed.
 */
import { fill, h } from './dom.ts';
import type { Snapshot } from './store.ts';

export function renderTree(el: HTMLElement, snapshot: Snapshot, hostId: string): void {
  const asks = countBy(snapshot.asks.map((a) => a.agentId));
  const files = countBy(snapshot.allFiles.flatMap((f) => f.agents));
  fill(
    el,
    h(
      'ul',
      { role: 'tree', 'aria-label': 'Agents' },
      ...snapshot.agents.map((a) =>
        h(
          'li',
          {
            role: 'treeitem',
            'aria-level': a.depth + 1,
            'aria-label': `${a.agentId} ${a.status}`,
            'data-agent': a.agentId,
            style: `--depth:${a.depth}`,
          },
          h('span', { class: 'agent-id' }, a.agentId),
          h('span', { class: `badge status-${a.status}` }, a.status),
          a.label && a.label !== a.agentId ? h('span', { class: 'label' }, a.label) : undefined,
          h('span', { class: 'host', title: 'host' }, hostId),
          h('span', { class: 'count', 'data-kind': 'asks' }, `${asks.get(a.agentId) ?? 0} asks`),
          h('span', { class: 'count', 'data-kind': 'files' }, `${files.get(a.agentId) ?? 0} files`),
          a.task ? h('div', { class: 'task' }, a.task) : undefined,
        ),
      ),
    ),
  );
}

function countBy(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}
