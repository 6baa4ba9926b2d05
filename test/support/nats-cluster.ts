/**
 * @module
 * A 3-node nats-server cluster with JetStream for one test file: client and
 * route ports free on loopback, one store dir per node, each node stopped
 * (or SIGKILLed) by its PID. Resolves once JetStream has a meta leader, so
 * streams can be created at once.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JetStreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { freePorts, lostPortRace, startNatsServer, type NatsServerHandle } from '../../infra/transport/nats-server.ts';
import { cleanEnv, type LongRunning, startCli } from './cli.ts';

export type ClusterNode = NatsServerHandle & { name: string; routePort: number };

export type TestCluster = {
  nodes: ClusterNode[];
  /** Every node's client URL, comma-separated: what `--nats` takes so clients fail over. */
  url: string;
  /** SIGKILLs node `i` (no goodbye to the routes) and waits until it is gone. */
  kill(i: number): Promise<void>;
  /** Starts node `i` again on the same ports and store dir. */
  restart(i: number): Promise<void>;
  dispose(): Promise<void>;
};

const CLUSTER_NAME = 'skein-test';

export type ClusterOptions = {
  /**
   * A config file for node `name` (e.g. operator-mode auth from `skein auth init`, with the node's own resolver
   * dir under `nodeDir`); cluster, ports and store come as flags. `probeCreds`: how the readiness probe connects.
   */
  configFor?: (name: string, nodeDir: string) => string;
  probeCreds?: string;
};

/**
 * Free ports are picked, then bound by nats-server a moment later: another process may take one in between.
 * A cluster that fails to start that way is started again on new ports (3 attempts).
 */
export async function startTestCluster(size = 3, options: ClusterOptions = {}): Promise<TestCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(size, options);
    } catch (err) {
      if (attempt >= 3 || !lostPortRace(err)) throw err;
    }
  }
}

async function startOnce(size: number, options: ClusterOptions): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-cluster-'));
  const free = await freePorts(size * 2);
  const ports = Array.from({ length: size }, (_, i) => [free[2 * i]!, free[2 * i + 1]!] as const);
  const routes = ports.map(([, route]) => `nats://127.0.0.1:${route}`).join(',');
  const start = async (i: number): Promise<ClusterNode> => {
    const [port, routePort] = ports[i]!;
    const name = `n${i + 1}`;
    mkdirSync(join(dir, name), { recursive: true });
    const server = await startNatsServer({
      storeDir: join(dir, name),
      port,
      ...(options.configFor ? { configFile: options.configFor(name, join(dir, name)) } : {}),
      args: [
        '--server_name',
        name,
        '--cluster_name',
        CLUSTER_NAME,
        '--cluster',
        `nats://127.0.0.1:${routePort}`,
        '--routes',
        routes,
      ],
    });
    return { ...server, name, routePort: routePort! };
  };
  const settled = await Promise.allSettled(ports.map((_, i) => start(i)));
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(settled.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    rmSync(dir, { recursive: true, force: true });
    throw failed.reason;
  }
  const nodes = settled.map((r) => (r as PromiseFulfilledResult<ClusterNode>).value);
  const url = nodes.map((n) => n.url).join(',');
  await jetStreamReady(url, size, options.probeCreds);
  return {
    nodes,
    url,
    async kill(i) {
      const node = nodes[i]!;
      process.kill(node.pid, 'SIGKILL');
      await node.exited;
    },
    async restart(i) {
      nodes[i] = await start(i);
    },
    async dispose() {
      await Promise.all(nodes.map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `$JS.API.INFO` until the cluster has elected a JetStream meta leader (up to 20 s). */
async function jetStreamReady(url: string, size: number, creds?: string): Promise<void> {
  const nc = await connect({
    servers: url.split(','),
    ...(creds ? { authenticator: credsAuthenticator(new TextEncoder().encode(creds)) } : {}),
  });
  try {
    const deadline = Date.now() + 20_000;
    let last = '';
    while (Date.now() < deadline) {
      try {
        const reply = await nc.request('$JS.API.INFO', '', { timeout: 1_000 });
        const body = reply.json<{ error?: { description: string } }>();
        if (body.error) last = body.error.description;
        else {
          // The meta leader may answer before every peer has joined: an R<size> stream needs them all.
          const probe = `PROBE_${Date.now()}`;
          const created = (
            await nc.request(
              `$JS.API.STREAM.CREATE.${probe}`,
              JSON.stringify({ name: probe, subjects: [`probe.${probe}`], num_replicas: size, storage: 'memory' }),
              { timeout: 2_000 },
            )
          ).json<{ error?: { description: string } }>();
          if (!created.error) {
            await nc.request(`$JS.API.STREAM.DELETE.${probe}`, '', { timeout: 2_000 });
            return;
          }
          last = created.error.description;
        }
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the test cluster's JetStream did not become ready within 20 s: ${last}`);
  } finally {
    await nc.close();
  }
}

/**
 * `skein up` for a named host of a cluster, in its own process (as a second machine would run it), resolved
 * once it logs that it serves its workspace. `extra` adds flags (creds, signing key).
 */
export async function startNamedHost(options: {
  url: string;
  host: string;
  workspace: string;
  data: string;
  cwd: string;
  extra?: string[];
}): Promise<LongRunning> {
  const { url, host, workspace, data, cwd, extra = [] } = options;
  const up = startCli(
    [
      'up',
      '--nats',
      url,
      '--host',
      host,
      ...extra,
      '--workspace',
      workspace,
      '--data',
      data,
      '--log-level',
      process.env['SKEIN_TEST_HOST_LOG'] ?? 'warn',
    ],
    { cwd, env: cleanEnv() },
  );
  try {
    await up.waitFor(new RegExp(`host '${host}', workspace`), 60_000);
  } catch (err) {
    // Not left behind when it never came up: a start stuck waiting stops only at a second signal.
    up.child.kill('SIGKILL');
    throw err;
  }
  return up;
}

/** Stops a named host started by startNamedHost (SIGTERM, then waits for its exit); a dead one is left as is. */
export async function stopNamedHost(up: LongRunning | undefined): Promise<void> {
  if (!up || up.child.exitCode !== null) return;
  up.child.kill('SIGTERM');
  await up.exited;
}

/**
 * The index in `cluster.nodes` of the node leading the newest consumer of `stream` (-1: none found): the one a
 * read or follower just started lives on (a stopped one's may linger a moment, but is older).
 */
export async function newestConsumerNode(cluster: TestCluster, jsm: JetStreamManager, stream: string): Promise<number> {
  const consumers: Array<{ created: string; leader: string }> = [];
  for await (const c of jsm.consumers.list(stream))
    consumers.push({ created: c.created, leader: c.cluster?.leader ?? '' });
  const leaders = consumers.sort((x, y) => Date.parse(y.created) - Date.parse(x.created)).map((c) => c.leader);
  return cluster.nodes.findIndex((node) => node.name === leaders[0]);
}
