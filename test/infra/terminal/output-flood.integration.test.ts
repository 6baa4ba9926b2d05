/**
 * An output flood through a `skein up` runtime over real NATS and a real PTY
 * (issue 15): a subscriber of the output subject gets every byte, in order,
 * whatever the chunks grew to; and every chunk appended before the exec's
 * reply is in the log after the runtime is SIGKILLed at once.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeFact, decodeReply, encode } from '../../../infra/transport/codec.ts';
import { JetStreamLog } from '../../../infra/transport/jetstream-log.ts';
import { cleanEnv, startCli, type LongRunning } from '../../support/cli.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';
import { ok } from '../../support/replies.ts';

type Chunk = { offset: number; bytes: number; data: string };

const FLOOD_BYTES = 3_000_000;
/** Plain text, then quotes, backslashes, a tab, UTF-8 and SGR sequences, then many short lines. */
const COMMAND =
  `head -c ${FLOOD_BYTES} /dev/zero | tr '\\0' a; printf '\\n"q" b\\\\s\\tt \\303\\251 \\033[1mB\\033[0m\\n'; ` +
  'seq 1 60000; echo flood-end';
const TAIL = ['\r\n"q" b\\s\tt é \x1b[1mB\x1b[0m\r\n', '59999\r\n60000\r\nflood-end\r\n'];

/** Chunks in offset order, each starting where the one before ended; returns their text. */
function contiguous(chunks: Chunk[]): string {
  for (let i = 1; i < chunks.length; i++) {
    expect(chunks[i]!.offset).toBe(chunks[i - 1]!.offset + chunks[i - 1]!.bytes);
  }
  for (const c of chunks) expect(Buffer.byteLength(c.data)).toBe(c.bytes);
  return chunks.map((c) => c.data).join('');
}

describe('an output flood through skein up (networked)', () => {
  let nats: TestNats;
  let up: LongRunning;
  let nc: NatsConnection;
  let dir: string;

  beforeAll(async () => {
    nats = await startTestNats();
    dir = mkdtempSync(join(tmpdir(), 'skein-flood-'));
    const ws = join(dir, 'ws');
    mkdirSync(join(ws, '.skein'), { recursive: true });
    writeFileSync(join(ws, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    writeFileSync(join(ws, '.skein', 'config.json'), JSON.stringify({ log: { outputMaxBytes: 2 ** 30 } }));
    up = startCli(['up', '--nats', nats.url, '--data', join(dir, 'data'), '--workspace', ws], {
      cwd: ws,
      env: cleanEnv(),
    });
    await up.waitFor(/mode networked/, 90_000);
    nc = await connect({ servers: nats.url });
  }, 120_000);

  afterAll(async () => {
    await nc?.close();
    if (up && up.child.exitCode === null && up.child.signalCode === null) {
      up.child.kill('SIGKILL');
      await up.exited;
    }
    await nats?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  async function request(type: string, data: unknown, timeout = 30_000) {
    const m = await nc.request(`skein.cmd.main.${type}`, encode({ data }), { timeout });
    return ok(decodeReply(type, m.data));
  }

  it('reaches a subscriber whole and in order; after a SIGKILL the log holds every chunk of the reply', async () => {
    const { terminalId } = (await request('terminal.open', {})) as { terminalId: string };
    const subject = `skein.out.main.${terminalId}`;
    const live: Chunk[] = [];
    nc.subscribe(subject, {
      callback: (_err, m) => {
        live.push(decodeFact(m.subject, m.data).data as Chunk);
      },
    });
    await nc.flush();
    const reply = await request('terminal.exec', { terminalId, command: COMMAND, timeoutMs: 100_000 }, 110_000);
    expect(reply['exitCode']).toBe(0);
    // Every fact of the command is acked before its reply: kill the runtime at once, nothing flushed after.
    up.child.kill('SIGKILL');
    await up.exited;

    const log = await JetStreamLog.open(nc, { outputMaxBytes: 2 ** 30 });
    const stored: Chunk[] = [];
    for await (const f of log.read({ stream: 'output', subject })) stored.push(f.data as Chunk);
    const text = contiguous(stored);
    const start = text.indexOf('a'.repeat(1000));
    expect(start).toBeGreaterThan(0);
    const end = text.indexOf(TAIL[1]!);
    expect(end).toBeGreaterThan(start);
    expect(text.slice(start, end + TAIL[1]!.length)).toBe(
      'a'.repeat(FLOOD_BYTES) +
        TAIL[0] +
        Array.from({ length: 60_000 }, (_, i) => `${i + 1}\r\n`).join('') +
        'flood-end\r\n',
    );
    // The subscriber saw the same chunks from where it subscribed (after the open's prompt), maybe a little after
    // the reply.
    const tail = stored.filter((c) => c.offset >= (live[0]?.offset ?? 0));
    await vi.waitFor(() => expect(live.length).toBeGreaterThanOrEqual(tail.length), { timeout: 20_000 });
    expect(contiguous(live)).toBe(contiguous(tail));
    expect(contiguous(live)).toContain(text.slice(start, end + TAIL[1]!.length));
  }, 180_000);
});
