/**
 * @module
 * The server side of the embedded runtime's unix socket: serves the
 * in-process bus to clients (`socket-bus.ts` is the client). Each connection
 * first presents a token (`auth/socket-tokens.ts`) naming an agent or the
 * operator; from then on the socket applies that identity's publish and
 * subscribe rules, the same lists a broker enforces (`auth/permissions.ts`).
 * A refused publish or subscription is answered with a `violation` frame and
 * the connection stays up, as on nats-server. An agent that finishes has its
 * connections closed and its tokens refused.
 */
import { sendFrame } from './socket-cork.ts';
import { createServer, type Server, type Socket } from 'node:net';
import { chmodSync, existsSync, readFileSync, unlinkSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { NoRespondersError, RequestTimeoutError, toBytes, type Subscription } from './bus.ts';
import { REVOKED, type SocketFrame } from './wire.ts';
import type { EmbeddedBus } from './embedded-bus.ts';
import { InvalidTokenError, socketPermissions, verifySocketToken, type SocketIdentity } from './auth/socket-tokens.ts';
import { readFrames } from './frame-reader.ts';
import { CappedLog } from '../kernel/capped-log.ts';
import { FrameThread, type DecodedFrame } from './frame-thread.ts';
import { mayPublish, mayReceive, maySubscribe, subjectTooLong, type SubjectRules } from './auth/subject-rules.ts';
import { type AgentConnection, SocketAgents } from './socket-agents.ts';
import { AGENT_MAX_SUBS } from './auth/permissions.ts';
import { clipCounted } from '../../schemas/clip.ts';

/** The message a revoked connection gets before it is closed (nats-server's words; defined in wire.ts). */
export { REVOKED };

/** A client that does not say who it is within this time is disconnected. */
const HELLO_TIMEOUT_MS = 5_000;
/**
 * The longest frame before a client has presented a token: a hello is under 1 KiB (a token is at most 512
 * characters). At the payload limit, 256 tokenless connections each holding an unfinished first frame made the
 * runtime buffer 374 MB (1.7 GB at an 8 MiB payload limit).
 */
const HELLO_MAX_BYTES = 4 * 1024;

/**
 * Bytes written to a connection and not yet read by its client, past which the client is a slow consumer and is
 * disconnected, as nats-server does (its max_pending is 64 MB). A client that subscribed to a flooding terminal's
 * output and stopped reading made the runtime keep every frame: 300 MB of output grew its heap by 855 MB.
 */
export const SLOW_CONSUMER_BYTES = 64 * 1024 * 1024;
/**
 * Subscriptions one agent may hold at once, on all its connections together (each publish on the bus is matched
 * against the wildcard ones).
 */
export const MAX_SUBS_PER_AGENT = AGENT_MAX_SUBS;
/** Connections one agent may hold at once (each holds a descriptor of the runtime's). */
export const MAX_CONNECTIONS_PER_AGENT = 64;
/** Connections that have not yet said who they are, all together (each is held up to HELLO_TIMEOUT_MS). */
export const MAX_UNIDENTIFIED = 256;

/**
 * Agents' connections all together: a quarter of this process's descriptors (its soft RLIMIT_NOFILE), so that
 * an agent tree, 64 connections an agent, cannot take the descriptors its terminals, files and log need.
 */
export function agentConnectionBudget(limits = readLimits()): number {
  const soft = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? 1024);
  return Math.max(MAX_CONNECTIONS_PER_AGENT, Math.floor(soft / 4));
}

function readLimits(): string {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return '';
  }
}

export type SocketServer = {
  /** Closes every connection of `agentId` (its agent finished); its tokens are refused from now on. */
  revoke(agentId: string): void;
  /** Closes the connections of every agent `isRevoked` now names (once the host has restored its state). */
  recheck(): void;
  close(): Promise<void>;
};

