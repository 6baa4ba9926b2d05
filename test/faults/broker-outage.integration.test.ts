/**
 * Broker outages against a real `skein up` process (networked mode, `--unhandled-rejections=strict`) and
 * a real nats-server the test kills and restarts on the same port and store, while 3 clients write files:
 * - SIGKILL for 2 s, and for 30 s (far past the old limit of 10 reconnect attempts × 250 ms);
 * - SIGSTOP for 25 s (longer than the 5 s append timeout, so appends time out and are stored after SIGCONT:
 *   the in-doubt path).
 * Each time: the host survives, logs the outage and the recovery, clients recover without a restart, no
 * `conflict` storm, and the live digest equals a replay of the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { call } from '../../infra/transport/client.ts';
import { JetStreamLog } from '../../infra/transport/jetstream-log.ts';
import { NatsBus } from '../../infra/transport/nats-bus.ts';
import { startBroker, startHost, type Broker, type HostProcess } from './fault-harness.ts';

let dir: string;
let broker: Broker;
let host: HostProcess;
let client: NatsBus;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skein-fault-broker-'));
  broker = await startBroker(join(dir, 'nats'));
  host = await startHost({ dir, mode: 'networked', natsUrl: broker.url });
  client = await NatsBus.connect(broker.url, 'fault-client');
}, 60_000);

afterAll(async () => {
  await client?.close();
  await host?.stop();
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Tally = { ok: number; codes: Map<string, number> };

/** 3 writers, each overwriting its own file in a loop until `stop` is set. */
function writers(tag: string, stop: { done: boolean }): Promise<Tally> {
  const tally: Tally = { ok: 0, codes: new Map() };
  const one = async (w: number) => {
    let i = 0;
    while (!stop.done) {
      i++;
      try {
        const reply = await call(
          client,
          'main',
          'file.write',
          { path: `${tag}-${w}.txt`, content: `${tag} ${w} ${i}\n` },
          { timeoutMs: 8_000 },
        );
        if (reply.ok) tally.ok++;
        else {
          tally.codes.set(reply.error.code, (tally.codes.get(reply.error.code) ?? 0) + 1);
          if (reply.error.code === 'internal') console.log(reply.error.message);
        }
      } catch (err) {
        const name = (err as Error).name;
        tally.codes.set(name, (tally.codes.get(name) ?? 0) + 1);
        await sleep(100);
      }
    }
  };
  return Promise.all([0, 1, 2].map(one)).then(() => tally);
}

async function status(): Promise<{ digest: string; lastSeq: number }> {
  for (let attempt = 0; ; attempt++) {
    try {
      const reply = await call(client, 'main', 'runtime.status', {}, { timeoutMs: 5_000 });
      if (reply.ok) return reply as unknown as { digest: string; lastSeq: number };
    } catch (err) {
      if (attempt > 60) throw err;
    }
    await sleep(250);
  }
}

async function replayDigest(): Promise<string> {
  const bus = await NatsBus.connect(broker.url, 'fault-replay');
  try {
    const log = await JetStreamLog.open(bus.nc);
    return (await replayLog(log, AGGREGATES)).digest;
  } finally {
    await bus.close();
  }
}

async function outage(tag: string, fault: () => Promise<void>): Promise<Tally> {
  const stop = { done: false };
  const running = writers(tag, stop);
  await sleep(1_000);
  await fault();
  // Clients recover without a restart: the writers' facts land again once the broker is back (waited for
  // up to 30 s: a writer may be inside an 8 s timeout from the outage, longer on a loaded machine).
  const before = (await status()).lastSeq;
  let after = before;
  for (let waited = 0; after <= before && waited < 30_000; waited += 500) {
    await sleep(500);
    after = (await status()).lastSeq;
  }
  stop.done = true;
  const tally = await running;
  expect(host.alive(), host.output().slice(-4000)).toBe(true);
  expect(after).toBeGreaterThan(before);
  const reply = await call(client, 'main', 'file.write', { path: `${tag}-after.txt`, content: 'after\n' });
  expect(reply.ok, JSON.stringify(reply)).toBe(true);
  // Live state equals a replay of the log: nothing folded that is not stored, nothing stored unfolded.
  const settled = await status();
  expect(await replayDigest()).toBe(settled.digest);
  console.log(`${tag}: ${tally.ok} writes ok, failures ${JSON.stringify(Object.fromEntries(tally.codes))}`);
  // No conflict storm: at most one per writer around the fault.
  expect(tally.codes.get('conflict') ?? 0).toBeLessThanOrEqual(3);
  return tally;
}

const messages = () => host.logLines().map((l) => String(l.msg));

describe('broker outages (real nats-server, real host process)', () => {
  it('survives a 2 s SIGKILL of the broker', async () => {
    await outage('kill2', async () => {
      await broker.kill();
      await sleep(2_000);
      await broker.start();
    });
    expect(messages()).toContain(
      'broker connection lost; reconnecting with backoff (commands get unavailable meanwhile)',
    );
    expect(messages()).toContain('broker connection restored');
  }, 60_000);

  it('survives a 30 s SIGKILL of the broker', async () => {
    await outage('kill30', async () => {
      await broker.kill();
      await sleep(30_000);
      await broker.start();
    });
  }, 120_000);

  it('survives a 25 s SIGSTOP of the broker without wedging an aggregate', async () => {
    await outage('stop25', async () => {
      process.kill(broker.current()!.pid, 'SIGSTOP');
      await sleep(25_000);
      process.kill(broker.current()!.pid, 'SIGCONT');
    });
    expect(messages().filter((m) => m === 'fact not appended').length).toBeLessThan(50);
  }, 120_000);
});
