/**
 * Domains registered with a host (`defineDomain`, `registerDomains`): a
 * catalogue command without a handler does not compile and does not start;
 * handlers are typed from their CommandDefs; a command handled twice, a second
 * gate, an aggregate replay would not fold, or a registration after start is
 * refused; reactions see restored facts and live facts as they declare; a
 * domain's work ahead of the gate runs beside it.
 */
import { COMMANDS, type CommandType, type StoredFact } from '../../../schemas/index.ts';
import { agentAggregateDef } from '../../../machines/agent/agent.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { defineDomain, registerDomains, type AnyDomain, type MissingHandlers } from '../../../infra/kernel/domain.ts';
import { Host } from '../../../infra/kernel/host.ts';
import { EmbeddedBus } from '../../../infra/transport/embedded-bus.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { call } from '../../../infra/transport/client.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { spawnedFact } from '../../support/agent-facts.ts';

async function newHost(dir: string, aggregates = AGGREGATES, logger = memoryLogger('silent').logger) {
  const bus = new EmbeddedBus();
  const log = await JsonlLog.open({ dir, bus });
  const host = new Host({
    bus,
    log,
    logger,
    hostId: 'h-test',
    aggregates,
    commands: COMMANDS,
    maxPayloadBytes: 1 << 20,
    commandCacheSize: 100,
    appendRetries: 0,
    appendRetryDelayMs: 1,
  });
  return { host, log, bus };
}

/** Every command but `except`, answering nothing useful, with a gate that allows all. */
function allBut(except: readonly string[]): AnyDomain {
  return {
    name: 'rest',
    gate: async () => undefined,
    commands: Object.fromEntries(
      COMMANDS.filter((c) => !except.includes(c.type)).map((c) => [c.type, async () => ({})]),
    ),
  };
}

const ping = defineDomain({ name: 'ping', commands: { 'runtime.ping': async () => ({ pong: true as const }) } });

describe('domain types', () => {
  it('refuse a registration that leaves a catalogue command without a handler (compile time)', () => {
    // Never run: the assertions are the @ts-expect-error lines, checked by `tsc` (npm run typecheck).
    const compileOnly = (host: Host) => {
      // @ts-expect-error runtime.status and every other command have no handler
      registerDomains(host, [ping]);
      defineDomain({
        name: 'typed-data',
        commands: {
          // @ts-expect-error terminal.write's data has no `command` field
          'terminal.write': async (ctx) => ({ terminalId: ctx.command.data.command, bytes: 0 }),
        },
      });
      defineDomain({
        name: 'typed-reply',
        commands: {
          // @ts-expect-error the reply of runtime.ping is { pong: true }
          'runtime.ping': async () => ({ pong: 'yes' }),
        },
      });
      // @ts-expect-error not a command of the catalogue
      defineDomain({ name: 'bogus', commands: { 'runtime.nope': async () => ({}) } });
    };
    expect(typeof compileOnly).toBe('function');
    const missing: MissingHandlers<[typeof ping]> = 'runtime.status';
    const all: CommandType[] = COMMANDS.map((c) => c.type as CommandType);
    expect(all).toContain(missing);
  });
});

