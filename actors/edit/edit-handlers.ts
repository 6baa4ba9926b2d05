/**
 * @module
 * The edit domain's command handlers in the host's contract: one async
 * `(ctx) => reply` per command type, each a thin call into `EditService`
 * (which emits facts through `ctx.emit` before the reply is returned).
 */
import type { Logger } from 'pino';
import type { CommandOf, DataOf } from '../../schemas/index.ts';
import type { EditFact } from '../../schemas/edit.ts';
import type { EditService } from './edit-service.ts';

type EditCommand =
  | 'file.read'
  | 'file.edit'
  | 'file.write'
  | 'edit.begin'
  | 'edit.input'
  | 'edit.finish'
  | 'edit.cancel';

/** What a handler is given: the command (its data typed by its CommandDef) and how to append facts. */
export type EditHandlerContext<TData = unknown> = {
  command: { id: string; type: string; agentId: string; data: TData };
  emit: (fact: { type: string; data: unknown }) => Promise<void>;
  log?: Logger;
};

export type EditHandler<T extends EditCommand = EditCommand> = (
  ctx: EditHandlerContext<DataOf<CommandOf<T>>>,
) => Promise<unknown>;

/**
 * Handlers keyed by command type: file.read, file.edit, file.write, edit.begin, edit.input, edit.finish, edit.cancel.
 */
export function editHandlers(service: EditService): { [T in EditCommand]: EditHandler<T> } {
  const call = (ctx: EditHandlerContext) => ({
    agentId: ctx.command.agentId,
    emit: (fact: EditFact) => ctx.emit(fact),
    log: ctx.log?.child({ agentId: ctx.command.agentId, commandId: ctx.command.id }),
  });
  return {
    'file.read': (ctx) => service.read(call(ctx), ctx.command.data),
    'file.edit': (ctx) => service.edit(call(ctx), ctx.command.data),
    'file.write': (ctx) => service.write(call(ctx), ctx.command.data),
    'edit.begin': (ctx) => service.begin(call(ctx), ctx.command.data),
    'edit.input': (ctx) => service.input(call(ctx), ctx.command.data),
    'edit.finish': (ctx) => service.finish(call(ctx), ctx.command.data),
    'edit.cancel': (ctx) => service.cancel(call(ctx), ctx.command.data),
  };
}
