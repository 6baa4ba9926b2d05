/**
 * A command over the broker's max_payload is refused by nats.js before it is sent, in its own words
 * ("'payload' max_payload size exceeded"): the client now says it as the host does in embedded mode, with the
 * size, the limit and what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeError } from '../../../schemas/errors.ts';
import { startNetworkedRuntime, type TestRuntime } from '../../support/runtime.ts';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startNetworkedRuntime();
}, 30_000);
afterAll(async () => {
  await rt?.dispose();
});

describe("a request over the broker's max_payload", () => {
  it('is payload_too_large naming its size, the limit and what to do', async () => {
    const err = await rt.call('file.write', { path: 'big.txt', content: 'x'.repeat(2 * 1024 * 1024) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RuntimeError);
    expect(err).toMatchObject({ code: 'payload_too_large' });
    expect((err as Error).message).toMatch(
      new RegExp(
        "^the request on 'skein\\.cmd\\.main\\.file\\.write' is \\d+ bytes, over the broker's max_payload of " +
          '1048576 bytes \\(limits\\.maxPayloadBytes\\); send less data per command$',
      ),
    );
    expect(await rt.call('runtime.ping')).toMatchObject({ ok: true });
  });
});
