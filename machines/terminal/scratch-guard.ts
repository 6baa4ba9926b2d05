/**
 * @module
 * The disk bound of sandboxed terminals (pure: the numbers and the choice). A sandbox writes to the host's disk in
 * its scratch directory (its `/tmp`, `/dev/shm` and hidden home directories, under `<dataDir>/sandbox`: the disk the
 * event log is on) and in files it deleted while a process keeps them open (no directory shows them). No kernel
 * quota bounds either without root, so the runtime measures them every `scratchCheckMs` and closes terminals:
 *
 * - an agent's terminals with its sub-agents' hold at most `maxScratchPerAgent` together; past it, the biggest
 *   holder in that subtree is closed (one per agent per check; the next check looks again);
 * - the disk keeps `scratchDiskReserve` free (bytes and inodes): below it, the terminal holding the most of what
 *   ran short is closed, one per check, until the reserve is back or no sandbox holds more than `MIN_VICTIM`.
 *
 * The operator's terminals (the root agent's) are not bounded, as for memory.
 */

/** A disk bound as configured: bytes, or a share (`"10%"`) of the disk's size. 0: none. */
export type DiskBound = number | `${number}%`;

/** Below this a terminal is never chosen at the reserve: the disk ran short for another reason. */
export const MIN_VICTIM_BYTES = 1024 * 1024;
export const MIN_VICTIM_INODES = 1024;

/** The bound in bytes (or inodes): a number as it is, a share of `size` rounded down. 0: none. */
export function diskBoundOf(bound: DiskBound, size: number): number {
  if (typeof bound === 'number') return bound;
  return Math.floor((size * Number(bound.slice(0, -1))) / 100);
}

/** What one sandboxed terminal holds on the scratch disk. */
export type ScratchUse = {
  terminalId: string;
  /** The agents from the top one down to the terminal's owner (the root agent excluded: it is not bounded). */
  lineage: readonly string[];
  /** Disk blocks (bytes) of its scratch directory and of deleted files its processes keep open on that disk. */
  bytes: number;
  /** Inodes of its scratch directory (files, directories, links), and deleted files kept open. */
  inodes: number;
  /**
   * Blocks (bytes) of the other files on that disk its processes have open for writing (the workspace's among
   * them): not its to hold against `maxScratchPerAgent`, but who is filling the disk when it runs short.
   */
  writing?: number;
  /**
   * Bytes its processes wrote to disk since the last check (`/proc/<pid>/io`, net of writes cancelled by a
   * truncate or delete), when its workspace is on the data disk: also who is filling it, with many small files
   * each written and closed between two checks. Default 0.
   */
  wrote?: number;
  /**
   * Its processes whose writes cannot be counted (`wrote` misses them): one that ignores SIGCHLD (the kernel
   * reaps its children, and what they wrote goes uncounted) or whose /proc files are closed to the runtime.
   * Below the reserve, with no other terminal to blame and the disk falling by more than the counted writes
   * explain, such a terminal is. Default 0.
   */
  hidden?: number;
  /**
   * False when the walk stopped at its budget of entries or time: what was counted is a floor, and a scratch
   * that big (or made that slow to walk) is past every bound, so it is closed first. Default true.
   */
  complete?: boolean;
};

/** The scratch disk as statfs sees it. */
export type DiskState = { sizeBytes: number; freeBytes: number; inodes: number; freeInodes: number };

export type ScratchLimits = { maxPerAgent: DiskBound; reserve: DiskBound };

/** What a walk that did not finish is taken to hold: more than any bound. */
const UNWALKED = Number.MAX_SAFE_INTEGER;

/** A terminal to close, and why (the words the agent and the log are given). */
export type ScratchVictim = { terminalId: string; why: string };

const MiB = 1024 * 1024;
const mib = (bytes: number) =>
  bytes >= UNWALKED
    ? 'more than a check walks (a scratch too big or too slow to walk)'
    : `${(bytes / MiB).toFixed(1)} MiB`;

/**
 * The terminals to close now: at most one per agent over `maxPerAgent` (the deepest agent first, its biggest
 * holder), then, if the disk is below the reserve in bytes or inodes, the biggest holder of what ran short among
 * those not already chosen.
 */
