/**
 * @module
 * A raw NATS subscriber over a TCP socket, speaking the text protocol
 * directly: proof that facts are self-describing JSON for any client, with
 * no skein (or nats.js) code involved.
 */
import { createConnection, type Socket } from 'node:net';
import { fromSeed } from '@nats-io/nkeys';

export type RawMessage = { subject: string; payload: string };

/** `creds`: a `.creds` text for a broker with operator-mode auth (the nonce is signed with its nkey). */
export async function rawSubscribe(
  url: string,
  subject: string,
  creds?: string,
): Promise<{ messages: RawMessage[]; close(): void }> {
  const { hostname, port } = new URL(url.replace(/^nats:/, 'http:'));
  const socket: Socket = createConnection({ host: hostname, port: Number(port) });
  const messages: RawMessage[] = [];
  let buffer = Buffer.alloc(0);
  let ready: () => void;
  const subscribed = new Promise<void>((resolve) => (ready = resolve));
  let pongs = 0;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const eol = buffer.indexOf('\r\n');
      if (eol < 0) return;
      const line = buffer.subarray(0, eol).toString('utf8');
      if (line.startsWith('MSG ')) {
        const parts = line.split(' ');
        const size = Number(parts.at(-1));
        if (buffer.length < eol + 2 + size + 2) return;
        messages.push({ subject: parts[1]!, payload: buffer.subarray(eol + 2, eol + 2 + size).toString('utf8') });
        buffer = buffer.subarray(eol + 2 + size + 2);
        continue;
      }
      buffer = buffer.subarray(eol + 2);
      if (line.startsWith('INFO ')) {
        const connect: Record<string, unknown> = { verbose: false, pedantic: false, name: 'raw-test' };
        if (creds) {
          const jwt = /NATS USER JWT-----\s*(\S+)/.exec(creds)![1]!;
          const seed = /NKEY SEED-----\s*(SU[A-Z0-9]+)/.exec(creds)![1]!;
          const nonce = (JSON.parse(line.slice(5)) as { nonce: string }).nonce;
          const sig = fromSeed(new TextEncoder().encode(seed)).sign(new TextEncoder().encode(nonce));
          Object.assign(connect, { jwt, sig: Buffer.from(sig).toString('base64url') });
        }
        socket.write(`CONNECT ${JSON.stringify(connect)}\r\nSUB ${subject} 1\r\nPING\r\n`);
      } else if (line === 'PING') {
        socket.write('PONG\r\n');
      } else if (line === 'PONG') {
        pongs++;
        if (pongs === 1) ready();
      }
    }
  });
  await subscribed;
  return { messages, close: () => socket.destroy() };
}
