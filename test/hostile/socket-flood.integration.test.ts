/**
 * An agent holding its own socket token floods the embedded runtime: one frame that never ends (a
 * `file.write` of a canary whose content streams on forever), and frames just over the limit. Before
 * line-frames.ts, the host's readline buffered everything it was sent (a few gigabytes kill it). Now the
 * connection is cut once a frame passes the limit, with a violation that names it; the host keeps
 * answering, its memory does not follow the flood, and the canary file never appears.
 */
import { existsSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintSocketToken, socketKey } from '../../infra/transport/auth/socket-tokens.ts';
import { frameLimit } from '../../infra/transport/socket-server.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const MAX_PAYLOAD = 1024 * 1024;
let rt: TestRuntime;
let data: string;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', flags: { limits: { maxPayloadBytes: MAX_PAYLOAD } } });
  data = join(rt.dir, 'data');
  ok(await rt.call('agent.spawn', { label: 'flooder', agentId: 'flooder' }));
}, 60_000);
afterAll(async () => rt?.dispose());

/** Connects as agent `flooder` and waits for the welcome. */
async function asFlooder(): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = createConnection(join(data, 'skein.sock'));
  let text = '';
  socket.on('data', (b: Buffer) => (text += b.toString('utf8')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const token = mintSocketToken(socketKey(data), { kind: 'agent', agentId: 'flooder' });
  socket.write(`${JSON.stringify({ op: 'hello', token })}\n`);
  for (let i = 0; i < 100 && !text.includes('"welcome"'); i++) await new Promise((r) => setTimeout(r, 20));
  expect(text).toContain('"welcome"');
  return { socket, received: () => text, closed };
}

describe('hostile: socket flood', { timeout: 60_000 }, () => {
  it('a frame that never ends is cut at the limit; the host keeps answering and writes nothing', async () => {
    const canary = join(rt.workspace, 'canary-flood.txt');
    const { socket, received, closed } = await asFlooder();
    const rssBefore = process.memoryUsage().rss;
    socket.write(`{"op":"req","rid":1,"timeoutMs":5000,"subject":"skein.cmd.flooder.file.write","data":"`);
    // base64 of {"data":{"path":"canary-flood.txt","content":"… then 'A's forever (64 MiB offered).
    socket.write(Buffer.from('{"data":{"path":"canary-flood.txt","content":"').toString('base64'));
    const chunk = Buffer.alloc(256 * 1024, 'Q'); // 'QQQQ' is valid base64
    let offered = 0;
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    while (!isClosed && offered < 64 * 1024 * 1024) {
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
      offered += chunk.length;
    }
    await closed;
    expect(isClosed).toBe(true);
    // Cut near the limit (plus what the kernel's socket buffers held), not after the whole flood.
    expect(offered).toBeLessThan(frameLimit(MAX_PAYLOAD) + 8 * 1024 * 1024);
    expect(received()).toContain(`frame over ${frameLimit(MAX_PAYLOAD)} bytes`);
    // The host is alive and answers others at once; its memory did not take the flood in.
    ok(await rt.call('runtime.ping'));
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(48 * 1024 * 1024);
    expect(existsSync(canary)).toBe(false);
  });

  it('many frames each just over the limit: every connection is cut, none is served', async () => {
    const over = 'Q'.repeat(frameLimit(MAX_PAYLOAD) + 1);
    for (let i = 0; i < 3; i++) {
      const { socket, received, closed } = await asFlooder();
      socket.write(
        `{"op":"req","rid":${i},"subject":"skein.cmd.flooder.runtime.ping","timeoutMs":5000,"data":"${over}"}\n`,
      );
      await closed;
      expect(received()).toContain('frame over');
      expect(received()).not.toContain('"res"');
    }
    ok(await rt.call('runtime.ping'));
  });

  it('a frame within the limit still works for the same agent', async () => {
    const { socket, received } = await asFlooder();
    const body = Buffer.from(JSON.stringify({ data: {} })).toString('base64');
    socket.write(`{"op":"req","rid":7,"subject":"skein.cmd.flooder.runtime.ping","timeoutMs":5000,"data":"${body}"}\n`);
    for (let i = 0; i < 100 && !received().includes('"res"'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(received()).toContain('"rid":7');
    socket.destroy();
  });
});
