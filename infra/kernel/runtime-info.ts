/**
 * @module
 * `<dataDir>/runtime.json`: what a running runtime tells its clients (mode, where to connect, the root
 * agent). Its own module so that a client finds the runtime without importing the kernel (`runtime.ts`
 * writes it and re-exports this).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { RuntimeMode } from '../../schemas/mode.ts';

/** What `skein up` writes to `<dataDir>/runtime.json` for clients. */
export const RuntimeInfo = z.object({
  pid: z.number().int(),
  hostId: z.string(),
  mode: RuntimeMode,
  natsUrl: z.string().optional(),
  socketPath: z.string().optional(),
  natsServerPid: z.number().int().optional(),
  websocketUrl: z.string().optional(),
  rootAgentId: z.string(),
  /** Networked mode with `--host`: this host's name, and the host serving the root agent. */
  host: z.string().optional(),
  rootHost: z.string().optional(),
  workspace: z.string(),
  dataDir: z.string(),
  startedAt: z.string(),
});
export type RuntimeInfo = z.infer<typeof RuntimeInfo>;

export function runtimeInfoPath(dataDir: string): string {
  return join(dataDir, 'runtime.json');
}

/** The runtime.json of a data dir, or undefined when none (or unreadable). */
export function readRuntimeInfo(dataDir: string): RuntimeInfo | undefined {
  const path = runtimeInfoPath(dataDir);
  if (!existsSync(path)) return undefined;
  try {
    const parsed = RuntimeInfo.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
