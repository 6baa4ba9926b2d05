/**
 * @module
 * Foundation benchmarks, each against a raw nats.js baseline in the same run:
 * appends through the host's FactWriter vs raw JetStream publishes with the
 * same number in flight; replay fold vs a raw ordered-consumer read; a no-op
 * command round trip vs raw request/reply.
 */
import { randomUUID } from 'node:crypto';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { encode } from '../../infra/transport/codec.ts';
import { call } from '../../infra/transport/client.ts';
import { CONSUME_PULL, JetStreamLog } from '../../infra/transport/jetstream-log.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { startTestNats } from '../support/nats-server.ts';
import { startTestRuntime } from '../support/runtime.ts';
import { percentile, scaled, type Bench, type BenchResult } from './types.ts';

const IN_FLIGHT = scaled(64, 8);
const APPENDS = scaled(6_400, 64);
const REPLAY_FACTS = scaled(100_000, 500);
const ROUND_TRIPS = scaled(2_000, 20);

function spawnedData(i: number) {
  return { agentId: `a${i}`, parentId: 'main', label: `agent ${i}`, workspace: '/tmp/ws', depth: 1 };
}

/** Runs `total` tasks keeping `width` in flight; returns elapsed ms. */
async function pool(total: number, width: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < total) await task(next++);
    }),
  );
  return performance.now() - t0;
}

/** A stored `agent.spawned` of agent a<i>, encoded as the log holds it. */
function spawnedPayload(i: number): Uint8Array {
  return encode({
    id: randomUUID(),
    type: 'agent.spawned',
    at: new Date().toISOString(),
    agentId: 'main',
    data: spawnedData(i),
  });
}

/** The replay bench's facts (also replay-cpu.ts's): `count` agent.spawned on 1,000 subjects, 256 in flight. */
export function writeReplayFacts(js: JetStreamClient, count: number): Promise<number> {
  return pool(count, 256, (i) => js.publish(`skein.evt.main.agent.r${i % 1000}`, spawnedPayload(i)));
}

export const bench: Bench = {
  name: 'host (foundation)',
  async run() {
    const results: BenchResult[] = [];
    const nats = await startTestNats();
    const rt = await startTestRuntime({ mode: 'networked', natsUrl: nats.url });
    const nc = await connect({ servers: nats.url });
    const js = jetstream(nc);
    try {
      // 1. Appends: the host's writer (stamp, validate, per-subject OCC, fold) vs raw publish, 64 in flight,
      // over the same 64 subjects. Rounds alternate and the median is kept: the VM is noisy.
      const rawRates: number[] = [];
      const hostRates: number[] = [];
      for (let round = 0; round < 3; round++) {
        const rawMs = await pool(APPENDS, IN_FLIGHT, (i) =>
          js.publish(`skein.evt.main.agent.raw${i % IN_FLIGHT}`, spawnedPayload(i), { msgID: randomUUID() }),
        );
        rawRates.push(APPENDS / (rawMs / 1000));
        const hostMs = await pool(APPENDS, IN_FLIGHT, (i) =>
          rt.host.emit(
            { type: 'agent.spawned', data: { ...spawnedData(i), agentId: `h${i % IN_FLIGHT}` } },
            { agentId: 'main' as never },
          ),
        );
        hostRates.push(APPENDS / (hostMs / 1000));
      }
      const rawRate = percentile(rawRates, 50);
      const hostRate = percentile(hostRates, 50);
      results.push({
        name: `event append through the host (${IN_FLIGHT} in flight, ${IN_FLIGHT} aggregates, median of 3)`,
        value: hostRate,
        unit: 'facts/s',
        baseline: rawRate,
        ratio: hostRate / rawRate,
        target: '≥ 0.7×',
        met: hostRate / rawRate >= 0.7,
      });

      // 2. Replay: 100k facts folded vs read raw with an ordered consumer.
      const existing = await rt.log.lastSeq();
      await writeReplayFacts(js, REPLAY_FACTS - existing);
      const log = await JetStreamLog.open(nc);
      const total = await log.lastSeq();
      const rawReadRates: number[] = [];
      const parseReadRates: number[] = [];
      const foldRates: number[] = [];
      /** Reads the whole stream with an ordered consumer, `JSON.parse`ing each message or not. */
      const rawRead = async (parse: boolean) => {
        const t0 = performance.now();
        let count = 0;
        const consumer = await js.consumers.get('SKEIN_EVENTS', { deliver_policy: 'all' });
        const messages = await consumer.consume({ ...CONSUME_PULL });
        for await (const m of messages) {
          if (parse) count += (JSON.parse(dec.decode(m.data)) as { id?: string }).id ? 1 : 0;
          else count += m.data.length > 0 ? 1 : 0;
          if (m.info.pending === 0) break;
        }
        messages.stop();
        return count / ((performance.now() - t0) / 1000);
      };
      const dec = new TextDecoder();
      for (let round = 0; round < 3; round++) {
        rawReadRates.push(await rawRead(false));
        parseReadRates.push(await rawRead(true));
        const t0 = performance.now();
        const folded = await replayLog(log, AGGREGATES);
        foldRates.push(folded.facts / ((performance.now() - t0) / 1000));
      }
      const rawReadRate = percentile(rawReadRates, 50);
      const parseReadRate = percentile(parseReadRates, 50);
      const foldRate = percentile(foldRates, 50);
      results.push({
        name: `replay fold of ${total} facts vs raw ordered read + JSON.parse (median of 3)`,
        value: foldRate,
        unit: 'facts/s',
        baseline: parseReadRate,
        ratio: foldRate / parseReadRate,
        target: '≥ 0.8×',
        met: foldRate / parseReadRate >= 0.8,
        note: 'fold = decode + zod + transition + digest',
      });
      results.push({
        name: `replay fold of ${total} facts vs raw ordered read, no parse (median of 3)`,
        value: foldRate,
        unit: 'facts/s',
        baseline: rawReadRate,
        ratio: foldRate / rawReadRate,
      });

      // 3. No-op command round trip over NATS vs raw request/reply.
      nc.subscribe('bench.echo', {
        callback: (_e, m) => {
          m.respond(m.data);
        },
      });
      await nc.flush();
      const client = await connect({ servers: nats.url });
      const raw: number[] = [];
      const viaHost: number[] = [];
      const body = encode({ data: {} });
      for (let i = 0; i < ROUND_TRIPS; i++) {
        let s = performance.now();
        await client.request('bench.echo', body, { timeout: 5000 });
        raw.push(performance.now() - s);
        s = performance.now();
        await client.request('skein.cmd.main.runtime.ping', body, { timeout: 5000 });
        viaHost.push(performance.now() - s);
      }
      await client.close();
      const rawP50 = percentile(raw, 50);
      const hostP50 = percentile(viaHost, 50);
      results.push({
        name: 'no-op command round trip (runtime.ping) p50',
        value: hostP50 * 1000,
        unit: 'µs',
        baseline: rawP50 * 1000,
        ratio: hostP50 / rawP50,
        target: '≤ 1.5× (latency ratio, lower is better)',
        met: hostP50 / rawP50 <= 1.5,
        note:
          `p99 ${(percentile(viaHost, 99) * 1000).toFixed(0)} µs ` +
          `vs raw ${(percentile(raw, 99) * 1000).toFixed(0)} µs`,
      });
      void call;
    } finally {
      await nc.close();
      await rt.dispose();
      await nats.dispose();
    }
    return results;
  },
};
