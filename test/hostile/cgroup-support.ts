/**
 * @module
 * What the per-agent limit attacks share (process-limit and memory-limit): where this test process sits in a v1
 * hierarchy, the runtime's cgroup below it, a terminal's leaf, a count in a control file, a sub-agent with its
 * own socket and a terminal, and `limitSuite`, the runtime a file's attacks share; `sharedAgentCgroups` for the
 * tests of AgentCgroups itself.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentCgroups } from '../../actors/terminal/agent-cgroups.ts';
import { cgroupV1Dir, type CgroupController, type CgroupDir } from '../../machines/terminal/cgroup-v1.ts';
import { call } from '../../infra/transport/client.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, reportAttacks } from './support.ts';

/** This process's cgroup in `controller`'s v1 hierarchy, or why there is none. */
export function ownCgroup(controller: CgroupController): CgroupDir {
  return cgroupV1Dir(
    readFileSync('/proc/self/mountinfo', 'utf8'),
    readFileSync('/proc/self/cgroup', 'utf8'),
    controller,
  );
}

/** This runtime's cgroup: the one `skein-<pid>-<hex>` below the test process's own. */
export function runtimeCgroup(where: CgroupDir): string {
  if (!where.ok) throw new Error(where.reason);
  const mine = readdirSync(where.dir).filter((n) => n.startsWith(`skein-${process.pid}-`));
  expect(mine).toHaveLength(1);
  return join(where.dir, mine[0]!);
}

/** The directory of `terminalId`'s leaf, anywhere below `dir`. */
export function leafOf(dir: string, terminalId: string): string | undefined {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    if (e.name === `t-${terminalId}`) return join(dir, e.name);
    const found = leafOf(join(dir, e.name), terminalId);
    if (found) return found;
  }
  return undefined;
}

/** A number in a control file (`pids.current`, `memory.limit_in_bytes`). */
export const count = (dir: string, file: string) => Number(readFileSync(join(dir, file), 'utf8').trim());

/**
 * The processes the runtime killed in `terminalId` at a memory bound (agents-oom.ts logs each kill, with how many
 * processes and which step).
 */
export function runtimeKills(rt: TestRuntime, terminalId: string): Array<{ processes: number; step: string }> {
  return rt.logs
    .filter((l) => l['terminalId'] === terminalId && String(l['msg']).includes('killed in the terminal holding'))
    .map((l) => ({ processes: Number(l['processes']), step: String(l['step']) }));
}

/** A field of a `key value` control file (`memory.oom_control`'s `oom_kill`). */
export function field(dir: string, file: string, key: string): number {
  const line = readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key} `));
  return Number(line?.split(' ')[1]);
}

export type AgentTerminal = {
  terminalId: string;
  exec(command: string): Promise<Record<string, unknown>>;
};

/**
 * `withTerminal(agentId, parentId?, open?)`: spawns `agentId` under `parentId` (the operator by default), connects
 * as it and opens a terminal.
 */
export function agentTerminals(rt: () => TestRuntime, sockets: ReturnType<typeof agentSockets>) {
  return async (agentId: string, parentId = 'main', open: Record<string, unknown> = {}): Promise<AgentTerminal> => {
    const spawn = { label: agentId, agentId };
    if (parentId === 'main') ok(await rt().call('agent.spawn', spawn));
    else ok(await call(await sockets.as(parentId), parentId, 'agent.spawn', spawn));
    const bus = await sockets.as(agentId);
    const opened = ok(await call(bus, agentId, 'terminal.open', open, { timeoutMs: 30_000 }));
    const terminalId = String(opened['terminalId']);
    const exec = async (command: string) =>
      ok(await call(bus, agentId, 'terminal.exec', { terminalId, command, timeoutMs: 60_000 }, { timeoutMs: 70_000 }));
    return { terminalId, exec };
  };
}

/**
 * For a test file: an embedded runtime (sandboxed terminals where bwrap is installed) with `terminal` as its
 * `domains.terminal` config, made before the file's tests and stopped after them; the attack count printed; and
 * a first test that the limit `key` is enforced where `controller`'s v1 hierarchy is writable (else that the
 * runtime warned it is not). Read `rt()` inside tests.
 */
export function limitSuite(file: string, controller: CgroupController, key: string, terminal: Record<string, unknown>) {
  const where = ownCgroup(controller);
  let runtime: TestRuntime | undefined;
  const rt = () => {
    if (!runtime) throw new Error('the runtime is not started (or was stopped)');
    return runtime;
  };
  const sockets = agentSockets(rt);
  beforeAll(async () => {
    runtime = await startTestRuntime({
      mode: 'embedded',
      sandbox: 'auto',
      logLevel: 'warn',
      flags: { domains: { terminal } },
    });
  }, 60_000);
  afterAll(async () => {
    await sockets.closeAll();
    await runtime?.dispose(); // unless a test stopped it
  });
  reportAttacks(file);
  describe(`domains.terminal.${key}`, () => {
    const here = where.ok ? 'here' : where.reason;
    it(`is enforced where a cgroup v1 ${controller} hierarchy is writable (${here})`, () => {
      const warned = rt().logs.some((l) => String(l['msg']).includes(`${key} is not enforced`));
      expect(warned).toBe(!where.ok);
      if (where.ok) expect(existsSync(runtimeCgroup(where))).toBe(true);
    });
  });
  return {
    where,
    rt,
    sockets,
    runtimeCgroup: () => runtimeCgroup(where),
    agentWithTerminal: agentTerminals(rt, sockets),
    /** Stops the runtime (a test of what its stop leaves behind). */
    async stop() {
      await sockets.closeAll();
      const stopping = rt();
      runtime = undefined;
      await stopping.dispose();
    },
  };
}

/**
 * For a file testing AgentCgroups itself: whether both v1 hierarchies are writable here, the limits and logger it
 * opens with, and `shared()`, the one instance the file's tests share (disposed after them).
 */
export function sharedAgentCgroups() {
  const limits = { maxProcessesPerAgent: 512, maxMemoryPerAgent: 1 << 30, maxMemoryAllAgents: 2 ** 31 };
  const log = pino({ level: 'silent' });
  let cgroups: AgentCgroups | undefined;
  afterAll(() => cgroups?.dispose());
  const writable = ownCgroup('pids').ok && ownCgroup('memory').ok;
  return { writable, limits, log, shared: () => (cgroups ??= AgentCgroups.open(limits, 'main', log)) };
}
