/**
 * An embedded runtime's socket clients when the runtime stops answering: a real `skein up --embedded`
 * process is SIGSTOPped (a call must fail by its own timeout, not hang) and SIGKILLed (calls in flight and
 * later calls fail at once with a retryable `unavailable`). Before, a call after the death was still
 * pending at 15 s despite `timeoutMs: 2000`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeError } from '../../schemas/index.ts';
import { RequestTimeoutError } from '../../infra/transport/bus.ts';
import { call } from '../../infra/transport/client.ts';
import type { SocketBus } from '../../infra/transport/socket-bus.ts';
import { operatorSocket } from '../support/socket.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

let dir: string;
let host: HostProcess;
let bus: SocketBus;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skein-fault-socket-'));
  host = await startHost({ dir, mode: 'embedded' });
  bus = await operatorSocket(join(dir, 'data'));
}, 60_000);

afterAll(async () => {
  await bus?.close();
  if (host?.alive()) {
    process.kill(host.child.pid!, 'SIGCONT');
    await host.stop();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('embedded clients when the runtime stops answering', () => {
  it('honours the timeout of a call to a stopped runtime, then fails at once after it dies', async () => {
    expect((await call(bus, 'main', 'runtime.ping', {}, { timeoutMs: 5_000 })).ok).toBe(true);
    process.kill(host.child.pid!, 'SIGSTOP');
    let started = performance.now();
    await expect(call(bus, 'main', 'runtime.ping', {}, { timeoutMs: 2_000 })).rejects.toBeInstanceOf(
      RequestTimeoutError,
    );
    const timedOutAfter = performance.now() - started;
    expect(timedOutAfter).toBeGreaterThanOrEqual(1_900);
    expect(timedOutAfter).toBeLessThan(4_000);

    const inFlight = call(bus, 'main', 'runtime.ping', {}, { timeoutMs: 30_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    process.kill(host.child.pid!, 'SIGKILL');
    await host.exited;
    started = performance.now();
    const gone = await inFlight;
    expect(gone).toBeInstanceOf(RuntimeError);
    expect((gone as RuntimeError).code).toBe('unavailable');
    const later = await call(bus, 'main', 'runtime.ping', {}, { timeoutMs: 2_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((later as RuntimeError).code).toBe('unavailable');
    expect((later as Error).message).toContain('skein up');
    const failedAfter = performance.now() - started;
    console.log(
      `embedded client: timeout after ${timedOutAfter.toFixed(0)} ms; after death ${failedAfter.toFixed(0)} ms`,
    );
    expect(failedAfter).toBeLessThan(1_000);
  }, 60_000);
});
