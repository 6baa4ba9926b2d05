/**
 * @module
 * The reply to a `terminal.open` sent again after its reply was lost (the reply cache forgot it, or the host
 * restarted): rebuilt from the `terminal.opened` it caused, never a second terminal. While that terminal is
 * open the reply is the one it had; once it is gone (a restart loses every PTY: `terminal.lost`) the retry gets
 * `in_doubt` naming it, so the caller opens a new terminal on purpose, with a new id.
 */
import { ErrorCode, RuntimeError, type Command, type DataOf, type StoredFact } from '../../schemas/index.ts';
import type { TerminalOpened } from '../../schemas/terminal-events.ts';
import type { RetriedReply } from '../kernel/domain.ts';

type OpenedData = DataOf<typeof TerminalOpened>;

export function retriedOpen(
  command: Command,
  facts: readonly StoredFact[],
  isOpen: (terminalId: string) => boolean,
): RetriedReply | undefined {
  if (command.type !== 'terminal.open') return undefined;
  const opened = facts.find((f) => f.type === 'terminal.opened')?.data as OpenedData | undefined;
  if (!opened) return undefined;
  const { terminalId, pid, tty, cwd, cols, rows, shell, sandbox } = opened;
  if (isOpen(terminalId)) return { reply: { terminalId, pid, tty, cwd, cols, rows, shell, sandbox } };
  return {
    error: new RuntimeError(
      ErrorCode.InDoubt,
      `command id '${command.id}' already opened terminal '${terminalId}', which is closed now (a host restart ` +
        'closes every terminal: see terminal.lost in the log); nothing was opened again. Send terminal.open ' +
        'with a new id to open another terminal.',
      { details: { terminalId } },
    ),
  };
}
