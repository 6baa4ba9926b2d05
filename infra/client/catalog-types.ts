/**
 * @module
 * The catalogue as types: every command type with its data and reply, every
 * fact type with its data, and the `client.agent(id).<domain>.<verb>()` shape
 * derived from them. Types only; the values come from `schemas/`.
 */
import type { agentCommands, agentEvents } from '../../schemas/agent.ts';
import type { editCommands, editEvents } from '../../schemas/edit.ts';
import type { DataOf, Fact, ReplyOf } from '../../schemas/message.ts';
import type { permissionCommands, permissionEvents } from '../../schemas/permission.ts';
import type { reviewCommands, reviewEvents } from '../../schemas/review.ts';
import type { runtimeCommands, runtimeEvents } from '../../schemas/runtime.ts';
import type { terminalCommands, terminalEvents } from '../../schemas/terminal.ts';

type AnyCommandDef =
  | (typeof agentCommands)[number]
  | (typeof editCommands)[number]
  | (typeof permissionCommands)[number]
  | (typeof reviewCommands)[number]
  | (typeof runtimeCommands)[number]
  | (typeof terminalCommands)[number];

type AnyEventDef =
  | (typeof agentEvents)[number]
  | (typeof editEvents)[number]
  | (typeof permissionEvents)[number]
  | (typeof reviewEvents)[number]
  | (typeof runtimeEvents)[number]
  | (typeof terminalEvents)[number];

/** Every command type, e.g. `'terminal.exec'`. */
export type CommandType = AnyCommandDef['type'];
/** Every fact type, e.g. `'terminal.command.finished'`. */
export type FactType = AnyEventDef['type'];

type CommandDefOf<T extends CommandType> = Extract<AnyCommandDef, { type: T }>;
type EventDefOf<T extends FactType> = Extract<AnyEventDef, { type: T }>;

/** What a command takes (the schema's parsed shape: give fields that have defaults too). */
export type CommandData<T extends CommandType> = DataOf<CommandDefOf<T>>;
/** The fields of a command's `{ ok: true, ... }` reply. */
export type CommandReply<T extends CommandType> = ReplyOf<CommandDefOf<T>>;
/** The data of a fact type. */
export type FactData<T extends FactType> = DataOf<EventDefOf<T>>;
/** A fact of one type, as published on `skein.evt.…` / `skein.out.…`. */
export type TypedFact<T extends FactType> = Fact<FactData<T>> & { type: T; subject: string };

type Camel<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
type DomainOf<T extends string> = T extends `${infer D}.${string}` ? D : never;
type VerbOf<T extends string> = T extends `${string}.${infer V}` ? V : never;

/** `terminal.pause-all` → `client.agent(id).terminal.pauseAll(data)`. */
export type DomainCalls = {
  [D in DomainOf<CommandType>]: {
    [T in Extract<CommandType, `${D}.${string}`> as Camel<VerbOf<T>>]: (
      data: CommandData<T>,
      options?: CallOptions,
    ) => Promise<CommandReply<T>>;
  };
};

export type CallOptions = {
  /** Command id: repeat it to retry idempotently (default: a fresh one). */
  id?: string;
  /** Reply timeout (default 60 s; a tool call may wait for a permission answer). */
  timeoutMs?: number;
};

/** `terminal.pause-all` from `('terminal', 'pauseAll')`: the inverse of `Camel`. */
export function commandTypeOf(domain: string, verb: string): string {
  return `${domain}.${verb.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}
