/**
 * A big command payload from a socket client is moved to the host's JSON thread, not copied (issue 13): one that
 * is not JSON comes back from the thread for the host's own parse, so the client still gets the error that names
 * it, and a valid one after it is parsed and served as usual. Real runtime, socket and JSON thread.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeReply } from '../../../infra/transport/codec.ts';
import { OFF_THREAD_BYTES } from '../../../infra/transport/json-thread.ts';
import type { SocketBus } from '../../../infra/transport/socket-bus.ts';
import { operatorSocket } from '../../support/socket.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

let rt: TestRuntime;
let bus: SocketBus;
beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', flags: { limits: { maxPayloadBytes: 8 * 1024 * 1024 } } });
  bus = await operatorSocket(join(rt.dir, 'data'));
}, 60_000);
afterAll(async () => {
  await bus?.close();
  await rt?.dispose();
});

describe('a big payload over the socket', () => {
  it('that is not JSON gets the error naming it; a valid one after it is served', async () => {
    const subject = 'skein.cmd.main.file.write';
    const content = 'q'.repeat(OFF_THREAD_BYTES * 1.5);
    const broken = new TextEncoder().encode(`{"data":{"path":"b.txt","content":"${content}"`);
    const refused = decodeReply(subject, await bus.request(subject, broken, { timeoutMs: 60_000 }));
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_json' } });
    // The detail JSON.parse gives for these very bytes (not for an empty payload, had they been lost).
    const detail = (() => {
      try {
        JSON.parse(new TextDecoder().decode(broken));
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(detail).toMatch(/position \d{7}/);
    expect((refused as { error: { message: string } }).error.message).toContain(`payload is not JSON (${detail})`);

    const valid = new TextEncoder().encode(JSON.stringify({ data: { path: 'b.txt', content } }));
    const written = decodeReply(subject, await bus.request(subject, valid, { timeoutMs: 60_000 }));
    expect(written.ok, JSON.stringify(written).slice(0, 300)).toBe(true);
  }, 120_000);
});