export function scratchVictims(
  disk: DiskState,
  limits: ScratchLimits,
  measured: readonly ScratchUse[],
  /** Free bytes the disk lost since the last check (0 when unknown, or it gained). */
  fellBytes = 0,
): ScratchVictim[] {
  const victims: ScratchVictim[] = [];
  const uses = measured.map((u) => (u.complete === false ? { ...u, bytes: UNWALKED, inodes: UNWALKED } : u));
  const chosen = new Set<string>();
  const perAgent = diskBoundOf(limits.maxPerAgent, disk.sizeBytes);
  if (perAgent > 0) {
    const byAgent = new Map<string, { bytes: number; depth: number; uses: ScratchUse[] }>();
    for (const use of uses) {
      use.lineage.forEach((agentId, depth) => {
        const entry = byAgent.get(agentId) ?? { bytes: 0, depth, uses: [] };
        entry.bytes += use.bytes;
        entry.uses.push(use);
        byAgent.set(agentId, entry);
      });
    }
    const over = [...byAgent].filter(([, a]) => a.bytes > perAgent).sort((a, b) => b[1].depth - a[1].depth);
    for (const [agentId, a] of over) {
      if (a.uses.some((u) => chosen.has(u.terminalId))) continue; // a deeper agent's pick already frees it
      const biggest = maxBy(a.uses, (u) => u.bytes);
      if (!biggest) continue;
      chosen.add(biggest.terminalId);
      const who = agentId === biggest.lineage[biggest.lineage.length - 1] ? 'its agent' : `its ancestor '${agentId}'`;
      victims.push({
        terminalId: biggest.terminalId,
        why:
          `the sandbox scratch of ${who} and its sub-agents holds ${mib(a.bytes)} on disk, past ` +
          `domains.terminal.maxScratchPerAgent (${mib(perAgent)}); this terminal held ${mib(biggest.bytes)}. ` +
          'Keep big files in the workspace or remove them, or ask the operator for a higher bound',
      });
    }
  }
  const shortOf = reserveShortOf(disk, limits.reserve);
  if (shortOf) {
    // In bytes, what it holds, is writing (a workspace file too) and wrote since the last check: who fills it.
    const amount = (u: ScratchUse) => (shortOf === 'bytes' ? u.bytes + (u.writing ?? 0) + (u.wrote ?? 0) : u.inodes);
    const biggest = maxBy(
      uses.filter((u) => !chosen.has(u.terminalId)),
      amount,
    );
    const min = shortOf === 'bytes' ? MIN_VICTIM_BYTES : MIN_VICTIM_INODES;
    if (biggest && amount(biggest) >= min) {
      const writing =
        (biggest.writing ? `, and is writing files of ${mib(biggest.writing)}` : '') +
        (biggest.wrote ? `; its processes wrote ${mib(biggest.wrote)} to disk since the last check` : '');
      const held =
        shortOf === 'bytes' || biggest.inodes >= UNWALKED
          ? `its sandbox scratch holds ${mib(biggest.bytes)}${writing}`
          : `its sandbox scratch holds ${biggest.inodes} inodes`;
      const free = shortOf === 'bytes' ? mib(disk.freeBytes) : `${disk.freeInodes} inodes`;
      const bound = diskBoundOf(limits.reserve, shortOf === 'bytes' ? disk.sizeBytes : disk.inodes);
      const reserve = shortOf === 'bytes' ? mib(bound) : `${bound} inodes`;
      victims.push({
        terminalId: biggest.terminalId,
        why:
          `the data disk has ${free} free, below domains.terminal.scratchDiskReserve (${reserve}) that keeps ` +
          `the event log writable, and this terminal takes the most of it: ${held}. ` +
          'Remove big files sooner, or ask the operator to free space on the disk of the data dir',
      });
    } else if (shortOf === 'bytes' && victims.length === 0 && fellBytes - counted(uses) >= MIN_VICTIM_BYTES) {
      // Nobody to blame by what can be counted, and the disk is still falling by more than the counted writes
      // explain: a terminal that hides what it writes is taken to be the writer.
      const hider = maxBy(
        uses.filter((u) => !chosen.has(u.terminalId) && (u.hidden ?? 0) > 0),
        (u) => u.hidden ?? 0,
      );
      if (hider) {
        victims.push({
          terminalId: hider.terminalId,
          why:
            `the data disk has ${mib(disk.freeBytes)} free, below domains.terminal.scratchDiskReserve ` +
            `(${mib(diskBoundOf(limits.reserve, disk.sizeBytes))}) that keeps the event log writable, no ` +
            `terminal holds or writes enough of it to count, and ${hider.hidden} of this terminal's processes ` +
            'hide what they write (SIGCHLD ignored, whose children the kernel reaps uncounted, or /proc closed to ' +
            'the runtime). Let children be waited for, or ask the operator to free space on the disk of the data dir',
        });
      }
    }
  }
  return victims;
}

/**
 * What the disk is below the reserve in: bytes, else inodes (a share only: a number of bytes says nothing of
 * inodes), or undefined when it keeps the reserve.
 */
export function reserveShortOf(disk: DiskState, reserve: DiskBound): 'bytes' | 'inodes' | undefined {
  const bytes = diskBoundOf(reserve, disk.sizeBytes);
  if (bytes > 0 && disk.freeBytes < bytes) return 'bytes';
  const inodes = typeof reserve === 'string' ? diskBoundOf(reserve, disk.inodes) : 0;
  return inodes > 0 && disk.freeInodes < inodes ? 'inodes' : undefined;
}

/** What the terminals' processes were counted writing since the last check. */
function counted(uses: readonly ScratchUse[]): number {
  let sum = 0;
  for (const u of uses) sum += u.wrote ?? 0;
  return sum;
}

function maxBy<T>(items: readonly T[], key: (item: T) => number): T | undefined {
  let best: T | undefined;
  for (const item of items) if (best === undefined || key(item) > key(best)) best = item;
  return best;
}
