/**
 * @module
 * Assembles one host process: picks the mode (networked / private broker /
 * embedded), opens the bus and the event log, restores state, ensures the
 * root agent, serves commands, and writes `runtime.json` in the data dir so
 * clients find it. `stop()` drains and tears everything down.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { writeFileAtomic } from '../../actors/common/atomic-write.ts';
import { isFinished } from '../../machines/agent/agent.ts';
import { COMMANDS, type RuntimeMode, type AgentId } from '../../schemas/index.ts';
import type { Bus } from '../transport/bus.ts';
import { EmbeddedBus } from '../transport/embedded-bus.ts';
import { AGGREGATES, registerAllDomains } from './domains.ts';
import type { LiveAgents } from '../../actors/agent/live-agents.ts';
import type { EventLog } from '../transport/event-log.ts';
import { Host } from './host.ts';
import { JetStreamLog, streamReplicas } from '../transport/jetstream-log.ts';
import { HostRegistry } from './host-registry.ts';
import { assertMayJoin, ensureRootAgent, ownerOf, routeOf } from './named-hosts.ts';
import { restoreLostAgents, watchLostHosts } from './lost-hosts.ts';
import { JsonlLog } from '../transport/jsonl-log.ts';
import type { LoadedConfig } from './config.ts';
import { NatsBus } from '../transport/nats-bus.ts';
import { JetStreamWatchdog } from '../transport/jetstream-watchdog.ts';
import type { NatsConnection } from '@nats-io/transport-node';
import { natsServerAvailable, type NatsServerHandle } from '../transport/nats-server.ts';
import { frameLimit, serveBusOnSocket, type SocketServer } from '../transport/socket-server.ts';
import { mintSocketToken, socketKey, writeOperatorToken } from '../transport/auth/socket-tokens.ts';
import { openNetworkedIdentities, type NetworkedIdentities } from '../transport/auth/networked.ts';
import { startAuthBroker, type AuthBroker } from '../transport/auth/broker.ts';
import { FINISHED_FACTS, revokeOnFinish } from '../transport/auth/revoke-on-finish.ts';
import { guardLog } from '../transport/log-guard.ts';
import { verifySeal } from '../transport/log-seal.ts';
import { startStep } from './start-step.ts';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { assertWorkspace, dataDirInsideWorkspace, settlePreviousRuntime } from './start-checks.ts';
import { microService } from '../discovery/micro-service.ts';
import { runtimeInfoPath, type RuntimeInfo } from './runtime-info.ts';

export { readRuntimeInfo, RuntimeInfo, runtimeInfoPath } from './runtime-info.ts';

export type Runtime = {
  host: Host;
  bus: Bus;
  log: EventLog;
  info: RuntimeInfo;
  /** The live agent actors (tests compare their snapshots with the replayed ones). */
  agents: LiveAgents;
  /** Private broker: the identities (mint, revoke); undefined in the other modes. */
  auth?: AuthBroker | undefined;
  stop(): Promise<void>;
};

export function chooseMode(config: LoadedConfig): RuntimeMode {
  if (config.mode !== 'auto') return config.mode;
  if (config.natsUrl) return 'networked';
  return natsServerAvailable(config.natsServerBin) ? 'private' : 'embedded';
}

/** What tests may swap: the JSON thread's worker (one that dies), the log the host sees (one that loses answers). */
export type RuntimeSeams = { jsonWorker?: URL | undefined; wrapLog?: ((log: EventLog) => EventLog) | undefined };

