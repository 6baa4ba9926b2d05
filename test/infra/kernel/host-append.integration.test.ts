/**
 * The reply waits for durable appends: a failed append is retried with the
 * same msg-id, and a final failure becomes an error reply plus a
 * `host.append.failed` health fact — never a silent drop. A read asked by a
 * client that saw a fact on the bus (published before its ack) answers from a
 * state that holds it. The log under test is the real JSONL log with faults
 * (failures, slow acks) injected in front of it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { COMMANDS, type StoredFact } from '../../../schemas/index.ts';
import { AgentService } from '../../../actors/agent/agent.ts';
import { AgentDirectory } from '../../../actors/agent/agent-directory.ts';
import { agentDomain } from '../../../infra/agent/domain.ts';
import type { AnyDomain } from '../../../infra/kernel/domain.ts';
import { AgentsConfig } from '../../../schemas/index.ts';
import { call } from '../../../infra/transport/client.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { EmbeddedBus } from '../../../infra/transport/embedded-bus.ts';
import type { AppendRequest, EventLog } from '../../../infra/transport/event-log.ts';
import { Host } from '../../../infra/kernel/host.ts';
import { READ_SETTLE_MS } from '../../../schemas/message.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';

/** Fails appends of `type` `times` times (Infinity: always), then passes them to the real log. */
function faulty(log: EventLog, type: string, times: number): EventLog & { attempts: string[] } {
  let left = times;
  const attempts: string[] = [];
  return {
    kind: log.kind,
    attempts,
    append(request: AppendRequest) {
      if (request.fact.type === type) {
        attempts.push(request.fact.id);
        if (left-- > 0) return Promise.reject(new Error('disk on fire'));
      }
      return log.append(request);
    },
    read: (o) => log.read(o),
    scan: (o, visit) => log.scan(o, visit),
    lastSeq: (s) => log.lastSeq(s),
    close: () => log.close(),
  };
}

/**
 * Stores every append at once (so it is published on the bus) and holds back the ack of those of `type`
 * until `release()`, as a loaded broker does.
 */
function slowAck(log: EventLog, type: string): EventLog & { release: () => void; held: () => number } {
  const held: Array<() => void> = [];
  return {
    kind: log.kind,
    release() {
      for (const go of held.splice(0)) go();
    },
    held: () => held.length,
    async append(request: AppendRequest) {
      const result = await log.append(request);
      if (request.fact.type !== type) return result;
      await new Promise<void>((resolve) => held.push(resolve));
      return result;
    },
    read: (o) => log.read(o),
    scan: (o, visit) => log.scan(o, visit),
    lastSeq: (s) => log.lastSeq(s),
    close: () => log.close(),
  };
}

async function setup<L extends EventLog>(wrap: (real: EventLog) => L, extra: { maxInFlightPerAgent?: number } = {}) {
  const dir = tempDir('skein-append-');
  const bus = new EmbeddedBus();
  const real = await JsonlLog.open({ dir: dir.path, bus });
  const log = wrap(real);
  const { logger, lines } = memoryLogger('warn');
  const host = new Host({
    bus,
    log,
    logger,
    hostId: 'h-test',
    aggregates: AGGREGATES,
    commands: COMMANDS,
    maxPayloadBytes: 1 << 20,
    commandCacheSize: 100,
    appendRetries: 2,
    appendRetryDelayMs: 1,
    ...extra,
  });
  const agents = new AgentService({
    directory: new AgentDirectory(host),
    locks: host.locks,
    config: AgentsConfig.parse({}),
    validatePolicy: () => undefined,
    setSpawnPolicy: async () => undefined,
    release: [],
  });
  host.register(agentDomain(agents));
  // Every other command answers {} (this test is about appends); a gate that allows everything.
  const rest: AnyDomain = {
    name: 'rest',
    gate: async () => undefined,
    commands: Object.fromEntries(
      COMMANDS.filter((c) => !c.type.startsWith('agent.')).map((c) => [
        c.type,
        c.type === 'runtime.ping' ? async () => ({ pong: true }) : async () => ({}),
      ]),
    ),
  };
  host.register(rest);
  await host.start();
  // The root, written straight to the real log.
  await real.append({
    stream: 'events',
    subject: 'skein.evt.main.agent.main',
    fact: {
      id: 'root',
      type: 'agent.spawned',
      at: new Date().toISOString(),
      agentId: 'main' as never,
      data: {
        agentId: 'main',
        parentId: null,
        label: 'root',
        workspace: '/w',
        depth: 0,
        task: null,
        hasPolicy: false,
        worker: null,
      },
    },
  });
  const facts: StoredFact[] = [];
  for await (const f of real.read()) host.writer.restore(f);
  await host.serve();
  return {
    host,
    bus,
    log,
    lines,
    facts,
    async all() {
      const out: StoredFact[] = [];
      for await (const f of real.read()) out.push(f);
      return out;
    },
    async dispose() {
      await host.stop();
      await real.close();
      dir.dispose();
    },
  };
}