describe('Host with domains', () => {
  it('refuses to start when a command has no handler, naming it', async () => {
    const dir = tempDir('skein-domain-');
    onTestFinished(() => dir.dispose());
    const { host, log } = await newHost(dir.path);
    onTestFinished(() => log.close());
    host.register(allBut(['terminal.write']));
    await expect(host.start()).rejects.toThrow("command 'terminal.write' has no handler");
  });

  it('refuses a tool command without a gate, a command handled twice, a second gate, a stray aggregate', async () => {
    const dir = tempDir('skein-domain-');
    onTestFinished(() => dir.dispose());
    const { host, log } = await newHost(
      dir.path,
      AGGREGATES.filter((a) => a !== agentAggregateDef),
    );
    onTestFinished(() => log.close());
    const noGate: AnyDomain = { ...allBut([]), gate: undefined };
    host.register(noGate);
    await expect(host.start()).rejects.toThrow(/is a '[a-z_/]+' tool call but no permission gate is installed/);

    const second = await newHost(tempDir('skein-domain-').path);
    onTestFinished(() => second.log.close());
    second.host.register(ping);
    expect(() => second.host.register(ping)).toThrow(/'runtime.ping' has handlers in domains 'ping' and 'ping'/);
    second.host.register({ name: 'g1', gate: async () => undefined, commands: {} });
    expect(() => second.host.register({ name: 'g2', gate: async () => undefined, commands: {} })).toThrow(
      /second permission gate/,
    );
    const third = await newHost(tempDir('skein-domain-').path, []);
    onTestFinished(() => third.log.close());
    expect(() => third.host.register({ name: 'agents', aggregates: [agentAggregateDef], commands: {} })).toThrow(
      /aggregate 'agent' that the host does not fold/,
    );
  });

  it('runs restore reactions on facts read back, live ones on facts appended after, then restores', async () => {
    const dir = tempDir('skein-domain-');
    onTestFinished(() => dir.dispose());
    const first = await newHost(dir.path);
    first.host.register(allBut([]));
    await first.host.start();
    const spawned = (id: string) => spawnedFact(id);
    await first.host.emit(spawned('old'), { agentId: 'old' as never });
    await first.host.stop(0);
    await first.log.close();

    const { host, log } = await newHost(dir.path);
    onTestFinished(() => log.close());
    const seen: string[] = [];
    const note = (label: string) => (fact: StoredFact) =>
      void seen.push(`${label}:${(fact.data as { agentId: string }).agentId}`);
    host.register(allBut([]));
    host.register({
      name: 'watcher',
      commands: {},
      reactions: [
        { on: ['agent.spawned'], when: 'restore', run: note('restore') },
        { on: (type) => type === 'agent.spawned', when: 'live', run: note('live') },
        { on: ['agent.spawned'], when: 'always', run: note('always') },
      ],
      restore: async () => void seen.push('restored'),
    });
    await host.start();
    await host.emit(spawned('new'), { agentId: 'new' as never });
    expect(seen).toEqual(['restore:old', 'always:old', 'restored', 'live:new', 'always:new']);
    expect(() => host.register(ping)).toThrow(/registered after start/);
    await host.stop(0);
  });

  // Issue 15: an exec's workspace refresh runs while its permission is decided, not after.
  it("runs a domain's work ahead of the gate for its tool calls before the gate decides, only those", async () => {
    const dir = tempDir('skein-domain-');
    onTestFinished(() => dir.dispose());
    const { host, log, bus } = await newHost(dir.path);
    onTestFinished(() => log.close());
    const order: string[] = [];
    let aheadDone: () => void = () => undefined;
    const ahead = new Promise<void>((resolve) => (aheadDone = resolve));
    host.register({
      ...allBut(['terminal.exec', 'runtime.ping']),
      // The gate waits for the work ahead (a deadlock if it ran only after the gate), then refuses 'no'.
      gate: async (ctx) => {
        order.push(`gate ${ctx.def.type}`);
        const ran = await Promise.race([ahead.then(() => true), new Promise((r) => setTimeout(r, 2_000, false))]);
        order.push(`gate sees ahead: ${ran}`);
        if ((ctx.command.data as { command?: string }).command === 'no') throw new Error('refused');
      },
    });
    host.register({
      name: 'exec',
      ahead: (ctx) => {
        order.push(`ahead ${ctx.def.type}`);
        aheadDone();
      },
      commands: {
        'terminal.exec': async () => {
          order.push('handler');
          throw new Error('not run here');
        },
        'runtime.ping': async () => ({ pong: true as const }),
      },
    });
    await host.start();
    await host.emit(spawnedFact('main'), { agentId: 'main' as never });
    await host.serve();
    await call(bus, 'main', 'terminal.exec', { terminalId: 't-1', command: 'true' });
    await call(bus, 'main', 'terminal.exec', { terminalId: 't-1', command: 'no' });
    expect((await call(bus, 'main', 'runtime.ping', {})).ok).toBe(true);
    expect(order).toEqual([
      'ahead terminal.exec',
      'gate terminal.exec',
      'gate sees ahead: true',
      'handler',
      'ahead terminal.exec',
      'gate terminal.exec',
      'gate sees ahead: true',
    ]);
    await host.stop(0);
  });

  // Issue 15: the command's child logger is bound on first use (a pino child with the redaction paths cost ~20 µs
  // of every command); the lines are bound as before, the handler's and the host's own.
  it("binds a command's log lines to its agent, type and id, the handler's and the host's", async () => {
    const dir = tempDir('skein-domain-');
    onTestFinished(() => dir.dispose());
    const sink = memoryLogger('debug');
    const { host, log, bus } = await newHost(dir.path, AGGREGATES, sink.logger);
    onTestFinished(() => log.close());
    host.register(allBut(['runtime.ping']));
    host.register(
      defineDomain({
        name: 'ping',
        commands: {
          'runtime.ping': async (ctx) => {
            ctx.logger.warn({ n: 1 }, 'pinged');
            return { pong: true as const };
          },
        },
      }),
    );
    await host.start();
    await host.emit(spawnedFact('main'), { agentId: 'main' as never });
    await host.serve();
    const sent = await call(bus, 'main', 'runtime.ping', {}, { id: 'c-log-1' });
    expect(sent.ok).toBe(true);
    const bound = { agentId: 'main', event: 'runtime.ping', commandId: 'c-log-1' };
    expect(sink.lines.find((l) => l['msg'] === 'pinged')).toMatchObject({ ...bound, n: 1 });
    expect(sink.lines.find((l) => l['msg'] === 'command handled')).toMatchObject(bound);
    await host.stop(0);
  });
});
