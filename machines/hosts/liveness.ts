/**
 * @module
 * Pure judgements about named hosts: whether a host is live, lost or
 * stopped from its registry record and how long ago, on the observer's own
 * monotonic clock, its revision last changed (no wall clock is compared
 * across hosts), and who answers a command for an agent. No I/O: the
 * registry (infra/kernel/host-registry.ts) feeds it records and the clock.
 */

/** What the registry holds about a host, as far as liveness goes (its clock's `heartbeatAt` is not used). */
export type HostBeat = { name: string; hostId: string; state: 'up' | 'stopped' };

/**
 * What this observer saw of a host's record: the record's revision in the registry (it changes at every
 * heartbeat) and when, on the observer's own monotonic clock, it last saw that revision change. Liveness is
 * judged from these alone, so the hosts' wall clocks may disagree by any amount.
 */
export type Sighting = { revision: number; changedAtMs: number };

/** The sighting after reading `revision` at `nowMs` (monotonic): unchanged while the revision is the same. */
export function sight(previous: Sighting | undefined, revision: number, nowMs: number): Sighting {
  return previous?.revision === revision ? previous : { revision, changedAtMs: nowMs };
}

export type HostStatus =
  | { status: 'live'; hostId: string }
  | { status: 'lost'; hostId: string; silentForMs: number }
  | { status: 'stopped'; hostId: string }
  | { status: 'unknown' };

/**
 * `live` while the record is `up` and its revision changed less than `lostAfterMs` ago (observer's monotonic
 * time); `lost` once it has not changed for longer; `stopped` after a clean leave. A record seen for the first
 * time counts from then: a host found silent at start is declared lost `lostAfterMs` later, never at once.
 */
export function hostStatus(
  record: HostBeat | undefined,
  sighting: Sighting | undefined,
  nowMs: number,
  lostAfterMs: number,
): HostStatus {
  if (!record || !sighting) return { status: 'unknown' };
  if (record.state === 'stopped') return { status: 'stopped', hostId: record.hostId };
  const silentForMs = Math.max(0, nowMs - sighting.changedAtMs);
  return silentForMs < lostAfterMs
    ? { status: 'live', hostId: record.hostId }
    : { status: 'lost', hostId: record.hostId, silentForMs };
}

/** Who answers a command: this host, nobody here (the owner, live, answers), or `unavailable` with why. */
export type Route = { serve: true } | { serve: false } | { serve: false; unavailable: string };

/**
 * The route of a command for an agent living on `owner` (undefined: an agent this host does not know, which
 * the root's host answers, or an agent of an unnamed single host, served by whoever serves the root).
 */
export function routeCommand(input: {
  agentId: string;
  owner: string | undefined;
  self: string;
  servesRoot: boolean;
  ownerStatus: HostStatus;
}): Route {
  const { agentId, owner, self, servesRoot, ownerStatus } = input;
  if (owner === undefined) return servesRoot ? { serve: true } : { serve: false };
  if (owner === self) return { serve: true };
  if (ownerStatus.status === 'live') return { serve: false };
  const why =
    ownerStatus.status === 'lost'
      ? `is lost (no heartbeat for ${(ownerStatus.silentForMs / 1000).toFixed(1)} s)`
      : ownerStatus.status === 'stopped'
        ? 'is stopped'
        : 'has never joined';
  return {
    serve: false,
    unavailable:
      `agent '${agentId}' lives on host '${owner}', which ${why}; only that host answers for it: ` +
      `start it again (skein up --host ${owner} …) and retry`,
  };
}