describe('host appends', () => {
  let env: Awaited<ReturnType<typeof setup<EventLog & { attempts: string[] }>>> | undefined;
  afterEach(async () => env?.dispose());

  it('retries a failed append with the same msg-id and replies ok once it is stored', async () => {
    env = await setup((real) => faulty(real, 'agent.spawned', 1));
    const reply = await call(env.bus, 'main', 'agent.spawn', { label: 'x', agentId: 'kid' });
    expect(reply).toMatchObject({ ok: true, agentId: 'kid' });
    expect(env.log.attempts).toHaveLength(2);
    expect(new Set(env.log.attempts).size).toBe(1);
    const stored = (await env.all()).filter(
      (f) => f.type === 'agent.spawned' && (f.data as { agentId: string }).agentId === 'kid',
    );
    expect(stored).toHaveLength(1);
    expect(env.lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'append failed; retrying with the same msg-id',
        event: 'agent.spawned',
      }),
    );
  });

  it('turns a final failure into an error reply and a health fact; the state is untouched', async () => {
    env = await setup((real) => faulty(real, 'agent.spawned', Infinity));
    const reply = await call(env.bus, 'main', 'agent.spawn', { label: 'x', agentId: 'ghost' });
    expect(reply).toMatchObject({ ok: false, error: { code: 'append_failed', retryable: true } });
    if (!reply.ok)
      expect(reply.error.message).toMatch(
        /'agent\.spawned' could not be appended .* after 3 attempts \(disk on fire\)/,
      );
    expect(env.host.agentExists('ghost')).toBe(false);
    const health = (await env.all()).filter((f) => f.type === 'host.append.failed');
    expect(health).toHaveLength(1);
    expect(health[0]).toMatchObject({
      subject: 'skein.evt.main.host.h-test',
      data: { hostId: 'h-test', factType: 'agent.spawned', subject: 'skein.evt.main.agent.ghost', attempts: 3 },
    });
    expect(await call(env.bus, 'main', 'runtime.ping', {})).toEqual({ ok: true, pong: true });
  });
});

describe('a read after a fact seen on the bus', () => {
  let env: Awaited<ReturnType<typeof setup<ReturnType<typeof slowAck>>>> | undefined;
  afterEach(async () => {
    env?.log.release();
    await env?.dispose();
  });

  /** Spawns `kid` with its ack held; resolves once `agent.spawned` is on the bus, with the spawn's reply to come. */
  async function spawnSeen(e: NonNullable<typeof env>, kid: string) {
    const seen = new Promise<void>((resolve) => {
      const sub = e.bus.subscribe('skein.evt.>', (msg) => {
        if (msg.subject.endsWith(`.agent.${kid}`)) {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    const spawned = call(e.bus, 'main', 'agent.spawn', { label: kid, agentId: kid });
    await seen;
    expect(e.log.held()).toBe(1);
    return { spawned };
  }

  it('agent.get and agent.tree answer once the fact the client saw is folded, not before', async () => {
    env = await setup((real) => slowAck(real, 'agent.spawned'));
    const e = env;
    const { spawned } = await spawnSeen(e, 'kid');
    // The client read what it saw; the ack comes 300 ms later, as under load.
    const started = Date.now();
    setTimeout(() => e.log.release(), 300);
    const [got, tree] = await Promise.all([call(e.bus, 'kid', 'agent.get', {}), call(e.bus, 'main', 'agent.tree', {})]);
    expect(got).toMatchObject({ ok: true, agentId: 'kid' });
    expect(JSON.stringify(tree)).toContain('"kid"');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(await spawned).toMatchObject({ ok: true, agentId: 'kid' });
  });

  it('waits at most READ_SETTLE_MS for an ack that does not come, then answers from what is folded', async () => {
    env = await setup((real) => slowAck(real, 'agent.spawned'));
    const e = env;
    const { spawned } = await spawnSeen(e, 'late');
    const started = Date.now();
    const got = await call(e.bus, 'late', 'agent.get', {});
    const waited = Date.now() - started;
    expect(got).toMatchObject({ ok: false, error: { code: 'unknown_agent' } });
    expect(waited).toBeGreaterThanOrEqual(READ_SETTLE_MS - 50);
    expect(waited).toBeLessThan(READ_SETTLE_MS + 2_000);
    // A command that is not a read does not wait for it.
    const t = Date.now();
    expect(await call(e.bus, 'main', 'runtime.ping', {})).toMatchObject({ ok: true });
    expect(Date.now() - t).toBeLessThan(READ_SETTLE_MS / 2);
    e.log.release();
    expect(await spawned).toMatchObject({ ok: true });
    expect(await call(e.bus, 'late', 'agent.get', {})).toMatchObject({ ok: true, agentId: 'late' });
  });

  it("a waiting read holds its agent's command slot: a flood of reads is refused, not queued", async () => {
    env = await setup((real) => slowAck(real, 'agent.spawned'), { maxInFlightPerAgent: 2 });
    const e = env;
    const { spawned } = await spawnSeen(e, 'busy');
    const waiting = [call(e.bus, 'busy', 'agent.get', {}), call(e.bus, 'busy', 'agent.tree', {})];
    await new Promise((r) => setTimeout(r, 100));
    const asked = Date.now();
    expect(await call(e.bus, 'busy', 'terminal.list', {})).toMatchObject({
      ok: false,
      error: { code: 'limit_exceeded' },
    });
    // Refused at once, not after the waiting reads gave up their slots (READ_SETTLE_MS): half of it leaves room for
    // a loaded CI machine and still tells the two apart.
    expect(Date.now() - asked).toBeLessThan(READ_SETTLE_MS / 2);
    e.log.release();
    for (const reply of await Promise.all(waiting)) expect(reply).toMatchObject({ ok: true });
    expect(await spawned).toMatchObject({ ok: true });
  });
});
