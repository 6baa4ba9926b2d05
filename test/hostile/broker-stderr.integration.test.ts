/**
 * An agent with its own credentials on the private broker publishes where it may not, over and over. The broker
 * refuses each publish and keeps the connection, and nats-server writes a line to its stderr for each
 * (`Publish Violation … Subject "<the subject>"`). The runtime kept all of that stderr in its heap for the
 * server's life: an agent could grow the runtime's memory as fast as it published, ~1 KB a publish with a
 * long subject. Now the runtime keeps the last STDERR_TAIL_CHARS of it. The first subject carries a canary
 * that must be gone from what is kept; the last one must be there (the stderr was read, not left in the pipe).
 */
import { getHeapStatistics } from 'node:v8';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { inboxPrefixFor } from '../../infra/transport/auth/permissions.ts';
import { STDERR_TAIL_CHARS } from '../../infra/transport/nats-server.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { attack, canary, type Canary, reportAttacks } from './support.ts';

/** Publishes refused, each with a subject of ~1,000 characters: ~110 MB of the broker's stderr in all. */
const PUBLISHES = 100_000;
const PAD = 'p'.repeat(1_000);

let rt: TestRuntime;
let c: Canary;
let nc: NatsConnection | undefined;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'private' });
  c = canary();
  ok(await rt.call('agent.spawn', { label: 'shouter', agentId: 'shouter' }));
}, 60_000);
afterAll(async () => {
  await nc?.close().catch(() => undefined);
  c?.dispose();
  await rt?.dispose();
});
reportAttacks('broker-stderr');

describe('hostile: an agent makes the broker write', () => {
  attack(
    'memory',
    `${PUBLISHES} refused publishes: the runtime keeps ${STDERR_TAIL_CHARS} characters of the broker's stderr`,
    async () => {
      const minted = await rt.auth!.authority.mintAgent('shouter');
      nc = await connect({
        servers: rt.info.natsUrl!,
        authenticator: credsAuthenticator(new TextEncoder().encode(minted.creds)),
        inboxPrefix: inboxPrefixFor('shouter'),
        maxReconnectAttempts: 0,
      });
      const heapBefore = getHeapStatistics().used_heap_size;
      const last = `skein.cmd.other.${PAD}.last${PUBLISHES - 1}`;
      nc.publish(`skein.cmd.other.${PAD}.${c.marker}`, 'x');
      for (let i = 1; i < PUBLISHES; i++) {
        nc.publish(i === PUBLISHES - 1 ? last : `skein.cmd.other.${PAD}.n${i}`, 'x');
        if (i % 5_000 === 0) await nc.flush();
      }
      await nc.flush();
      // The broker refused them all and kept the agent connected; its stderr reaches the runtime by and by.
      const server = rt.auth!.server;
      const deadline = Date.now() + 60_000;
      while (!server.stderrTail().includes(last) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const tail = server.stderrTail();
      expect(tail).toContain('Publish Violation');
      expect(tail).toContain(last);
      expect(tail).not.toContain(c.marker);
      expect(tail.length).toBeLessThanOrEqual(STDERR_TAIL_CHARS);
      // Before: the whole ~110 MB stayed in the runtime's heap (as strings: more).
      const grown = getHeapStatistics().used_heap_size - heapBefore;
      expect(grown).toBeLessThan(100 * 1024 * 1024);
      expect(nc.isClosed()).toBe(false);
      ok(await rt.call('runtime.ping'));
    },
    120_000,
  );
});
