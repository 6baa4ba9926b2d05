/**
 * @module
 * `skein review`, `skein accept|reject [paths…] [--hunk <id>…]`,
 * `skein undo-reject`: the root's (or --agent's) action log.
 */
import { resolve } from 'node:path';
import type { FileReview } from '../../schemas/review.ts';
import { action, UsageError } from './output.ts';
import { renderDiff, wantsColor } from './review-diff.ts';
import { callAndPrint, type RemoteOptions } from './remote.ts';

export async function review(opts: RemoteOptions & { diff?: boolean; of?: string }): Promise<void> {
  await action(() =>
    callAndPrint(
      opts,
      'review.list',
      opts.of ? { agentId: opts.of } : {},
      (reply) => {
        const files = reply['files'] as FileReview[];
        const waiting = (reply['waiting'] as Array<{ path: string; agentId: string; changes: number }>) ?? [];
        const lines: string[] = waiting.map(
          (w) => `waiting  ${w.path}  by ${w.agentId}  ${w.changes} change(s) not recorded yet: the event log refused`,
        );
        if (files.length === 0) return [...lines, 'no changes to review'].join('\n');
        for (const f of files) {
          lines.push(
            `${f.status.padEnd(8)} ${f.path}  by ${f.agents.join(', ')} ` +
              ` hunks: ${f.hunks.map((h) => h.id).join(' ') || '-'}`,
          );
          if (opts.diff && f.diff !== '') {
            lines.push(renderDiff(f, { cwd: process.cwd(), color: wantsColor(process.stdout) }));
          }
        }
        if (reply['undoAvailable']) lines.push('(undo-reject available)');
        return lines.join('\n');
      },
      undefined,
      'files',
    ),
  );
}

type Selection = RemoteOptions & { hunk?: string[]; interactive?: boolean };

function selection(paths: string[], opts: Selection): Record<string, unknown> {
  return {
    ...(paths.length ? { paths: paths.map((p) => resolve(p)) } : {}),
    ...(opts.hunk?.length ? { hunkIds: opts.hunk } : {}),
  };
}

export async function accept(paths: string[], opts: Selection): Promise<void> {
  if (opts.interactive) {
    return action(async () => {
      if (opts.hunk?.length) throw new UsageError('--interactive asks file by file: leave out --hunk');
      return (await import('./review-interactive.ts')).acceptInteractively(paths, opts);
    });
  }
  await action(() =>
    callAndPrint(
      opts,
      'review.accept',
      selection(paths, opts),
      (reply) =>
        (reply['accepted'] as Array<{ path: string; hunkIds: string[]; remaining: number }>)
          .map((a) => `accepted ${a.path} (${a.hunkIds.length} hunk(s), ${a.remaining} left)`)
          .join('\n') || 'nothing to accept',
    ),
  );
}

export async function reject(paths: string[], opts: Selection): Promise<void> {
  await action(() =>
    callAndPrint(
      opts,
      'review.reject',
      selection(paths, opts),
      (r) =>
        [
          ...(r['restored'] as string[]).map((p) => `restored ${p}`),
          ...(r['deleted'] as string[]).map((p) => `deleted  ${p}`),
          ...(r['kept'] as Array<{ path: string; reason: string }>).map((k) => `kept     ${k.path}: ${k.reason}`),
          ...(r['conflicts'] as Array<{ path: string; reason?: string }>).map(
            (c) => `CONFLICT ${c.path}${c.reason ? `: ${c.reason}` : ''}`,
          ),
          r['undoAvailable'] ? '(skein undo-reject brings these changes back)' : '',
        ]
          .filter(Boolean)
          .join('\n') || 'nothing to reject',
    ),
  );
}

export async function undoReject(opts: RemoteOptions): Promise<void> {
  await action(() =>
    callAndPrint(
      opts,
      'review.undo-reject',
      {},
      (r) =>
        [
          ...(r['reapplied'] as string[]).map((p) => `re-applied ${p}`),
          ...(r['conflicts'] as Array<{ path: string }>).map((c) => `CONFLICT ${c.path}`),
          ...(r['notRestorable'] as Array<{ path: string; reason: string }>).map(
            (k) => `not restorable ${k.path}: ${k.reason}`,
          ),
        ].join('\n') || 'nothing to undo',
    ),
  );
}
