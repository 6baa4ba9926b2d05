/**
 * @module
 * The reply to a writing edit command sent again after its reply was lost (a restart): rebuilt from the
 * facts it caused. `edit.failed` is the error it had (code and message as logged); `edit.applied` alone is
 * the reply it had, minus the syntax report's wording (the message says it was rebuilt). Anything else
 * (a crash between the intent and the outcome) is left to the host's `in_doubt`.
 */
import { RuntimeError, type Command, type StoredFact } from '../../schemas/index.ts';
import type { DataOf } from '../../schemas/index.ts';
import type { editApplied, editFailed } from '../../schemas/edit.ts';
import type { RetriedReply } from '../kernel/domain.ts';

type EditAppliedData = DataOf<typeof editApplied>;
type EditFailedData = DataOf<typeof editFailed>;

const WRITING = new Set(['file.write', 'file.edit', 'edit.finish']);

export async function retriedEdit(
  command: Command,
  facts: readonly StoredFact[],
  display: (agentId: string, abs: string) => Promise<string>,
): Promise<RetriedReply | undefined> {
  if (!WRITING.has(command.type)) return undefined;
  const failed = facts.find((f) => f.type === 'edit.failed')?.data as EditFailedData | undefined;
  if (failed) {
    return {
      error: new RuntimeError(failed.code, `${failed.message} (reply rebuilt from the log after a restart)`, {
        details: { editId: failed.editId, appliedCount: failed.appliedCount },
      }),
    };
  }
  const applied = facts.find((f) => f.type === 'edit.applied')?.data as EditAppliedData | undefined;
  if (!applied) return undefined;
  const shown = await display(command.agentId, applied.path);
  return {
    reply: {
      editId: applied.editId,
      path: shown,
      mode: applied.mode,
      created: applied.created,
      diff: applied.diff,
      linesAdded: applied.linesAdded,
      linesRemoved: applied.linesRemoved,
      edits: applied.edits,
      ...(applied.syntaxErrors ? { syntaxErrors: applied.syntaxErrors } : {}),
      message:
        `${applied.mode === 'write' ? (applied.created ? 'Created' : 'Wrote') : 'Edited'} ${shown} successfully ` +
        '(this command id was already applied; the reply is rebuilt from the log)',
    },
  };
}
