/**
 * @module
 * What the per-agent limit attacks share (process-limit and memory-limit): where this test process sits in a v1
 * hierarchy, the runtime's cgroup below it, a terminal's leaf, a count in a control file, and a sub-agent with
 * its own socket and a terminal.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { cgroupV1Dir, type CgroupController, type CgroupDir } from '../../machines/terminal/cgroup-v1.ts';
import { call } from '../../infra/transport/client.ts';
import { ok } from '../support/replies.ts';
import type { TestRuntime } from '../support/runtime.ts';
import type { agentSockets } from './support.ts';

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
