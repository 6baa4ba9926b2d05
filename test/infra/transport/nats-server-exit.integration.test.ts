/**
 * A nats-server that stops before it is ready: the error carries what it printed on stderr, even when that comes
 * after its end. Node's 'exit' can come before a child's last output; without the wait for the pipe to close the
 * error said only `exited with code 1`, and a lost port race (`address already in use`, `lostPortRace`) was not
 * retried. The "server" is a script that exits, then prints from a child that holds its stderr.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lostPortRace, startNatsServer } from '../../../infra/transport/nats-server.ts';

describe('a nats-server that ends before it is ready', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-natsexit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is an error naming what it printed, when it printed it after its end', async () => {
    const bin = join(dir, 'nats-server');
    writeFileSync(
      bin,
      `#!/bin/sh\n(sleep 0.1; echo 'listen tcp 127.0.0.1:1: bind: address already in use' >&2) &\nexit 1\n`,
    );
    chmodSync(bin, 0o755);
    const started = startNatsServer({ storeDir: join(dir, 'store'), bin, port: 1, readyTimeoutMs: 5_000 });
    const err = await started.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^nats-server exited with code 1 before it was ready:\n.*address already in use/s);
    expect(lostPortRace(err)).toBe(true);
  });
});
