/**
 * @module
 * Every message skein knows, in one catalogue: the host routes commands by
 * it, `decode()` validates against it, `skein schema` and docs/protocol.md
 * are generated from it. A domain adds its arrays here.
 */
import type { CommandDef, EventDef } from './message.ts';
import { agentCommands, agentEvents } from './agent.ts';
import { editCommands, editEvents } from './edit.ts';
import { permissionCommands, permissionEvents } from './permission.ts';
import { reviewCommands, reviewEvents } from './review.ts';
import { runtimeCommands, runtimeEvents } from './runtime.ts';
import { terminalCommands, terminalEvents } from './terminal.ts';

/** Every command with its own type kept: what a domain's handlers are checked against. */
const COMMAND_DEFS = [
  ...runtimeCommands,
  ...agentCommands,
  ...reviewCommands,
  ...permissionCommands,
  ...editCommands,
  ...terminalCommands,
];
export const COMMANDS: readonly CommandDef[] = COMMAND_DEFS;

/** A command of the catalogue, by its own type (data and reply typed). */
export type CatalogCommand = (typeof COMMAND_DEFS)[number];
/** Every command type of the catalogue: each must have exactly one handler. */
export type CommandType = CatalogCommand['type'];
/** The CommandDef of one command type. */
export type CommandOf<T extends CommandType> = Extract<CatalogCommand, { type: T }>;
export const EVENTS: readonly EventDef[] = [
  ...runtimeEvents,
  ...agentEvents,
  ...reviewEvents,
  ...permissionEvents,
  ...editEvents,
  ...terminalEvents,
];

export const commandsByType: ReadonlyMap<string, CommandDef> = indexByType(COMMANDS);
export const eventsByType: ReadonlyMap<string, EventDef> = indexByType(EVENTS);

function indexByType<T extends { type: string }>(defs: readonly T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const def of defs) {
    if (map.has(def.type)) throw new Error(`message type '${def.type}' is declared twice`);
    map.set(def.type, def);
  }
  return map;
}
