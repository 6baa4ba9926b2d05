/**
 * @module
 * A raw NATS subscriber over a TCP socket, speaking the text protocol
 * directly: proof that facts are self-describing JSON for any client, with
 * no skein (or nats.js) code involved.
 */
import { createConnection, type Socket } from 'node:net';

export type RawMessage = { subject: string; payload: string };

export async function rawSubscribe(url: string, subject: string): Promise<{ messages: RawMessage[]; close(): void }> {
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
        socket.write(`CONNECT {"verbose":false,"pedantic":false,"name":"raw-test"}\r\nSUB ${subject} 1\r\nPING\r\n`);
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
