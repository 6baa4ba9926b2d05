/**
 * @module
 * The client side: find and connect to a runtime (`--nats`, SKEIN_NATS_URL,
 * or the runtime.json `skein up` wrote in the data dir), send commands and
 * decode replies. Used by the CLI and by programs that embed skein.
 */
import { randomUUID } from 'node:crypto';
import { subjectFor, type StoredFact } from '../../schemas/index.ts';
import type { Bus } from './bus.ts';
import { decodeReply, encode, type Reply } from './codec.ts';
import { NatsBus } from './nats-bus.ts';
import { readRuntimeInfo, type RuntimeInfo } from '../kernel/runtime.ts';
import { SocketBus } from './socket-bus.ts';
import { clientAuth } from './auth/client-auth.ts';

export type ClientTarget = { natsUrl?: string | undefined; dataDir: string };

export class NoRuntimeError extends Error {
  override name = 'NoRuntimeError';
  constructor(dataDir: string) {
    super(
      `no runtime found for data dir ${dataDir}: start one with ` +
        `\`skein up\` (same --data), or pass --nats <url> / SKEIN_NATS_URL`,
    );
  }
}

export type Client = { bus: Bus; info: RuntimeInfo | undefined; close(): Promise<void> };

export async function connectClient(target: ClientTarget): Promise<Client> {
  if (target.natsUrl) {
    const bus = await NatsBus.connect(target.natsUrl, 'skein-client', clientAuth(target.dataDir));
    return { bus, info: readRuntimeInfo(target.dataDir), close: () => bus.close() };
  }
  const info = readRuntimeInfo(target.dataDir);
  if (!info) throw new NoRuntimeError(target.dataDir);
  const bus = info.natsUrl
    ? await NatsBus.connect(info.natsUrl, 'skein-client', clientAuth(target.dataDir))
    : await SocketBus.connect(info.socketPath!);
  return { bus, info, close: () => bus.close() };
}

/** Sends one command and decodes its reply. */
export async function call(
  bus: Bus,
  agentId: string,
  type: string,
  data: unknown,
  options: { id?: string; timeoutMs?: number } = {},
): Promise<Reply> {
  const subject = subjectFor({ kind: 'cmd', agentId, type });
  const bytes = await bus.request(subject, encode({ id: options.id ?? `c-${randomUUID()}`, data }), {
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  return decodeReply(subject, bytes);
}

/** One readable line for a fact: time, agent, type and key fields. */
export type FactLine = (fact: StoredFact | Omit<StoredFact, 'seq'>) => string;
