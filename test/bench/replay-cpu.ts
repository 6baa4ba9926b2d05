/**
 * @module
 * Where a replay's time goes (issue 15: fold ≥ 0.8× a raw ordered read + JSON.parse): a private nats-server,
 * FACTS agent.spawned facts on 1,000 subjects (as host.bench.ts writes them), then rounds of the raw read +
 * parse and of `replayLog`, alternated; `SKEIN_REPLAY_PROFILE=<file.cpuprofile>` profiles the folds alone
 * (`cpu-profile-summary.ts` sums it). `node --import tsx test/bench/replay-cpu.ts [facts] [rounds]`.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replayLog } from '../../infra/kernel/replay.ts';
import { CONSUME_PULL, JetStreamLog } from '../../infra/transport/jetstream-log.ts';
import { startTestNats } from '../support/nats-server.ts';
import { writeReplayFacts } from './host.bench.ts';

const FACTS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const PROFILE = process.env['SKEIN_REPLAY_PROFILE'];

const nats = await startTestNats();
const nc = await connect({ servers: nats.url });
try {
  const log = await JetStreamLog.open(nc);
  const js = jetstream(nc);
  await writeReplayFacts(js, FACTS);
  const dec = new TextDecoder();
  const rawRead = async () => {
    const t0 = performance.now();
    let count = 0;
    const consumer = await js.consumers.get('SKEIN_EVENTS', { deliver_policy: 'all' });
    const messages = await consumer.consume({ ...CONSUME_PULL });
    for await (const m of messages) {
      count += (JSON.parse(dec.decode(m.data)) as { id?: string }).id ? 1 : 0;
      if (m.info.pending === 0) break;
    }
    messages.stop();
    return count / ((performance.now() - t0) / 1000);
  };
  const inspector = PROFILE ? new Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
  }
  for (let round = 0; round < ROUNDS; round++) {
    const raw = await rawRead();
    if (inspector) await inspector.post('Profiler.start');
    const t0 = performance.now();
    const folded = await replayLog(log, AGGREGATES);
    const fold = folded.facts / ((performance.now() - t0) / 1000);
    if (inspector) {
      const { profile } = await inspector.post('Profiler.stop');
      if (round === ROUNDS - 1) writeFileSync(PROFILE!, JSON.stringify(profile));
    }
    process.stdout.write(
      `round ${round + 1}: read+parse ${raw.toFixed(0)}/s, fold ${fold.toFixed(0)}/s, ${(fold / raw).toFixed(2)}×\n`,
    );
  }
} finally {
  await nc.close();
  await nats.dispose();
}
