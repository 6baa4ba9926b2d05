/**
 * A full disk under JetStream: a real nats-server whose store is an 8 MiB tmpfs and a real `skein up`
 * process (networked, `--unhandled-rejections=strict`). `skein up` starts on the small disk (the output
 * stream's max_bytes is fitted to it), writes are refused as a retryable `unavailable` quickly (not after
 * 15 s timeouts), the host does not crash, and it works again once space returns (nats-server, which
 * sizes its storage at start, is restarted by the operator; skein is not). Skipped, with the
 * reason printed, where a tmpfs cannot be mounted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { call } from '../../infra/transport/client.ts';
import { JetStreamLog } from '../../infra/transport/jetstream-log.ts';
import { NatsBus } from '../../infra/transport/nats-bus.ts';
import { mountTmpfs } from '../support/tmpfs.ts';
import { startBroker, startHost, type Broker, type HostProcess } from './fault-harness.ts';

const disk = mountTmpfs(8 * 1024 * 1024);
const skip = typeof disk === 'string' ? disk : undefined;
if (skip) console.warn(`skipping the JetStream disk-full fault test: ${skip}`);
const dir = mkdtempSync(join(tmpdir(), 'skein-fault-jsdisk-'));
let broker: Broker | undefined;
let host: HostProcess | undefined;
let client: NatsBus | undefined;

afterAll(async () => {
  await client?.close();
  await host?.stop();
  await broker?.stop();
  if (typeof disk !== 'string') disk.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip !== undefined)('disk full, JetStream store on an 8 MiB tmpfs', () => {
  it('starts on the small disk, refuses writes quickly as unavailable, survives and recovers', async () => {
    if (typeof disk === 'string') return;
    broker = await startBroker(join(disk.path, 'js'));
    host = await startHost({ dir, mode: 'networked', natsUrl: broker.url });
    client = await NatsBus.connect(broker.url, 'fault-client');
    const write = (path: string, content: string) =>
      call(client!, 'main', 'file.write', { path, content }, { timeoutMs: 30_000 });
    expect((await write('ok.txt', 'ok\n')).ok).toBe(true);

    const big = 'x'.repeat(200_000);
    const codes: string[] = [];
    let slowest = 0;
    for (let i = 0; i < 60 && !codes.includes('unavailable'); i++) {
      const started = performance.now();
      const reply = await write(`big-${i}.txt`, `${big}${i}\n`);
      slowest = Math.max(slowest, performance.now() - started);
      codes.push(reply.ok ? 'ok' : reply.error.code);
      expect(host.alive(), host.output().slice(-3000)).toBe(true);
    }
    console.log(
      `JetStream disk full: ${codes.filter((c) => c === 'ok').length} writes before refusal, ` +
        `then ${codes.at(-1)}; slowest reply ${slowest.toFixed(0)} ms`,
    );
    expect(codes).toContain('unavailable');
    expect(slowest).toBeLessThan(10_000);

    // Space returns. skein's facts cannot be deleted (deny_delete), so room comes from the disk growing;
    // nats-server sizes JetStream's storage when it starts, so the operator restarts it — skein is not
    // restarted: the host reconnects and appends resume by themselves.
    execFileSync('mount', ['-o', 'remount,size=64m', disk.path]);
    await broker.stop();
    await broker.start();
    let recovered = false;
    for (let i = 0; i < 60 && !recovered; i++) {
      recovered = await write('after.txt', 'after\n').then(
        (r) => r.ok,
        () => false, // the client's own connection is still reconnecting
      );
      if (!recovered) await sleep(500);
    }
    expect(recovered, host.output().slice(-3000)).toBe(true);
    const status = await call(client, 'main', 'runtime.status', {}, { timeoutMs: 10_000 });
    const log = await JetStreamLog.open(client.nc);
    expect((await replayLog(log, AGGREGATES)).digest).toBe(status.ok ? status['digest'] : undefined);
  }, 180_000);
});