export async function startRuntime(config: LoadedConfig, logger: Logger, seams: RuntimeSeams = {}): Promise<Runtime> {
  assertWorkspace(config.workspace);
  // Owner only: the directory holds the socket (whoever connects acts as any agent) and the event log.
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(config.dataDir, 0o700);
  if (dataDirInsideWorkspace(config))
    logger.warn(
      { dataDir: config.dataDir, workspace: config.workspace },
      'the data dir is inside the workspace, so shells there can reach the socket and the event log; ' +
        'drop --data/dataDir to use the default outside it',
    );
  // Before anything in the data dir is opened: a second start on it stops here, not once both run on one log.
  const lock = await lockDataDir(config.dataDir);
  try {
    return await startHolding(config, logger, seams, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** The start once this process holds the data dir; the runtime's `stop()` releases it. */
async function startHolding(
  config: LoadedConfig,
  logger: Logger,
  seams: RuntimeSeams,
  lock: DataDirLock,
): Promise<Runtime> {
  await settlePreviousRuntime(config.dataDir, logger);
  const mode = chooseMode(config);
  const step = <T>(name: string, run: () => Promise<T>) => startStep(logger, name, run);
  const hostId = `h-${randomBytes(4).toString('hex')}`;
  const cleanups: Array<() => Promise<void>> = [];
  let natsServer: NatsServerHandle | undefined;
  /** runtime.json as written (rewritten when the private broker is restarted). */
  let info: RuntimeInfo | undefined;
  let broker: AuthBroker | undefined;
  let bus: Bus;
  let log: EventLog;
  let socketPath: string | undefined;
  let natsUrl: string | undefined;
  let assertAvailable: (() => void) | undefined;
  let socketServer: SocketServer | undefined;
  /** Networked mode with `--creds` and `--signing-key`: the host mints each agent's user. */
  let networked: NetworkedIdentities | undefined;
  /** Embedded mode: the socket's key; each agent (worker, `skein creds`) gets its own token. */
  let key: Buffer | undefined;
  /** Named hosts (`--host`): the registry this host heartbeats into. */
  let registry: HostRegistry | undefined;
  let rootHost: string | undefined;
  /** Set once the host has restored state: which agents have finished (their tokens are refused). */
  let finished: (agentId: string) => boolean = () => false;

  try {
    if (config.host && mode !== 'networked') {
      throw new Error(
        `--host ${config.host} joins a runtime shared over NATS: add --nats <url> (a cluster's URLs, comma-separated)`,
      );
    }
    if (mode === 'embedded') {
      const embedded = new EmbeddedBus();
      bus = embedded;
      log = await JsonlLog.open({
        dir: config.dataDir,
        bus: embedded,
        log: logger,
        outputMaxBytes: config.log.outputMaxBytes,
        duplicateWindowMs: config.log.duplicateWindowMs,
        sealDir: join(config.dataDir, 'auth'),
      });
      cleanups.push(() => log.close()); // a start that fails from here on closes the log's files
      socketPath = join(config.dataDir, 'skein.sock');
      key = socketKey(config.dataDir);
      writeOperatorToken(config.dataDir, key);
      const server = await serveBusOnSocket(embedded, socketPath, {
        key,
        isRevoked: (agentId) => finished(agentId),
        maxFrameBytes: frameLimit(config.limits.maxPayloadBytes),
        logger: logger.child({ actor: 'socket' }),
      });
      socketServer = server;
      cleanups.push(() => server.close());
    } else {
      if (mode === 'private') {
        // Operator-mode auth: nothing listens without credentials (auth/broker.ts).
        broker = await startAuthBroker({
          dataDir: config.dataDir,
          bin: config.natsServerBin,
          logger,
          // A restarted server's pid goes into runtime.json, so the next start can stop it after a SIGKILL.
          onRestart: async (server) => {
            if (!info) return;
            info = { ...info, natsServerPid: server.pid };
            await writeFileAtomic(runtimeInfoPath(config.dataDir), `${JSON.stringify(info, null, 2)}\n`, 0o600);
          },
        });
        natsServer = broker.server;
        const started = broker;
        cleanups.push(() => started.stop());
        natsUrl = broker.url;
      } else {
        natsUrl = config.natsUrl;
        if (!natsUrl) throw new Error('networked mode needs --nats <url> or SKEIN_NATS_URL');
        networked = await step('the signing key and host creds', () => networkedIdentities(config, logger));
        const revoker = networked?.revoker;
        if (revoker) cleanups.push(() => revoker.close());
      }
      const hostCreds = broker?.hostCreds ?? networked?.hostCreds;
      const url = natsUrl;
      const natsBus = await step(`the NATS connection to ${url}`, () =>
        NatsBus.connect(url, { name: `skein-host-${hostId}`, logger }, hostCreds ? { creds: hostCreds } : undefined),
      );
      // The private broker's JetStream stuck after its store's disk filled: appends fail at once meanwhile,
      // and the broker is restarted once there is room (jetstream-watchdog.ts).
      const watchdog = broker && watchJetStream(natsBus.nc, broker, config.dataDir, logger);
      assertAvailable = () => {
        natsBus.assertConnected();
        watchdog?.assert();
      };
      bus = natsBus;
      cleanups.unshift(() => natsBus.close());
      if (watchdog) cleanups.unshift(async () => watchdog.stop());
      // Before the log is opened (which would create a missing stream): never begin a fresh log silently.
      await step('the check of the log seal', () => verifySeal(natsBus.nc, config.dataDir));
      log = await step('the JetStream streams', () =>
        JetStreamLog.open(natsBus.nc, {
          outputMaxBytes: config.log.outputMaxBytes,
          duplicateWindowMs: config.log.duplicateWindowMs,
          appendTimeoutMs: config.log.appendTimeoutMs,
        }),
      );
      if (config.host) {
        const name = config.host;
        const joined = await step('the host registry', () =>
          HostRegistry.open({
            nc: natsBus.nc,
            name,
            hostId,
            workspace: realpathSync(config.workspace),
            config: config.hosts,
            replicas: streamReplicas(natsBus.nc),
            logger: logger.child({ actor: 'hosts' }),
            now: () => Date.now() + config.hosts.clockOffsetMs,
          }),
        );
        registry = joined;
        await step(`the name '${config.host}' in the host registry`, () => joined.join());
        // Before the bus closes: a clean stop is recorded, never taken for a lost host.
        cleanups.unshift(() => joined.leave());
      }
    }
  } catch (err) {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    throw err;
  }

  // The host first; every domain is built with it and registers before the log is read back.
  const host = new Host({
    bus,
    log: seams.wrapLog ? seams.wrapLog(log) : log,
    logger,
    hostId,
    aggregates: AGGREGATES,
    commands: COMMANDS,
    maxPayloadBytes: config.limits.maxPayloadBytes,
    commandCacheSize: config.limits.commandCacheSize,
    maxInFlightPerAgent: config.limits.maxInFlightPerAgent,
    maxRecordedBytesPerAgent: config.limits.maxRecordedBytesPerAgent,
    appendRetries: config.log.appendRetries,
    appendRetryDelayMs: config.log.appendRetryDelayMs,
    assertAvailable,
    route: registry ? (agentId) => routeOf(host, registry!, config.rootAgentId, agentId) : undefined,
    owns: registry ? (agentId) => ownerOf(host, agentId) === registry!.name : undefined,
    jsonWorker: seams.jsonWorker,
  });
  // NATS service discovery ($SRV.PING/INFO/STATS), answered beside the host; STATS count what handlers serve.
  const discovery = microService({
    bus,
    id: hostId,
    version: '0.1.0',
    description: 'skein: terminals, edits, permissions and sub-agents for AI coding agents',
    metadata: { mode, root_agent: config.rootAgentId },
    commands: COMMANDS,
  });
  const register = host.register.bind(host);
  host.register = (domain) => register({ ...domain, commands: discovery.instrumentAll(domain.commands) });
  let agents: LiveAgents;
  try {
    ({ live: agents } = await registerAllDomains({
      host,
      bus,
      config,
      logger,
      runtime: { hostId, mode },
      ...(registry ? { hosts: registry, hostName: registry.name } : {}),
      connect: {
        natsUrl,
        dataDir: config.dataDir,
        ...(broker
          ? { mintCreds: (agentId: string) => broker!.authority.mintAgent(agentId).then((m) => m.creds) }
          : {}),
        ...(networked ? { mintCreds: networked.mintAgent } : {}),
        ...(key
          ? {
              mintCreds: async (agentId: string) => `${mintSocketToken(key!, { kind: 'agent', agentId })}\n`,
              credsEnv: 'SKEIN_SOCKET_TOKEN' as const,
            }
          : {}),
      },
    }));
    // A host the log's root refuses (unnamed on named hosts, a second root) stops before its domains reconcile.
    await step('the replay of the event log', () => host.start(() => assertMayJoin(host, config)));
    // Named hosts share one log: each folds what the others append (placed agents, their parents' state).
    if (registry) host.follow();
    if (broker) await revokeOnFinish(host, broker, logger);
    if (networked?.revoker) await revokeOnFinish(host, networked.revoker, logger);
    if (socketServer) {
      const server = socketServer;
      finished = (agentId) => {
        const subject = host.agentSubject(agentId as AgentId);
        const status = subject ? host.state(subject)?.value : undefined;
        return typeof status === 'string' && isFinished(status);
      };
      host.writer.onFact((fact) => {
        if (FINISHED_FACTS.has(fact.type)) server.revoke((fact.data as { agentId: string }).agentId);
      });
      server.recheck();
    }
    if (bus instanceof NatsBus) {
      const nc = bus.nc;
      const keeper = await guardLog({
        host,
        nc,
        dataDir: config.dataDir,
        hostId,
        rootAgentId: config.rootAgentId,
        logger,
      });
      // Runs before the bus closes (cleanups run in order; the bus close was put first).
      cleanups.unshift(() => keeper.stop());
    }
    await step('the root agent', () => ensureRootAgent(host, config, logger));
    rootHost = ownerOf(host, config.rootAgentId);
    if (registry) {
      await step("lost hosts' agents", () => restoreLostAgents(host, registry!, hostId, logger));
      const watcher = watchLostHosts({
        host,
        registry,
        rootAgentId: config.rootAgentId,
        hostId,
        intervalMs: config.hosts.heartbeatMs,
        logger: logger.child({ actor: 'hosts' }),
      });
      cleanups.unshift(async () => watcher.stop());
    }
    // Commands are taken only once every domain is ready and the root exists.
    await step('the command subscriptions', () => host.serve());
    discovery.start();
    cleanups.unshift(async () => discovery.stop());
  } catch (err) {
    // A bad policy file or domain config, or a log that cannot be read: nothing may be left running.
    await host.stop(0).catch(() => undefined);
    await log.close().catch(() => undefined);
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    throw err;
  }

  info = {
    pid: process.pid,
    hostId,
    mode,
    ...(natsUrl ? { natsUrl } : {}),
    ...(socketPath ? { socketPath } : {}),
    ...(natsServer ? { natsServerPid: natsServer.pid } : {}),
    ...(broker ? { websocketUrl: broker.websocketUrl } : {}),
    rootAgentId: config.rootAgentId,
    ...(config.host ? { host: config.host } : {}),
    ...(rootHost ? { rootHost } : {}),
    workspace: config.workspace,
    dataDir: config.dataDir,
    startedAt: host.startedAt,
  };
  const infoPath = runtimeInfoPath(config.dataDir);
  await writeFileAtomic(infoPath, `${JSON.stringify(info, null, 2)}\n`, 0o600);

  let stopping: Promise<void> | undefined;
  return {
    host,
    bus,
    log,
    info,
    agents,
    auth: broker,
    stop: () =>
      (stopping ??= (async () => {
        try {
          await host.stop();
          await log.close();
          for (const cleanup of cleanups) await cleanup().catch((err) => logger.warn({ err }, 'cleanup failed'));
          rmSync(infoPath, { force: true });
        } finally {
          lock.release();
        }
      })()),
  };
}

/** `--creds` and `--signing-key` go together: a host with creds but no key could not give workers theirs. */
async function networkedIdentities(config: LoadedConfig, logger: Logger): Promise<NetworkedIdentities | undefined> {
  if (!config.natsCreds && !config.signingKey) return undefined;
  if (!config.natsCreds || !config.signingKey) {
    throw new Error(
      `networked mode with identities needs both --creds and --signing-key (got only ` +
        `${config.natsCreds ? '--creds' : '--signing-key'}); \`skein auth init\` writes host.creds and account.nk`,
    );
  }
  return openNetworkedIdentities({
    natsUrl: config.natsUrl!,
    credsPath: config.natsCreds,
    signingKeyPath: config.signingKey,
    dataDir: config.dataDir,
    logger,
  });
}

function watchJetStream(nc: NatsConnection, broker: AuthBroker, dataDir: string, logger: Logger): JetStreamWatchdog {
  return new JetStreamWatchdog({
    nc,
    storeDir: join(dataDir, 'jetstream'),
    restart: () => broker.restartServer("its JetStream was stuck after the store's disk filled"),
    logger: logger.child({ actor: 'jetstream-watchdog' }),
  });
}
