/**
 * @module
 * A worker's own credentials on disk: one `.creds` file per worker in
 * `<data>/auth/workers/` (dir 0700, file 0600), outside the workspace, named
 * in the worker's env as SKEIN_NATS_CREDS and removed when the worker exits
 * or its agent finishes. Nothing broader (host, operator) is ever handed out.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { writePrivate } from './authority.ts';
import { authDir } from './broker.ts';

export function writeWorkerCreds(dataDir: string, agentId: string, creds: string): string {
  const dir = join(authDir(dataDir), 'workers');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${agentId}-${randomBytes(4).toString('hex')}.creds`);
  writePrivate(path, creds);
  return path;
}

export function removeWorkerCreds(path: string | undefined): void {
  if (path) rmSync(path, { force: true });
}
