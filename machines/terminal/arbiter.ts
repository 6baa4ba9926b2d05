/**
 * @module
 * The resource arbiter: named shared resources (e.g. "docker.sock",
 * "port:3000", "gpu") held exclusively by one command at a time. A request
 * takes all its resources at once or waits (so two requests never hold one
 * each and wait for the other); waiters are served by priority (higher
 * first), then arrival. A request is never overtaken on a resource by a
 * lower-ranked one. Releasing a terminal drops its holds and its waiters, so
 * a dead holder never blocks anyone. Pure functions on plain JSON state, plus
 * the `resource` aggregate machine that folds resource facts.
 */
import type { DataOf } from '../../schemas/message.ts';
import type { ResourceAcquired } from '../../schemas/terminal.ts';
import { assign, setup } from 'xstate';

export type ArbiterRequest = {
  /** Unique key of the request, e.g. `${terminalId}/${commandId}`. */
  key: string;
  agentId: string;
  terminalId: string;
  commandId: string;
  resources: string[];
  priority: number;
  /** When it was requested (ms, caller's clock). */
  at: number;
};
export type Grant = ArbiterRequest & { grantedAt: number; waitMs: number };
export type ArbiterState = {
  known: string[];
  holders: Record<string, Grant>;
  waiting: Array<ArbiterRequest & { order: number }>;
  nextOrder: number;
};

export function createArbiter(resources: readonly string[]): ArbiterState {
  return { known: [...resources], holders: {}, waiting: [], nextOrder: 0 };
}

/** Names not declared in the config (the caller refuses the command). */
export function unknownResources(state: ArbiterState, names: readonly string[]): string[] {
  return names.filter((n) => !state.known.includes(n));
}

/** Adds a request and grants whatever can be granted now. */
export function request(
  state: ArbiterState,
  req: ArbiterRequest,
  now: number,
): { state: ArbiterState; granted: Grant[] } {
  const resources = [...new Set(req.resources)].sort();
  const next: ArbiterState = {
    ...state,
    waiting: [...state.waiting, { ...req, resources, order: state.nextOrder }],
    nextOrder: state.nextOrder + 1,
  };
  return grant(next, now);
}

/** Releases what `key` holds (or drops it from the queue) and grants the next waiters. */
export function release(
  state: ArbiterState,
  key: string,
  now: number,
): { state: ArbiterState; released: Grant[]; granted: Grant[] } {
  return releaseWhere(state, (r) => r.key === key, now);
}

/** Releases every hold and drops every waiter of a terminal (it closed or died). */
export function releaseTerminal(state: ArbiterState, terminalId: string, now: number) {
  return releaseWhere(state, (r) => r.terminalId === terminalId, now);
}

/** Place of `key` in the waiting line (0 = next), or -1 when it is not waiting. */
export function position(state: ArbiterState, key: string): number {
  const ranked = rank(state.waiting);
  return ranked.findIndex((w) => w.key === key);
}

function releaseWhere(state: ArbiterState, match: (r: ArbiterRequest) => boolean, now: number) {
  const released = new Map<string, Grant>();
  const holders: Record<string, Grant> = {};
  for (const [name, g] of Object.entries(state.holders)) {
    if (match(g)) released.set(g.key, g);
    else holders[name] = g;
  }
  const after = grant({ ...state, holders, waiting: state.waiting.filter((w) => !match(w)) }, now);
  return { state: after.state, released: [...released.values()], granted: after.granted };
}

function rank<T extends { priority: number; order: number }>(waiting: T[]): T[] {
  return [...waiting].sort((a, b) => b.priority - a.priority || a.order - b.order);
}

function grant(state: ArbiterState, now: number): { state: ArbiterState; granted: Grant[] } {
  const holders = { ...state.holders };
  const blocked = new Set<string>();
  const granted: Grant[] = [];
  const stillWaiting: ArbiterState['waiting'] = [];
  for (const w of rank(state.waiting)) {
    const free = w.resources.every((r) => !holders[r] && !blocked.has(r));
    if (free) {
      const { order: _order, ...req } = w;
      const g: Grant = { ...req, grantedAt: now, waitMs: Math.max(0, now - w.at) };
      for (const r of w.resources) holders[r] = g;
      granted.push(g);
    } else {
      // Reserve its resources so a lower-ranked request cannot overtake it.
      for (const r of w.resources) blocked.add(r);
      stillWaiting.push(w);
    }
  }
  const order = new Map(state.waiting.map((w) => [w.key, w.order] as const));
  stillWaiting.sort((a, b) => order.get(a.key)! - order.get(b.key)!);
  return { state: { ...state, holders, waiting: stillWaiting }, granted };
}

/** A fact; the log holds only facts validated by their schema, so `data` is the event's data. */
type Envelope = { type: string; data?: unknown };
type AcquiredData = DataOf<typeof ResourceAcquired>;
export type ResourceAggregateContext = {
  resource: string | null;
  holder: { agentId: string; terminalId: string; commandId: string } | null;
  acquisitions: number;
  totalWaitMs: number;
};

/** Folds one resource's `resource.acquired` / `resource.released` facts. Pure. */
export const resourceAggregate = setup({
  types: { context: {} as ResourceAggregateContext, events: {} as Envelope },
}).createMachine({
  id: 'resource',
  context: { resource: null, holder: null, acquisitions: 0, totalWaitMs: 0 },
  initial: 'free',
  states: {
    free: {
      on: {
        'resource.acquired': {
          target: 'held',
          actions: assign(({ context, event }) => {
            const x = event.data as AcquiredData;
            return {
              resource: x.resource,
              holder: { agentId: x.agentId, terminalId: x.terminalId, commandId: x.commandId },
              acquisitions: context.acquisitions + 1,
              totalWaitMs: context.totalWaitMs + x.waitMs,
            };
          }),
        },
      },
    },
    held: { on: { 'resource.released': { target: 'free', actions: assign({ holder: null }) } } },
  },
});

export const resourceAggregateDef = { aggregate: 'resource', machine: resourceAggregate };
