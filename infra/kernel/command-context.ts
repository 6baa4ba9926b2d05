/**
 * @module
 * What the host hands a handler for one command (`HandlerContext`): the command, a logger bound to it on first
 * use (a pino child with the redaction paths costs ~20 µs cold, and most commands log nothing), and `emit`s that
 * stamp each fact with a deterministic id (`<agent>/<command id>:<n>`, so a retried command dedupes in the log)
 * and keep it in `emitted`, which the reply waits for.
 */
import type { Logger } from 'pino';
import type { Command, CommandDef, StoredFact } from '../../schemas/index.ts';
import type { ContentBytes } from '../transport/json-thread.ts';
import type { HandlerContext } from './domain.ts';
import type { FactWriter } from './fact-writer.ts';

export type CommandContext = {
  ctx: HandlerContext;
  /** Every fact the command caused so far, the handler's awaited or not. */
  emitted: Array<Promise<StoredFact>>;
  /** The command's logger (bound on first use). */
  logger: () => Logger;
};

export function commandContext(
  command: Command,
  def: CommandDef,
  contentBytes: ContentBytes | undefined,
  deps: { logger: Logger; writer: FactWriter },
): CommandContext {
  let bound: Logger | undefined;
  const logger = () =>
    (bound ??= deps.logger.child({ agentId: command.agentId, event: command.type, commandId: command.id }));
  const emitted: Array<Promise<StoredFact>> = [];
  let n = 0;
  const stamp = () => ({
    agentId: command.agentId,
    causationId: command.id,
    id: `${command.agentId}/${command.id}:${n++}`,
  });
  const caused = (stored: Promise<StoredFact>) => (emitted.push(stored), stored);
  const ctx: HandlerContext = {
    command: command as HandlerContext['command'],
    def: def as HandlerContext['def'],
    get logger() {
      return logger();
    },
    ...(contentBytes ? { contentBytes } : {}),
    emit: (fact) => caused(deps.writer.write(fact, stamp())),
    emitHeld: (fact) => caused(deps.writer.hold(fact, stamp())),
  };
  return { ctx, emitted, logger };
}
