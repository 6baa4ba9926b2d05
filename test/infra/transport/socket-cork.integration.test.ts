/**
 * The unix socket's frames leave once per event-loop turn (infra/transport/socket-cork.ts), on a real socket:
 * the frames a turn sends wait, corked, until the turn is done, then arrive whole and in order; a socket closed
 * meanwhile gets nothing and throws nothing.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendFrame } from '../../../infra/transport/socket-cork.ts';
import { tempDir } from '../../support/temp-dir.ts';

const dir = tempDir('skein-cork-');
const path = join(dir.path, 's.sock');
let server: Server;
const accepted: Socket[] = [];

beforeAll(async () => {
  server = createServer((s) => accepted.push(s));
  await new Promise<void>((r) => server.listen(path, r));
});
afterAll(async () => {
  for (const s of accepted) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  dir.dispose();
});

/** A client connection and the server's side of it. */
async function pair(): Promise<{ client: Socket; peer: Socket }> {
  const client = connect(path);
  await new Promise<void>((r) => client.once('connect', () => r()));
  while (accepted.length === 0) await new Promise((r) => setImmediate(r));
  return { client, peer: accepted.shift()! };
}

/** What `peer` receives until `lines` newline-terminated lines have come. */
function lines(peer: Socket, count: number): Promise<string[]> {
  let text = '';
  return new Promise((resolve) => {
    peer.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const got = text.split('\n').filter(Boolean);
      if (got.length >= count) resolve(got);
    });
  });
}

describe('socket frames, once per turn', () => {
  it('holds a turn’s frames until the turn ends, then delivers them whole and in order', async () => {
    const { client, peer } = await pair();
    const received = lines(peer, 3);
    for (let i = 0; i < 3; i++) sendFrame(client, { op: 'pub', subject: `s.${i}`, data: 'eA==' });
    // Still this turn: nothing has left, all three are queued behind the cork.
    expect(client.writableCorked).toBe(1);
    expect(client.writableLength).toBeGreaterThan(0);
    await new Promise((r) => setImmediate(r));
    expect(client.writableCorked).toBe(0);
    const got = (await received).map((l) => JSON.parse(l).subject);
    expect(got).toEqual(['s.0', 's.1', 's.2']);
    client.destroy();
  });

  it('sends nothing on a socket already closed, and a socket closed while corked costs nothing', async () => {
    const { client } = await pair();
    sendFrame(client, { op: 'pub', subject: 's.x', data: '' });
    client.destroy();
    expect(() => sendFrame(client, { op: 'pub', subject: 's.y', data: '' })).not.toThrow();
    await new Promise((r) => setImmediate(r));
    expect(client.destroyed).toBe(true);
  });
});
