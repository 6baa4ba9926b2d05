/**
 * Private mode: `skein up --private` owns its nats-server. When that server is SIGKILLed, the runtime
 * starts it again on the same port and store, points runtime.json at the new pid, and clients work again
 * without restarting skein (before: the host exited 2.9 s later with code 13 and left runtime.json).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { NatsBus } from '../../infra/transport/nats-bus.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

let dir: string;
let host: HostProcess;
const info = () =>
  JSON.parse(readFileSync(join(dir, 'data', 'runtime.json'), 'utf8')) as { natsUrl: string; natsServerPid: number };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skein-fault-private-'));
  host = await startHost({ dir, mode: 'private' });
}, 60_000);
afterAll(async () => {
  await host?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('private broker killed', () => {
  it('is restarted by the runtime on the same port; clients recover without restarting skein', async () => {
    const before = info();
    const client = await NatsBus.connect(before.natsUrl, 'fault-client');
    try {
      expect((await call(client, 'main', 'file.write', { path: 'a.txt', content: 'a\n' })).ok).toBe(true);
      process.kill(before.natsServerPid, 'SIGKILL');
      let ok = false;
      for (let i = 0; i < 80 && !ok; i++) {
        await sleep(250);
        ok = await call(client, 'main', 'file.write', { path: 'b.txt', content: 'b\n' }, { timeoutMs: 3_000 }).then(
          (r) => r.ok,
          () => false,
        );
      }
      expect(ok, host.output().slice(-3000)).toBe(true);
      expect(host.alive()).toBe(true);
      const after = info();
      expect(after.natsUrl).toBe(before.natsUrl);
      expect(after.natsServerPid).not.toBe(before.natsServerPid);
      const messages = host.logLines().map((l) => String(l.msg));
      expect(messages).toContain('private nats-server exited; starting it again');
      expect(messages).toContain('private nats-server running again');
    } finally {
      await client.close();
    }
  }, 60_000);
});
