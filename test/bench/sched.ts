/**
 * @module
 * Where a benchmark's wall time goes on a shared machine: per thread, the CPU time it ran and the time it
 * sat runnable in the run queue waiting for a core (/proc/<pid>/task/<tid>/schedstat, ns). A pipeline stage
 * that waits for a core most of the flood is CPU-bound under contention: its CPU per MB sets the pace, not
 * a stall in the code (issue 15). Also the share of it in the kernel (system time, in 10 ms ticks) and the
 * minor page faults, which a fresh process's allocations pay for.
 */
import { readdirSync, readFileSync } from 'node:fs';

export type SchedTimes = { cpuMs: number; waitMs: number; sysMs: number; minorFaults: number };

/** CPU and run-queue wait of one thread (`tid`), or of every thread of `pid` summed. Zero once it is gone. */
export function schedTimes(pid: number, tid?: number): SchedTimes {
  let cpu = 0;
  let wait = 0;
  let sysTicks = 0;
  let minorFaults = 0;
  try {
    const tids = tid === undefined ? readdirSync(`/proc/${pid}/task`) : [String(tid)];
    for (const t of tids) {
      const [run, queued] = readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ').map(Number);
      cpu += run ?? 0;
      wait += queued ?? 0;
      // stat after the command's ')': minflt is the 8th field, stime the 13th (clock ticks of 10 ms).
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      minorFaults += Number(f[7]);
      sysTicks += Number(f[12]);
    }
  } catch {
    // gone (a thread that ended between the listing and the read)
  }
  return { cpuMs: cpu / 1e6, waitMs: wait / 1e6, sysMs: sysTicks * 10, minorFaults };
}

/** The whole machine's CPU time so far (/proc/stat, all cores, in ms): busy (not idle nor iowait) and idle. */
export function machineTimes(): { busyMs: number; idleMs: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  // USER_HZ is 100 on Linux: one tick is 10 ms.
  return { busyMs: (total - idle) * 10, idleMs: idle * 10 };
}

/** What the whole machine did between two `machineTimes()`: core-ms busy, and the share of its cores idle. */
export type MachineUse = { busyMs: number; idleShare: number };

export function machineUse(a: { busyMs: number; idleMs: number }): MachineUse {
  const b = machineTimes();
  const busy = b.busyMs - a.busyMs;
  const idle = b.idleMs - a.idleMs;
  return { busyMs: busy, idleShare: busy + idle > 0 ? idle / (busy + idle) : 0 };
}

/**
 * Starts counting for the named threads; `stop()` gives what each used since, as `name cpu X ms (waited Y)`,
 * then what every core of the machine did (`machine`).
 */
export function schedProbe(threads: Record<string, { pid: number; tid?: number }>): {
  stop: () => string;
  machine: () => MachineUse;
} {
  const start = Object.fromEntries(Object.entries(threads).map(([k, t]) => [k, schedTimes(t.pid, t.tid)]));
  const machine0 = machineTimes();
  let used: MachineUse | undefined;
  const machine = () => {
    used ??= machineUse(machine0);
    return used;
  };
  return {
    machine,
    stop: () =>
      Object.entries(threads)
        .map(([k, t]) => {
          const now = schedTimes(t.pid, t.tid);
          const cpu = now.cpuMs - start[k]!.cpuMs;
          const wait = now.waitMs - start[k]!.waitMs;
          const sys = now.sysMs - start[k]!.sysMs;
          const faults = now.minorFaults - start[k]!.minorFaults;
          return `${k} ${cpu.toFixed(0)} ms (sys ~${sys}, waited ${wait.toFixed(0)}, ${faults} page faults)`;
        })
        .concat(
          `machine ${machine().busyMs} core-ms busy (${(machine().idleShare * 100).toFixed(0)}% of its cores idle)`,
        )
        .join(', '),
  };
}
