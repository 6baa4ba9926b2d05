/**
 * A frame the embedded socket cannot decode closes the connection, as before, but says why first (a `violation`
 * frame, `Parser Error: …`, as nats-server words a protocol error): the connection used to be cut with nothing
 * said, and the client reported that the runtime had died. The client refuses a timeout it cannot send.
 */
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireSocketToken } from '../../../infra/transport/auth/socket-token-file.ts';
import { operatorSocket } from '../../support/socket.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded' });
}, 30_000);
afterAll(async () => {
  await rt?.dispose();
});

/** Sends `hello`, then `line`; resolves with the frames received until the runtime closes the connection. */
function framesAfter(line: string): Promise<Array<Record<string, unknown>>> {
  const token = requireSocketToken(join(rt.dir, 'data'), {});
  return new Promise((resolve, reject) => {
    const s = createConnection(rt.info.socketPath!);
    const frames: Array<Record<string, unknown>> = [];
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        frames.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
        buf = buf.slice(i + 1);
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve(frames));
    s.once('connect', () => s.write(`${JSON.stringify({ op: 'hello', token })}\n${line}\n`));
    setTimeout(() => reject(new Error(`the connection stayed open after ${JSON.stringify(line)}`)), 10_000).unref();
  });
}

describe('frames the embedded socket cannot read', () => {
  it.each([
    ['not JSON', 'hello world'],
    ['an unknown op', JSON.stringify({ op: 'boom' })],
    ['a request id that is no integer', JSON.stringify({ op: 'req', rid: 'x', subject: 's', data: '', timeoutMs: 5 })],
  ])('says why before it closes: %s', async (_name, line) => {
    const frames = await framesAfter(line);
    expect(frames.at(-1)).toMatchObject({ op: 'violation', message: expect.stringMatching(/^Parser Error: .+/) });
    expect(frames.map((f) => f['op'])).toEqual(['welcome', 'violation']);
  });

  it('keeps serving everyone else, and a client refuses a timeout it cannot send', async () => {
    expect(await rt.call('runtime.ping')).toMatchObject({ ok: true });
    const bus = await operatorSocket(join(rt.dir, 'data'), rt.info.socketPath!);
    try {
      await expect(bus.request('skein.cmd.main.runtime.ping', '{"data":{}}', { timeoutMs: 0 })).rejects.toThrow(
        "timeoutMs '0' is not a wait of at least 1 ms",
      );
      const reply = await bus.request('skein.cmd.main.runtime.ping', '{"data":{}}', { timeoutMs: 5_000.5 });
      expect(JSON.parse(new TextDecoder().decode(reply))).toMatchObject({ ok: true });
    } finally {
      await bus.close();
    }
  });
});
