/**
 * @module
 * A 3-node nats-server cluster with JetStream for one test file: client and
 * route ports free on loopback, one store dir per node, each node stopped
 * (or SIGKILLed) by its PID. Resolves once JetStream has a meta leader, so
 * streams can be created at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { freePort, startNatsServer, type NatsServerHandle } from '../../infra/transport/nats-server.ts';

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

export async function startTestCluster(size = 3): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-cluster-'));
  const ports = await Promise.all(Array.from({ length: size }, async () => [await freePort(), await freePort()]));
  const routes = ports.map(([, route]) => `nats://127.0.0.1:${route}`).join(',');
  const start = async (i: number): Promise<ClusterNode> => {
    const [port, routePort] = ports[i]!;
    const name = `n${i + 1}`;
    const server = await startNatsServer({
      storeDir: join(dir, name),
      port,
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
  const nodes = await Promise.all(ports.map((_, i) => start(i)));
  const url = nodes.map((n) => n.url).join(',');
  await jetStreamReady(url);
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
async function jetStreamReady(url: string): Promise<void> {
  const nc = await connect({ servers: url.split(',') });
  try {
    const deadline = Date.now() + 20_000;
    let last = '';
    while (Date.now() < deadline) {
      try {
        const reply = await nc.request('$JS.API.INFO', '', { timeout: 1_000 });
        const body = reply.json<{ error?: { description: string } }>();
        if (!body.error) return;
        last = body.error.description;
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
