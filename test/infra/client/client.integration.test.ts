/**
 * The typed client SDK (`skein/client`) against real runtimes in each mode:
 * networked (a NATS URL), private broker and embedded (found from the data
 * dir's runtime.json; the latter over the unix socket). Calls return typed
 * replies, refusals throw `SkeinCallError` with the reply's code, and facts
 * arrive typed by fact type.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { connect, type SkeinClient, SkeinCallError, type TypedFact } from '../../../infra/client/index.ts';
import type { AgentId } from '../../../schemas/index.ts';
import { startNetworkedRuntime, startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

async function exercise(skein: SkeinClient): Promise<void> {
  const main = skein.agent('main');
  const pong = await main.runtime.ping({});
  expect(pong).toEqual({ pong: true });

  const finished: Array<TypedFact<'terminal.command.finished'>> = [];
  const stop = main.on('terminal.command.finished', (fact) => finished.push(fact));
  const { terminalId } = await main.terminal.open({});
  const run = await main.terminal.exec({ terminalId, command: 'echo typed' });
  expectTypeOf(run.exitCode).toEqualTypeOf<number | null>();
  expect(run).toMatchObject({ status: 'exited', exitCode: 0 });
  expect(run.output.trim()).toBe('typed');
  await expect.poll(() => finished.length, { timeout: 10_000 }).toBeGreaterThan(0);
  expect(finished[0]!.data).toMatchObject({ terminalId, exitCode: 0 });
  expectTypeOf(finished[0]!.data.durationMs).toEqualTypeOf<number>();
  stop();
  await main.terminal.close({ terminalId });

  // A refusal is thrown, typed, with the code from the reply.
  const refused = await skein
    .agent('nobody')
    .agent.get({})
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  expect(refused).toBeInstanceOf(SkeinCallError);
  expect((refused as SkeinCallError).code).toBe('unknown_agent');
  const missing = await main.file.read({ path: 'no-such-file.txt' }).catch((err: unknown) => err);
  expect((missing as SkeinCallError).code).toBe('not_found');
  // Bad data is refused by the host with the field named, never sent half-typed.
  const bad = await main.terminal.exec({ terminalId, command: '' }).catch((err: unknown) => err);
  expect((bad as SkeinCallError).code).toBe('invalid_message');
  expect((bad as SkeinCallError).message).toMatch(/command/);

  // Multi-word verbs are camel-cased: terminal.pause-all → terminal.pauseAll.
  expect(await main.terminal.pauseAll({})).toHaveProperty('terminalIds');
  expect(await main.terminal.resumeAll({})).toHaveProperty('terminalIds');
}

describe('skein/client', () => {
  const runtimes: TestRuntime[] = [];
  afterAll(async () => {
    for (const rt of runtimes) await rt.dispose();
  });

  it('works in networked mode (a NATS URL)', async () => {
    const rt = await startNetworkedRuntime();
    runtimes.push(rt);
    const skein = await connect({ natsUrl: rt.info.natsUrl! });
    try {
      expect(skein.bus.kind).toBe('nats');
      await exercise(skein);
    } finally {
      await skein.close();
    }
  });

  it('works with a private broker, found from runtime.json', async () => {
    const rt = await startTestRuntime({ mode: 'embedded', flags: { mode: 'private' } });
    runtimes.push(rt);
    expect(rt.info.mode).toBe('private');
    const skein = await connect({ dataDir: join(rt.dir, 'data') });
    try {
      expect(skein.bus.kind).toBe('nats');
      expect(skein.rootAgentId).toBe('main');
      await exercise(skein);
    } finally {
      await skein.close();
    }
  });

  it('works in embedded mode, over the unix socket', async () => {
    const rt = await startTestRuntime({ mode: 'embedded' });
    runtimes.push(rt);
    const skein = await connect({ dataDir: join(rt.dir, 'data') });
    try {
      expect(skein.bus.kind).toBe('socket');
      await exercise(skein);
    } finally {
      await skein.close();
    }
  });

  it("delivers facts stored inside another (a command's, an edit's records) as if stored alone", async () => {
    const rt = await startNetworkedRuntime();
    runtimes.push(rt);
    const skein = await connect({ natsUrl: rt.info.natsUrl! });
    try {
      const main = skein.agent('main');
      await main.agent.spawn({ label: 'kid', agentId: 'kid' as AgentId });
      const kid = skein.agent('kid');
      const everywhere: Array<TypedFact<'action-log.change.recorded'>> = [];
      const kids: Array<TypedFact<'action-log.change.recorded'>> = [];
      const stops = [
        skein.on('action-log.change.recorded', (f) => everywhere.push(f)),
        kid.on('action-log.change.recorded', (f) => kids.push(f)),
      ];
      await skein.bus.flush();
      const { terminalId } = await kid.terminal.open({});
      await kid.terminal.exec({ terminalId, command: 'echo made > made.txt' });
      await kid.file.write({ path: 'written.txt', content: 'written\n' });
      // Each change is recorded in kid's log and main's: two records each, carried by action-log.shell.recorded
      // and by edit.applied, on kid's subjects.
      const seen = (fs: typeof everywhere) =>
        fs.map((f) => `${f.data.logAgentId} ${f.data.path.split('/').pop()} ${f.data.source.kind}`).sort();
      await expect
        .poll(() => seen(everywhere), { timeout: 10_000 })
        .toEqual(['kid made.txt shell', 'kid written.txt write', 'main made.txt shell', 'main written.txt write']);
      for (const f of everywhere)
        expect(f.subject).toBe(`skein.evt.${f.data.logAgentId}.action-log.${f.data.logAgentId}`);
      // An agent's own subscription gets what lands on its own subjects: its log's records, not main's.
      expect(seen(kids)).toEqual(['kid made.txt shell', 'kid written.txt write']);
      for (const stop of stops) stop();
    } finally {
      await skein.close();
    }
  });

  it('says where it looked when no runtime serves the directory', async () => {
    const rt = await startTestRuntime({ mode: 'embedded' });
    runtimes.push(rt);
    const empty = join(rt.dir, 'elsewhere', 'deep');
    mkdirSync(join(rt.dir, 'elsewhere', '.skein'), { recursive: true });
    await expect(connect({ cwd: empty })).rejects.toThrow(/no runtime found for .*elsewhere.*skein up/);
  });
});
