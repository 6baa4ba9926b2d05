/**
 * @module
 * Who may use which terminal, and whether one more fits: the refusals a terminal command meets before it touches
 * a PTY (another agent's terminal, a closed or unknown one, past `maxPerAgent` or `maxPerHost`). The manager asks
 * here, and so does the gate before it asks a person (an ask about another agent's terminal showed where its
 * shell was).
 */
import { ErrorCode, LimitExceededError, NotFoundError, RuntimeError } from '../../schemas/errors.ts';
import type { TerminalConfig } from '../../schemas/terminal.ts';

type Session = { readonly agentId: string; readonly status: string };

/** The session `terminalId` of `agentId`; throws not found, closed (unless `allowClosed`) or another agent's. */
export function ownedSession<S extends Session>(
  sessions: ReadonlyMap<string, S>,
  closedIds: ReadonlySet<string>,
  { agentId, terminalId, allowClosed = false }: { agentId: string; terminalId: string; allowClosed?: boolean },
): S {
  const s = sessions.get(terminalId);
  if (!s) {
    if (closedIds.has(terminalId)) {
      throw new RuntimeError(
        ErrorCode.InvalidState,
        `Terminal '${terminalId}' is closed; open a new one with terminal.open.`,
      );
    }
    throw new NotFoundError(
      `Terminal '${terminalId}' does not exist on this host; open ` +
        `one with terminal.open or list yours with terminal.list.`,
    );
  }
  if (s.agentId !== agentId) {
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `Terminal '${terminalId}' belongs to another agent; use your own terminals (terminal.list).`,
    );
  }
  if (!allowClosed && (s.status === 'closing' || s.status === 'closed')) {
    throw new RuntimeError(
      ErrorCode.InvalidState,
      `Terminal '${terminalId}' is closed; open a new one with terminal.open.`,
    );
  }
  return s;
}

/** Throws when `agentId` may not open one more terminal: the host stopping, or a per-agent or per-host limit. */
/** terminal.open refused at shutdown (also when the shutdown began while the open was on its way). */
export function shuttingDownError(): RuntimeError {
  return new RuntimeError(
    ErrorCode.Unavailable,
    'The host is shutting down; open the terminal on another host or after restart.',
    { retryable: true },
  );
}

export function assertRoom(
  sessions: readonly Session[],
  agentId: string,
  config: Pick<TerminalConfig, 'maxPerAgent' | 'maxPerHost'>,
  shuttingDown: boolean,
): void {
  if (shuttingDown) throw shuttingDownError();
  const mine = sessions.filter((s) => s.agentId === agentId).length;
  if (mine >= config.maxPerAgent) {
    throw new LimitExceededError(
      `Agent '${agentId}' already has ${mine} terminals (maxPerAgent ` +
        `${config.maxPerAgent}); close one with terminal.close first.`,
    );
  }
  if (sessions.length >= config.maxPerHost) {
    throw new LimitExceededError(
      `This host already runs ${sessions.length} terminals (maxPerHost ` +
        `${config.maxPerHost}); close some or use another host.`,
    );
  }
}
