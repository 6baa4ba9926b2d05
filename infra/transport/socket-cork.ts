/**
 * @module
 * The embedded runtime's unix-socket frames, written once per turn of the event loop: each socket a frame is
 * sent on is corked until the turn's I/O callbacks and microtasks are done (`setImmediate`), then its frames
 * leave together (one `writev`), in the order sent. Under load a turn answers many commands on one connection;
 * a write each cost a system call and a wake-up of the reader. 1,000 concurrent `file.read`s over the socket
 * took 1,043-1,167 ms, 936-973 ms corked; one command's round trip is unchanged (0.04 ms, `npm run bench --
 * socket-identity`). The same for NATS connections: turn-flush.ts.
 */
import type { Socket } from 'node:net';
import type { SocketFrame } from './wire.ts';

const corked = new Set<Socket>();

function uncorkAll(): void {
  for (const socket of corked) socket.uncork();
  corked.clear();
}

/** Sends one newline-delimited JSON frame on `socket` (nothing if it is gone), with this turn's others. */
export function sendFrame(socket: Socket, frame: SocketFrame): void {
  if (socket.destroyed) return;
  if (!corked.has(socket)) {
    socket.cork();
    corked.add(socket);
    if (corked.size === 1) setImmediate(uncorkAll);
  }
  socket.write(`${JSON.stringify(frame)}\n`);
}
