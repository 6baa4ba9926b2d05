/**
 * @module
 * Which MCP tool call sent a command: every command a tool body sends carries its call's tag in its id
 * (`m-<tag>-<n>`), and the facts it causes carry that id as their `causationId`. So the approval bridge knows a
 * permission request's call exactly, even with calls at once in one session or sessions sharing one agent
 * (`--agent`), and a cancel withdraws that call's requests alone.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

const calls = new AsyncLocalStorage<string>();
let sent = 0;

/** A new call's tag (unique in this process and across runs). */
export function newCallTag(): string {
  return randomUUID().replaceAll('-', '').slice(0, 16);
}

/** Runs `body` as the tool call `tag`: commands it sends name it. */
export function inCall<T>(tag: string, body: () => Promise<T>): Promise<T> {
  return calls.run(tag, body);
}

/** The id of a command sent now: `m-<tag>-<n>` inside a tool call, else `c-<uuid>` (the client's default). */
export function mcpCommandId(): string {
  const tag = calls.getStore();
  sent += 1;
  return tag === undefined ? `c-${randomUUID()}` : `m-${tag}-${sent}`;
}

/** The tool call that sent command `causationId`, if one did. */
export function callOf(causationId: string | undefined): string | undefined {
  const m = causationId === undefined ? null : /^m-([0-9a-f]{16})-\d+$/.exec(causationId);
  return m?.[1];
}
