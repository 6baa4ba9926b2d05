/**
 * The embedded socket bounds agents' connections all together, besides each agent's own bound: an agent tree
 * (64 connections an agent, up to `maxAgents` agents) must not take the descriptors the runtime's terminals,
 * files and log need. A real unix socket on a real bus; the budget is set small here.
 */
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintSocketToken, socketKey } from '../../../infra/transport/auth/socket-tokens.ts';
import { EmbeddedBus } from '../../../infra/transport/embedded-bus.ts';
import {
  agentConnectionBudget,
  MAX_CONNECTIONS_PER_AGENT,
  serveBusOnSocket,
  type SocketServer,
} from '../../../infra/transport/socket-server.ts';
import { tempDir } from '../../support/temp-dir.ts';

const BUDGET = 10;
const temp = tempDir('skein-sock-conns-');
const path = join(temp.path, 'skein.sock');
let server: SocketServer;
const open: Socket[] = [];

beforeAll(async () => {
  server = await serveBusOnSocket(new EmbeddedBus(), path, {
    key: socketKey(temp.path),
    isRevoked: () => false,
    maxFrameBytes: 1024 * 1024,
    maxAgentConnections: BUDGET,
  });
});
afterAll(async () => {
  for (const s of open) s.destroy();
  await server?.close();
  temp.dispose();
});

/** Connects as `agentId`; resolves with what the runtime answered the token (welcome or refusal) and the socket. */
async function connectAs(agentId: string): Promise<{ socket: Socket; said: string }> {
  const socket = createConnection(path);
  open.push(socket);
  let said = '';
  socket.on('data', (b: Buffer) => (said += b.toString('utf8')));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const token = mintSocketToken(socketKey(temp.path), { kind: 'agent', agentId });
  socket.write(`${JSON.stringify({ op: 'hello', token })}\n`);
  await vi.waitFor(() => expect(said).toMatch(/"welcome"|"auth"/), { timeout: 5_000, interval: 5 });
  return { socket, said };
}

describe('agent connections all together', () => {
  it('are refused past the budget, naming it, whichever agent asks; a closed one makes room', async () => {
    const a = [];
    for (let i = 0; i < 8; i++) a.push(await connectAs('a'));
    for (let i = 0; i < 2; i++) expect((await connectAs('b')).said).toContain('"welcome"');
    for (const c of a) expect(c.said).toContain('"welcome"');
    const over = await connectAs('b');
    expect(over.said).toContain(`the runtime holds ${BUDGET} agent connections, the most it allows`);
    a[0]!.socket.destroy();
    await vi.waitFor(async () => expect((await connectAs('b')).said).toContain('"welcome"'));
  });

  it('is a quarter of the open-files limit, never below one agent’s own bound', () => {
    const limits = (soft: number) =>
      'Limit                     Soft Limit           Hard Limit           Units\n' +
      `Max open files            ${soft}                ${soft}                files\n`;
    expect(agentConnectionBudget(limits(20_000))).toBe(5_000);
    expect(agentConnectionBudget(limits(100))).toBe(MAX_CONNECTIONS_PER_AGENT);
    expect(agentConnectionBudget('')).toBe(256);
  });
});