export type SocketServerOptions = {
  /** The key tokens are checked with (`socketKey(dataDir)`). */
  key: Buffer;
  /** Whether `agentId` has finished: its tokens are refused. */
  isRevoked: (agentId: string) => boolean;
  /** The longest frame a client may send (`frameLimit(limits.maxPayloadBytes)`); a longer one disconnects it. */
  maxFrameBytes: number;
  /** Agents' connections all together (default `agentConnectionBudget()`). */
  maxAgentConnections?: number;
  logger?: Logger | undefined;
};

/** A frame carries its payload in base64 (4/3 of it) beside a subject and a reply subject. */
export const frameLimit = (maxPayloadBytes: number) => Math.ceil((maxPayloadBytes * 4) / 3) + 64 * 1024;

const b64 = (data: Uint8Array | string) => Buffer.from(toBytes(data)).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));
const send = sendFrame;

/** Serves `bus` on the unix socket `path` until `close()`. */
export async function serveBusOnSocket(
  bus: EmbeddedBus,
  path: string,
  options: SocketServerOptions,
): Promise<SocketServer> {
  if (existsSync(path)) unlinkSync(path);
  const sockets = new Set<Socket>();
  /** Each agent's connections, their subscriptions and unread bytes. */
  const agents = new SocketAgents();
  const revoked = new Set<string>();
  const isRevoked = (agentId: string) => revoked.has(agentId) || options.isRevoked(agentId);
  // Big frames (an 8 MB write) are decoded on this thread's worker, not on the event loop.
  const frames = new FrameThread((options.logger ?? pino({ level: 'silent' })).child({ actor: 'frame-thread' }));
  // A client can connect and be refused, or send a frame too big, as fast as it can connect: its lines are capped.
  const refusedLog = options.logger && new CappedLog(options.logger, 'socket client refused', 'client');
  const oversizeLog =
    options.logger &&
    new CappedLog(options.logger, 'socket client sent a frame over the limit; disconnected', 'client');
  const slowLog =
    options.logger && new CappedLog(options.logger, 'socket client too slow to read; disconnected', 'client');
  // A single frame may be bigger than SLOW_CONSUMER_BYTES when limits.maxPayloadBytes is raised that far.
  const maxPending = Math.max(SLOW_CONSUMER_BYTES, 4 * options.maxFrameBytes);
  let unidentified = 0;
  const maxAgentConnections = options.maxAgentConnections ?? agentConnectionBudget();
  let agentConnections = 0;

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const subs = new Map<number, Subscription>();
    let identity: SocketIdentity | undefined;
    let rules: SubjectRules | undefined;
    let dead = false;
    const drop = (message: string) => {
      dead = true;
      for (const sub of subs.values()) sub.unsubscribe();
      subs.clear();
      send(socket, { op: 'violation', message });
      socket.end();
      setTimeout(() => socket.destroy(), 100).unref();
    };
    const kill = () => drop(REVOKED);
    const cut = (why: string) => {
      drop(why);
      socket.destroy();
    };
    const connection: AgentConnection = { kill, cut, socket, subs: () => subs.size };
    const who = () => (identity?.kind === 'agent' ? identity.agentId : (identity?.kind ?? 'unauthenticated'));
    /**
     * Writes a frame, unless the client has stopped reading: then it is cut, and what waited for it goes. The bound
     * holds for an agent's connections together: their sum is read once this one holds a 64th of it (so they
     * hold at most about twice the bound), and the connections holding the most are cut until it is met (the one
     * that stopped reading, not one written to while it reads).
     */
    const push = (frame: SocketFrame) => {
      if (dead) return;
      send(socket, frame);
      const own = socket.writableLength;
      if (own <= maxPending / MAX_CONNECTIONS_PER_AGENT) return;
      const slow = (pending: number, whose: string) => {
        slowLog?.warn(who(), { pendingBytes: pending, max: maxPending });
        return `slow consumer: over ${maxPending} bytes were waiting for ${whose} to read; disconnected`;
      };
      if (identity?.kind !== 'agent') {
        if (own > maxPending) cut(slow(own, 'this client'));
        return;
      }
      const agentId = identity.agentId;
      for (let pending = agents.pendingBytes(agentId); pending > maxPending; ) {
        const largest = agents.largest(agentId);
        if (!largest) return;
        largest.cut(slow(pending, `agent '${agentId}' (on all its connections)`));
        agents.remove(agentId, largest);
        pending = agents.pendingBytes(agentId);
      }
    };
    const refuseAuth = (message: string, agentId?: string) => {
      dead = true;
      refusedLog?.warn(agentId ?? 'unauthenticated', { reason: message });
      send(socket, { op: 'err', rid: 0, code: 'auth', message });
      socket.end();
      setTimeout(() => socket.destroy(), 100).unref();
    };
    const hello = setTimeout(() => refuseAuth('no token presented; connect with a token'), HELLO_TIMEOUT_MS);
    hello.unref();
    let waiting = true;
    /** Whether this connection counts in `agentConnections` (an agent's, welcomed). */
    let counted = false;
    unidentified++;
    const identified = () => {
      if (waiting) unidentified--;
      waiting = false;
    };
    socket.on('close', () => {
      clearTimeout(hello);
      identified();
      if (counted) agentConnections--;
      counted = false;
      for (const sub of subs.values()) sub.unsubscribe();
      subs.clear();
      sockets.delete(socket);
      if (identity?.kind === 'agent') agents.remove(identity.agentId, connection);
    });
    socket.on('error', () => socket.destroy());
    if (unidentified > MAX_UNIDENTIFIED) {
      identified();
      clearTimeout(hello);
      return refuseAuth(`over ${MAX_UNIDENTIFIED} connections are waiting to present a token; try again`);
    }
    const onFrame = (decoded: DecodedFrame | undefined, why?: string) => {
      if (dead) return;
      // Said before the connection is cut, as nats-server says a protocol error: the client learns what it sent.
      if (!decoded) return drop(`Parser Error: ${clipCounted(why ?? 'the frame could not be decoded', 500)}`);
      const { frame } = decoded;
      if (!identity || !rules) {
        if (frame.op !== 'hello') return refuseAuth('Authorization Violation: the first frame must present a token');
        clearTimeout(hello);
        identified();
        try {
          identity = verifySocketToken(options.key, frame.token);
        } catch (err) {
          if (!(err instanceof InvalidTokenError)) throw err;
          return refuseAuth(`Authorization Violation: ${err.message}`);
        }
        if (identity.kind === 'agent' && isRevoked(identity.agentId)) {
          const agentId = identity.agentId;
          identity = undefined;
          return refuseAuth(
            `Authorization Violation: agent '${agentId}' has finished; its tokens are revoked`,
            agentId,
          );
        }
        if (identity.kind === 'agent' && agents.connections(identity.agentId) >= MAX_CONNECTIONS_PER_AGENT) {
          const agentId = identity.agentId;
          identity = undefined;
          return refuseAuth(
            `agent '${agentId}' already holds ${MAX_CONNECTIONS_PER_AGENT} connections, the most one agent may; ` +
              'close one first (one connection carries any number of requests)',
            agentId,
          );
        }
        if (identity.kind === 'agent' && agentConnections >= maxAgentConnections) {
          const agentId = identity.agentId;
          identity = undefined;
          return refuseAuth(
            `the runtime holds ${maxAgentConnections} agent connections, the most it allows (a quarter of its ` +
              'file descriptors); close some, or raise its open-files limit',
            agentId,
          );
        }
        rules = socketPermissions(identity);
        if (identity.kind === 'agent') {
          agentConnections++;
          counted = true;
          agents.add(identity.agentId, connection);
        }
        send(socket, { op: 'welcome', identity: identity.kind === 'agent' ? identity.agentId : 'operator' });
        return;
      }
      serve(decoded, rules);
    };
    const maxBytes = () => (identity ? options.maxFrameBytes : HELLO_MAX_BYTES);
    readFrames(socket, {
      maxBytes,
      frames,
      onFrame,
      onOversize: (bytes) => {
        const agentId = identity?.kind === 'agent' ? identity.agentId : undefined;
        const max = maxBytes();
        oversizeLog?.warn(agentId ?? identity?.kind ?? 'unauthenticated', { agentId, bytes, max });
        drop(
          identity
            ? `frame over ${max} bytes (limits.maxPayloadBytes); disconnected`
            : `frame over ${max} bytes before a token was presented (a hello is under 1 KiB); disconnected`,
        );
      },
    });

    const serve = ({ frame, payload }: DecodedFrame, rules: SubjectRules) => {
      // A subject is echoed in a refusal cut short: it may be as long as a frame.
      const named = 'subject' in frame ? `"${clipCounted(frame.subject, 200)}"` : '';
      const tooLong = 'subject' in frame ? subjectTooLong(frame.subject) : undefined;
      if (tooLong && frame.op === 'req') {
        const message = `Maximum Subject Length Exceeded: ${named} is ${tooLong}`;
        return push({ op: 'err', rid: frame.rid, code: 'permission', message });
      }
      if (tooLong && (frame.op === 'sub' || frame.op === 'pub')) {
        if (frame.op === 'sub') subs.get(frame.sid)?.unsubscribe();
        if (frame.op === 'sub') subs.delete(frame.sid);
        return push({ op: 'violation', message: `Maximum Subject Length Exceeded: ${named} is ${tooLong}` });
      }
      switch (frame.op) {
        case 'sub':
          subs.get(frame.sid)?.unsubscribe();
          subs.delete(frame.sid);
          if (!maySubscribe(rules, frame.subject)) {
            push({ op: 'violation', message: `Permissions Violation for Subscription to ${named}` });
            return;
          }
          if (identity?.kind === 'agent' && agents.subs(identity.agentId) >= MAX_SUBS_PER_AGENT) {
            push({
              op: 'violation',
              message:
                `Maximum Subscriptions Exceeded: agent '${identity.agentId}' holds ${MAX_SUBS_PER_AGENT} on its ` +
                'connections; unsubscribe first',
            });
            return;
          }
          subs.set(
            frame.sid,
            bus.subscribe(frame.subject, (msg) => {
              if (mayReceive(rules, msg.subject)) {
                push({ op: 'msg', sid: frame.sid, subject: msg.subject, data: b64(msg.data) });
              }
            }),
          );
          return;
        case 'unsub':
          subs.get(frame.sid)?.unsubscribe();
          subs.delete(frame.sid);
          return;
        case 'pub':
          if (!mayPublish(rules, frame.subject)) {
            push({ op: 'violation', message: `Permissions Violation for Publish to ${named}` });
            return;
          }
          bus.publish(frame.subject, payload ?? unb64(frame.data));
          return;
        case 'req':
          // The client's flush: a round trip that proves every earlier frame was read; it reaches no one.
          if (frame.subject === '_skein.flush') {
            push({ op: 'err', rid: frame.rid, code: 'no_responders', message: 'flush' });
            return;
          }
          if (!mayPublish(rules, frame.subject)) {
            const message = `Permissions Violation for Publish to ${named}`;
            push({ op: 'err', rid: frame.rid, code: 'permission', message });
            return;
          }
          request(frame, payload ?? unb64(frame.data));
          return;
        default:
          return;
      }
    };
    // Each frame's payload is decoded into bytes of its own, used for nothing else: handed over to the receiver.
    const request = (frame: Extract<SocketFrame, { op: 'req' }>, data: Uint8Array) =>
      bus.request(frame.subject, data, { timeoutMs: frame.timeoutMs, handOver: true }).then(
        (data) => push({ op: 'res', rid: frame.rid, data: b64(data) }),
        (err: Error) =>
          push({
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
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  // Only the owner may connect at all; the token then decides what the connection may do.
  chmodSync(path, 0o600);
  const revoke = (agentId: string) => {
    revoked.add(agentId);
    agents.killAll(agentId);
  };
  return {
    revoke,
    recheck() {
      for (const agentId of agents.agents()) if (options.isRevoked(agentId)) revoke(agentId);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        refusedLog?.close();
        oversizeLog?.close();
        slowLog?.close();
        server.close(() => void frames.close().then(resolve, resolve));
        if (existsSync(path)) unlinkSync(path);
      }),
  };
}
