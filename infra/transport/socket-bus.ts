/**
 * @module
 * Lets clients (`skein call`, `tail`, programs) reach an embedded runtime,
 * which has no broker: the runtime serves its in-process bus on a unix
 * socket in its data dir; `SocketBus` is the client side. Newline-delimited
 * JSON frames (`decodeFrame`), payloads base64 so any bytes pass through.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { NoRespondersError, RequestTimeoutError, toBytes, type Bus, type BusMsg, type Subscription } from './bus.ts';
import { ErrorCode, RuntimeError } from '../../schemas/index.ts';
import { decodeFrame, type SocketFrame } from './codec.ts';
import type { EmbeddedBus } from './embedded-bus.ts';

const b64 = (data: Uint8Array | string) => Buffer.from(toBytes(data)).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));
const send = (socket: Socket, frame: SocketFrame) => {
  if (!socket.destroyed) socket.write(`${JSON.stringify(frame)}\n`);
};

/** Serves `bus` on the unix socket `path` until `close()`. */
export async function serveBusOnSocket(bus: EmbeddedBus, path: string): Promise<{ close(): Promise<void> }> {
  if (existsSync(path)) unlinkSync(path);
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const subs = new Map<number, Subscription>();
    const lines = createInterface({ input: socket, crlfDelay: Infinity });
    lines.on('line', (line) => {
      let frame: SocketFrame;
      try {
        frame = decodeFrame(line);
      } catch {
        socket.destroy();
        return;
      }
      switch (frame.op) {
        case 'sub':
          subs.get(frame.sid)?.unsubscribe();
          subs.set(
            frame.sid,
            bus.subscribe(frame.subject, (msg) =>
              send(socket, { op: 'msg', sid: frame.sid, subject: msg.subject, data: b64(msg.data) }),
            ),
          );
          return;
        case 'unsub':
          subs.get(frame.sid)?.unsubscribe();
          subs.delete(frame.sid);
          return;
        case 'pub':
          bus.publish(frame.subject, unb64(frame.data));
          return;
        case 'req':
          bus.request(frame.subject, unb64(frame.data), { timeoutMs: frame.timeoutMs }).then(
            (data) => send(socket, { op: 'res', rid: frame.rid, data: b64(data) }),
            (err: Error) =>
              send(socket, {
                op: 'err',
                rid: frame.rid,
                code:
                  err instanceof NoRespondersError
                    ? 'no_responders'
                    : err instanceof RequestTimeoutError
                      ? 'timeout'
                      : 'failed',
                message: err.message,
              }),
          );
          return;
        default:
          return;
      }
    });
    socket.on('close', () => {
      for (const sub of subs.values()) sub.unsubscribe();
      sockets.delete(socket);
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  // Only the owner may connect: whoever reaches the socket can act as any agent.
  chmodSync(path, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        if (existsSync(path)) unlinkSync(path);
      }),
  };
}

/** The embedded runtime behind the socket is gone (stopped or died). */
export class RuntimeGoneError extends RuntimeError {
  override name = 'RuntimeGoneError';
  constructor(path: string) {
    super(
      ErrorCode.Unavailable,
      `the embedded runtime at ${path} closed the connection (it stopped or died); ` +
        'start it again with `skein up` and reconnect',
      { retryable: true },
    );
  }
}

export class SocketBus implements Bus {
  readonly kind = 'socket' as const;
  readonly #socket: Socket;
  readonly #subs = new Map<number, (msg: BusMsg) => void>();
  readonly #requests = new Map<
    number,
    {
      resolve: (d: Uint8Array) => void;
      reject: (e: Error) => void;
      subject: string;
      timeoutMs: number;
      timer: NodeJS.Timeout;
    }
  >();
  readonly #path: string;
  #next = 1;
  #closed: Error | undefined;

  private constructor(socket: Socket, path: string) {
    this.#socket = socket;
    this.#path = path;
    const lines = createInterface({ input: socket, crlfDelay: Infinity });
    lines.on('line', (line) => this.#receive(line));
    // readline forwards the socket's errors (ECONNRESET when the runtime is killed): handled by 'close'.
    lines.on('error', () => undefined);
    // The runtime died or stopped: every call in flight, and every later one, fails at once.
    socket.on('close', () => this.#fail(new RuntimeGoneError(this.#path)));
    socket.on('error', () => socket.destroy());
  }

  #fail(error: Error): void {
    this.#closed ??= error;
    for (const r of this.#requests.values()) {
      clearTimeout(r.timer);
      r.reject(this.#closed);
    }
    this.#requests.clear();
  }

  static connect(path: string): Promise<SocketBus> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      socket.once('connect', () => resolve(new SocketBus(socket, path)));
      socket.once('error', (err) =>
        reject(new Error(`cannot reach the embedded runtime at ${path}: ${err.message}; is \`skein up\` running?`)),
      );
    });
  }

  #receive(line: string): void {
    let frame: SocketFrame;
    try {
      frame = decodeFrame(line);
    } catch {
      return;
    }
    if (frame.op === 'msg') {
      this.#subs.get(frame.sid)?.({ subject: frame.subject, data: unb64(frame.data), respond: () => undefined });
    } else if (frame.op === 'res' || frame.op === 'err') {
      const pending = this.#requests.get(frame.rid);
      if (!pending) return;
      this.#requests.delete(frame.rid);
      clearTimeout(pending.timer);
      if (frame.op === 'res') pending.resolve(unb64(frame.data));
      else if (frame.code === 'no_responders') pending.reject(new NoRespondersError(pending.subject));
      else if (frame.code === 'timeout') pending.reject(new RequestTimeoutError(pending.subject, pending.timeoutMs));
      else pending.reject(new Error(frame.message));
    }
  }

  publish(subject: string, data: Uint8Array | string): void {
    send(this.#socket, { op: 'pub', subject, data: b64(data) });
  }

  subscribe(pattern: string, handler: (msg: BusMsg) => void): Subscription {
    const sid = this.#next++;
    this.#subs.set(sid, handler);
    send(this.#socket, { op: 'sub', sid, subject: pattern });
    return {
      unsubscribe: () => {
        this.#subs.delete(sid);
        send(this.#socket, { op: 'unsub', sid });
      },
    };
  }

  request(subject: string, data: Uint8Array | string, options: { timeoutMs: number }): Promise<Uint8Array> {
    const rid = this.#next++;
    if (this.#closed || this.#socket.destroyed) return Promise.reject(this.#closed ?? new RuntimeGoneError(this.#path));
    return new Promise((resolve, reject) => {
      // The runtime answers timeouts itself, but a runtime that hangs or dies cannot: the client keeps its own
      // clock (a little later than the runtime's, so the runtime's own answer wins when it can give one).
      const timer = setTimeout(() => {
        if (!this.#requests.delete(rid)) return;
        reject(new RequestTimeoutError(subject, options.timeoutMs));
      }, options.timeoutMs + 250);
      timer.unref();
      this.#requests.set(rid, { resolve, reject, subject, timeoutMs: options.timeoutMs, timer });
      send(this.#socket, { op: 'req', rid, subject, data: b64(data), timeoutMs: options.timeoutMs });
    });
  }

  async flush(): Promise<void> {
    // Frames are ordered on one socket; a round trip proves the server has read what came before.
    await this.request('_skein.flush', '', { timeoutMs: 1000 }).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#fail(new Error('this client closed its connection to the embedded runtime'));
    this.#socket.end();
    this.#socket.destroy();
  }
}
