/**
 * @module
 * What a start checks before it opens anything: the workspace exists and is a directory, whether the data dir
 * sits inside it (shells there could reach the socket and the log), and what an earlier runtime left in the
 * data dir: a live one (refused: started by a skein that took no data-dir lock) or the private nats-server of
 * a dead one (stopped).
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isInside } from '../../machines/common/confine.ts';
import { isAlive, stopStaleNatsServer } from '../transport/nats-server.ts';
import type { LoadedConfig } from './config.ts';
import type { Logger } from 'pino';
import { readRuntimeInfo } from './runtime-info.ts';

/** Before anything is created: a workspace that is missing or not a directory is refused, named. */
export function assertWorkspace(workspace: string): void {
  const stat = statSync(workspace, { throwIfNoEntry: false });
  if (stat?.isDirectory()) return;
  throw new Error(
    `workspace '${workspace}' ${stat ? 'is not a directory' : 'does not exist'}: create it, or pass --workspace ` +
      '<dir> (default: the current directory)',
  );
}

/** Whether the data dir lies inside the workspace, where shells could reach the socket and the event log. */
export function dataDirInsideWorkspace(config: LoadedConfig): boolean {
  try {
    return isInside(realpathSync(config.workspace), realpathSync(config.dataDir));
  } catch {
    return false; // a missing workspace is reported when the root agent is created
  }
}

function isSkein(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('skein');
  } catch {
    return false;
  }
}

/**
 * `runtime.json` of a runtime still alive is refused (one started by a skein that took no lock); the private
 * nats-server a dead one left behind is stopped.
 */
export async function settlePreviousRuntime(dataDir: string, logger: Logger): Promise<void> {
  const previous = readRuntimeInfo(dataDir);
  if (previous && previous.pid !== process.pid && isAlive(previous.pid) && isSkein(previous.pid)) {
    throw new Error(
      `a runtime is already running on data dir ${dataDir} (pid ${previous.pid}); stop it, or pass another --data`,
    );
  }
  if (previous?.natsServerPid && (await stopStaleNatsServer(previous.natsServerPid, join(dataDir, 'jetstream')))) {
    logger.warn({ pid: previous.natsServerPid }, 'stopped the private nats-server a dead runtime left behind');
  }
}
