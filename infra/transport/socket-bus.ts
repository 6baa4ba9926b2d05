/**
 * @module
 * Lets clients (`skein call`, `tail`, programs) reach an embedded runtime,
 * which has no broker: the runtime serves its in-process bus on a unix
 * socket in its data dir (`socket-server.ts`); `SocketBus` is the client
 * side. It presents a token first (an agent's or the operator's), and what
 * the token's identity may not do is refused as a broker would: `onError`
 * hears the violation. Newline-delimited JSON frames (`decodeFrame`),
 * payloads base64 so any bytes pass through.
 */
import { sendFrame } from './socket-cork.ts';
import { createConnection, type Socket } from 'node:net';
import {
  NoRespondersError,
  RequestTimeoutError,
  timerMs,
  toBytes,
  type Bus,
  type BusMsg,
  type Subscription,
} from './bus.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { readFrames } from './frame-reader.ts';
import type { WorkerLog } from '../../actors/common/lazy-worker.ts';
import { FrameThread, type DecodedFrame, type FrameLostError } from './frame-thread.ts';
import { REVOKED } from './wire.ts';

/**
 * The client logs nothing of its frame thread (a death only moves decoding onto this thread); not pino, which
 * `skein call` would load for it (start-up time, see the cli bench).
 */
const SILENT: WorkerLog = { warn: () => {} };

/** Frames from the runtime are bounded by its maxPayloadBytes; this is only a backstop. */
const CLIENT_MAX_FRAME_BYTES = 256 * 1024 * 1024;

const b64 = (data: Uint8Array | string) => Buffer.from(toBytes(data)).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));
const send = sendFrame;

/** The embedded runtime behind the socket is gone (stopped or died), or it cut this connection. */
export class RuntimeGoneError extends RuntimeError {
  override name = 'RuntimeGoneError';
  constructor(path: string) {
    super(
      ErrorCode.Unavailable,
      `the embedded runtime at ${path} closed the connection: it stopped or died, or it cut this client for ` +
        'not reading what it was sent (a slow consumer: its log says so); reconnect, after `skein up` if it is down',
      { retryable: true },
    );
  }
}

/** The embedded runtime refused this client's token, or revoked it. */
export class SocketAuthError extends RuntimeError {
  override name = 'SocketAuthError';
  constructor(path: string, message: string) {
    super(
      ErrorCode.PermissionDenied,
      `the embedded runtime at ${path} refused this client: ${message}. Present a token this runtime issued: ` +
        "the operator's (<data>/auth/operator.token) or an agent's (skein creds <agentId>; SKEIN_SOCKET_TOKEN)",
    );
  }
}

