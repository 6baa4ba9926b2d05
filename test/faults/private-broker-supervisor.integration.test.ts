/**
 * The private broker's supervisor, against a real `skein up --private` (`--unhandled-rejections=strict`):
 * SIGKILL of its nats-server is followed by a restart on the same port and store, one log line per change of
 * state, runtime.json naming the new pid; the host survives, a client that keeps its connection recovers
 * without a restart, no acknowledged write is lost, and the live digest equals a replay.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SkeinClient } from '../../infra/client/index.ts';
import { isAlive } from '../../infra/transport/nats-server.ts';
import { call } from '../../infra/transport/client.ts';
import { runCli } from '../support/cli.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'skein-fault-supervisor-'));
const dataDir = join(dir, 'data');
let host: HostProcess | undefined;
let client: SkeinClient | undefined;

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await host?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const pidOf = () =>
  (JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as { natsServerPid: number }).natsServerPid;

describe('private broker supervisor', () => {
  it('restarts a nats-server that was SIGKILLed; the host and its clients carry on', async () => {
    host = await startHost({ dir, mode: 'private', dataDir });
    client = await connect({ dataDir, cwd: dir, name: 'fault-supervisor' });
    const write = (i: number) =>
      call(client!.bus, 'main', 'file.write', { path: `s-${i}.txt`, content: `${i}\n` }, { timeoutMs: 3_000 }).catch(
        (err: Error) => ({ ok: false as const, error: { code: 'client', message: err.message, retryable: true } }),
      );
    expect((await write(0)).ok).toBe(true);
    const first = pidOf();
    process.kill(first, 'SIGKILL');

    const messages = () => host!.logLines().map((l) => String(l.msg));
    let i = 1;
    let acked = 0;
    for (; i < 200 && acked < 3; i++) {
      if ((await write(i)).ok) acked++;
      else await sleep(200);
    }
    expect(acked, host.output().slice(-3000)).toBe(3);
    expect(messages()).toContain('private nats-server died; restarting it');
    // The line carries the end of the dead server's stderr (a SIGKILL adds nothing: its start is there).
    const died = host!.logLines().find((l) => l.msg === 'private nats-server died; restarting it');
    expect(String(died?.['stderr'])).toContain('Server is ready');
    expect(messages()).toContain('private nats-server restarted');
    expect(host.alive()).toBe(true);
    const second = pidOf();
    expect(second).not.toBe(first);
    expect(isAlive(second)).toBe(true);

    // Nothing acknowledged is lost, and the log replays to the live state.
    const status = await runCli(['status', '--digest', '--data', dataDir]);
    const replayed = await runCli(['replay', '--digest', '--data', dataDir]);
    expect(status.code, status.stderr).toBe(0);
    expect(replayed.stdout).toBe(status.stdout);
    expect(readFileSync(join(dir, 'ws', 's-0.txt'), 'utf8')).toBe('0\n');
  }, 90_000);
});
