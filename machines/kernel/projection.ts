/**
 * @module
 * The pure fold of facts into aggregate states, shared by the live host and
 * by replay. Each aggregate kind has a machine; a fact goes to the aggregate
 * named by its subject (`skein.evt.<agent>.<aggregate>.<id>`) and advances it
 * with xstate's pure `transition()`: no action runs during a fold.
 */
import {
  createActor,
  initialTransition,
  type AnyActorScope,
  type AnyMachineSnapshot,
  type AnyStateMachine,
} from 'xstate';

export type AggregateDef = {
  aggregate: string;
  machine: AnyStateMachine;
  /**
   * Facts that, as an aggregate's first, leave it complete: in a final state that nothing reads back. The fold
   * keeps no snapshot for such an aggregate (a rule's grant or denial of one tool call; kept, a host held one
   * per command it ever ran). The machine must agree: a test folds each from the initial state to a final one.
   */
  completeAtBirth?: ReadonlySet<string>;
};

/** The part of a snapshot the digest covers: where the machine is and what it holds. */
export type AggregateState = { aggregate: string; value: unknown; context: unknown; facts: number };

/**
 * An aggregate's place in the fold. `ignores`: a fact type `snapshot` has no transition for (see `unhandled`),
 * or undefined; reset whenever the snapshot changes.
 */
type Entry = { aggregate: string; snapshot: AnyMachineSnapshot; facts: number; ignores: string | undefined };

type Kind = {
  machine: AnyStateMachine;
  initial: AnyMachineSnapshot;
  scope: AnyActorScope;
  completeAtBirth: ReadonlySet<string> | undefined;
};

export class Fold {
  readonly #defs: Map<string, Kind>;
  readonly #snapshots = new Map<string, Entry>();

  constructor(defs: readonly AggregateDef[]) {
    this.#defs = new Map(
      defs.map((d) => [
        d.aggregate,
        {
          machine: d.machine,
          initial: initialTransition(d.machine)[0],
          scope: inertScope(d.machine),
          completeAtBirth: d.completeAtBirth,
        },
      ]),
    );
  }

  /** Whether `aggregate` has a machine. */
  knows(aggregate: string): boolean {
    return this.#defs.has(aggregate);
  }

  /**
   * Folds one fact into the aggregate at `key` (its subject). Returns false
   * when the aggregate kind has no machine (the fact is kept in the log but
   * has no state, e.g. written by a newer version).
   */
  apply(key: string, aggregate: string, fact: { type: string }): boolean {
    const kind = this.#defs.get(aggregate);
    if (!kind) return false;
    const current = this.#snapshots.get(key);
    if (!current) {
      if (kind.completeAtBirth?.has(fact.type)) return true;
      const snapshot = kind.machine.transition(kind.initial, fact, kind.scope);
      this.#snapshots.set(key, { aggregate, snapshot, facts: 1, ignores: undefined });
      return true;
    }
    // The entry is this fold's own: updated in place (replay folds 100k facts; one object fewer per fact).
    // A fact no active state node has a transition for leaves the snapshot as it is (xstate would walk the
    // whole configuration to find that out, ~3 µs): only the count moves. The last such type is kept on the
    // entry until its snapshot changes, so a run of them costs one comparison each.
    if (current.ignores !== fact.type) {
      if (unhandled(current.snapshot, fact.type)) current.ignores = fact.type;
      else {
        current.snapshot = kind.machine.transition(current.snapshot, fact, kind.scope);
        current.ignores = undefined;
      }
    }
    current.facts += 1;
    return true;
  }

  get(key: string): AnyMachineSnapshot | undefined {
    return this.#snapshots.get(key)?.snapshot;
  }

  keys(): IterableIterator<string> {
    return this.#snapshots.keys();
  }

  get size(): number {
    return this.#snapshots.size;
  }

  /** Every aggregate's digest-relevant state, keyed by subject. */
  states(): Record<string, AggregateState> {
    const out: Record<string, AggregateState> = {};
    for (const [key, { aggregate, snapshot, facts }] of this.#snapshots) {
      out[key] = { aggregate, value: snapshot.value, context: snapshot.context, facts };
    }
    return out;
  }
}

/**
 * JSON with object keys sorted at every level: the canonical form the state
 * digest hashes. `undefined` members are dropped, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && typeof v !== 'function')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** Per state node: whether an event type may select one of its transitions (cached; the answer is static). */
const mayHandle = new WeakMap<object, Map<string, boolean>>();

/**
 * Whether `transition(snapshot, { type })` is sure to return `snapshot` itself: no active state node has a
 * transition whose descriptor matches `type` (exact, `*`, or a partial `a.b.*`, as xstate matches them) and
 * none has eventless (`always`) transitions, which xstate re-checks after every event. A guarded candidate
 * counts as handling (the guard reads context), so only facts the machine never listens for in its current
 * states are skipped. Reads `_nodes`, xstate's active configuration (ancestors included).
 */
function unhandled(snapshot: AnyMachineSnapshot, type: string): boolean {
  // xstate's own events (an unhandled `xstate.error.*` puts the machine in error) always go through it.
  if (type.startsWith('xstate.')) return false;
  const nodes = (snapshot as unknown as { _nodes: readonly StateNodeLike[] })._nodes;
  for (const node of nodes) {
    let byType = mayHandle.get(node);
    if (!byType) {
      byType = new Map();
      mayHandle.set(node, byType);
    }
    let handles = byType.get(type);
    if (handles === undefined) {
      handles = (node.always?.length ?? 0) > 0 || [...node.transitions.keys()].some((d) => matchesDescriptor(type, d));
      byType.set(type, handles);
    }
    if (handles) return false;
  }
  return true;
}

type StateNodeLike = { transitions: ReadonlyMap<string, unknown>; always?: readonly unknown[] };

/** xstate's event descriptor match: the type itself, `*`, or a prefix of whole tokens ending in `.*`. */
function matchesDescriptor(type: string, descriptor: string): boolean {
  if (descriptor === type || descriptor === '*') return true;
  if (!descriptor.endsWith('.*')) return false;
  return `${type}.`.startsWith(descriptor.slice(0, -1));
}

/**
 * What xstate's `transition()` does, minus building a throw-away actor per
 * call (an unstarted `createActor` computes a whole initial snapshot: ~15 µs):
 * one inert scope per aggregate kind whose action executor discards actions,
 * so no action ever runs. Safe because aggregate machines spawn no children.
 * A test checks that folds through it equal folds through `transition()`.
 */
function inertScope(machine: AnyStateMachine): AnyActorScope {
  const self = createActor(machine);
  return {
    self,
    id: '',
    sessionId: '',
    system: self.system,
    logger: () => undefined,
    defer: () => undefined,
    stopChild: () => undefined,
    emit: () => undefined,
    actionExecutor: () => undefined,
  } as unknown as AnyActorScope;
}