export type SocketBusOptions = {
  /** The identity to act as (`auth/socket-tokens.ts`). */
  token: string;
  /** Errors the runtime reports on this connection: permission violations, revocation. */
  onError?: ((message: string) => void) | undefined;
  /** The script of the thread that decodes big frames (default frame-thread-worker.mjs; tests give one that dies). */
  frameWorker?: URL | undefined;
};

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
  /** Big frames (a big reply) are decoded on a worker, started on the first one and ended with the connection. */
  readonly #frames: FrameThread;
  readonly #onError: ((message: string) => void) | undefined;
  #next = 1;
  #closed: Error | undefined;
  #welcome: { resolve: () => void; reject: (e: Error) => void } | undefined;

  private constructor(socket: Socket, path: string, options: SocketBusOptions) {
    this.#socket = socket;
    this.#path = path;
    this.#onError = options.onError;
    this.#frames = new FrameThread(SILENT, options.frameWorker);
    readFrames(socket, {
      // The runtime is trusted; the bound only keeps a broken one from exhausting this process's memory.
      maxBytes: CLIENT_MAX_FRAME_BYTES,
      frames: this.#frames,
      onFrame: (decoded) => this.#receive(decoded),
      onLost: (err) => this.#lost(err),
      onOversize: (bytes) => {
        this.#fail(new Error(`the runtime sent a frame of over ${bytes} bytes; disconnected`));
        socket.destroy();
      },
    });
    // The runtime died or stopped: every call in flight, and every later one, fails at once.
    socket.on('close', () => {
      this.#fail(new RuntimeGoneError(this.#path));
      void this.#frames.close();
    });
    socket.on('error', () => socket.destroy());
  }

  #fail(error: Error): void {
    this.#closed ??= error;
    this.#welcome?.reject(this.#closed);
    this.#welcome = undefined;
    for (const r of this.#requests.values()) {
      clearTimeout(r.timer);
      r.reject(this.#closed);
    }
    this.#requests.clear();
  }

  /** Connects and presents `options.token`; rejects with SocketAuthError when the runtime refuses it. */
  static async connect(path: string, options: SocketBusOptions): Promise<SocketBus> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const socket = createConnection(path);
      socket.once('connect', () => resolve(socket));
      socket.once('error', (err) =>
        reject(new Error(`cannot reach the embedded runtime at ${path}: ${err.message}; is \`skein up\` running?`)),
      );
    });
    const bus = new SocketBus(socket, path, options);
    await new Promise<void>((resolve, reject) => {
      bus.#welcome = { resolve, reject };
      send(socket, { op: 'hello', token: options.token });
    }).catch(async (err: unknown) => {
      await bus.close();
      throw err;
    });
    return bus;
  }

  #receive(decoded: DecodedFrame | undefined): void {
    if (!decoded) return;
    const { frame, payload } = decoded;
    if (frame.op === 'welcome') {
      this.#welcome?.resolve();
      this.#welcome = undefined;
    } else if (frame.op === 'violation') {
      if (frame.message === REVOKED) this.#fail(new SocketAuthError(this.#path, `${REVOKED} (its agent finished)`));
      // The runtime could not read a frame of ours and closes the connection: say what it read, not that it died.
      if (frame.message.startsWith('Parser Error'))
        this.#fail(
          new RuntimeError(
            ErrorCode.InvalidMessage,
            `the embedded runtime at ${this.#path} refused a frame this client sent (${frame.message}) and closed ` +
              'the connection; fix what is sent and reconnect',
          ),
        );
      this.#onError?.(frame.message);
    } else if (frame.op === 'err' && frame.code === 'auth') {
      this.#fail(new SocketAuthError(this.#path, frame.message));
      this.#onError?.(frame.message);
    } else if (frame.op === 'msg') {
      this.#subs.get(frame.sid)?.({
        subject: frame.subject,
        data: payload ?? unb64(frame.data),
        respond: () => undefined,
      });
    } else if (frame.op === 'res' || frame.op === 'err') {
      const pending = this.#requests.get(frame.rid);
      if (!pending) return;
      this.#requests.delete(frame.rid);
      clearTimeout(pending.timer);
      if (frame.op === 'res') pending.resolve(payload ?? unb64(frame.data));
      else if (frame.code === 'no_responders') pending.reject(new NoRespondersError(pending.subject));
      else if (frame.code === 'timeout') pending.reject(new RequestTimeoutError(pending.subject, pending.timeoutMs));
      else if (frame.code === 'permission') {
        this.#onError?.(frame.message);
        pending.reject(new PermissionViolationError(frame.message));
      } else pending.reject(new Error(frame.message));
    }
  }

  /**
   * A big frame lost with the thread decoding it: the call it answered fails now (not at its timeout); a lost
   * message of a subscription is reported through `onError`. The connection and the frames after it go on.
   */
  #lost(err: FrameLostError): void {
    const { op, rid } = err.head;
    const pending = (op === 'res' || op === 'err') && rid !== undefined ? this.#requests.get(rid) : undefined;
    if (pending) {
      this.#requests.delete(rid!);
      clearTimeout(pending.timer);
      pending.reject(new ReplyLostError(pending.subject, err));
    } else this.#onError?.(`${err.message}; it cannot be delivered`);
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
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs < 1) {
      return Promise.reject(
        new RuntimeError(
          ErrorCode.InvalidMessage,
          `timeoutMs '${options.timeoutMs}' is not a wait of at least 1 ms; give how long to wait for the reply`,
        ),
      );
    }
    const timeoutMs = Math.ceil(options.timeoutMs);
    return new Promise((resolve, reject) => {
      // The runtime answers timeouts itself, but a runtime that hangs or dies cannot: the client keeps its own
      // clock (a little later than the runtime's, so the runtime's own answer wins when it can give one).
      const timer = setTimeout(
        () => {
          if (!this.#requests.delete(rid)) return;
          reject(new RequestTimeoutError(subject, options.timeoutMs));
        },
        timerMs(options.timeoutMs + 250),
      );
      timer.unref();
      this.#requests.set(rid, { resolve, reject, subject, timeoutMs, timer });
      send(this.#socket, { op: 'req', rid, subject, data: b64(data), timeoutMs });
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
    await this.#frames.close();
  }
}

/** The runtime refused a request this identity may not make (a broker's permissions violation). */
export class PermissionViolationError extends RuntimeError {
  override name = 'PermissionViolationError';
  constructor(message: string) {
    super(ErrorCode.PermissionDenied, `${message}: this identity may not send that; use your own agent's subjects`);
  }
}

/** The reply to a request arrived but was lost while it was decoded (the frame thread died). */
export class ReplyLostError extends RuntimeError {
  override name = 'ReplyLostError';
  constructor(subject: string, cause: FrameLostError) {
    super(
      ErrorCode.Unavailable,
      `the reply on '${subject}' was lost: ${cause.message}. The request was handled; send it again with the ` +
        'same command id to get its reply',
      { retryable: true, cause },
    );
  }
}
