/**
 * @module
 * A private nats-server per test file: free loopback port, its own store
 * dir, stopped by PID. Never the machine's server on 4222.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from '../../infra/transport/nats-server.ts';

export type TestNats = NatsServerHandle & { dispose(): Promise<void> };

export async function startTestNats(): Promise<TestNats> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-nats-'));
  const server = await startNatsServer({ storeDir: join(dir, 'js') });
  return {
    ...server,
    async dispose() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
