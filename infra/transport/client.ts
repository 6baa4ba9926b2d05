/**
 * @module
 * The client side: find and connect to a runtime (`--nats`, SKEIN_NATS_URL,
 * or the runtime.json `skein up` wrote in the data dir), send commands and
 * decode replies. Used by the CLI and by programs that embed skein.
 */
import { randomUUID } from 'node:crypto';
import { waitMsFor, type StoredFact } from '../../schemas/message.ts';
import { subjectFor } from '../../schemas/subjects.ts';
import type { Bus } from './bus.ts';
import { decodeReply, encode, type Reply } from './wire.ts';
import { readRuntimeInfo, type RuntimeInfo } from '../kernel/runtime-info.ts';
import { requireSocketToken } from './auth/socket-token-file.ts';

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
    const bus = await connectNats(target.natsUrl, target.dataDir);
    return { bus, info: readRuntimeInfo(target.dataDir), close: () => bus.close() };
  }
  const info = readRuntimeInfo(target.dataDir);
  if (!info) throw new NoRuntimeError(target.dataDir);
  const bus = info.natsUrl
    ? await connectNats(info.natsUrl, target.dataDir)
    : await connectSocket(info.socketPath!, requireSocketToken(target.dataDir));
  return { bus, info, close: () => bus.close() };
}

// Each transport is imported when used: a CLI call loads nats.js and the JWT code only to talk to a broker,
// and neither for an embedded runtime's socket (start-up time, see the cli bench).
async function connectNats(url: string, dataDir: string): Promise<Bus> {
  const [{ NatsBus }, { clientAuth }] = await Promise.all([import('./nats-bus.ts'), import('./auth/client-auth.ts')]);
  return NatsBus.connect(url, 'skein-client', clientAuth(dataDir));
}

async function connectSocket(path: string, token: string): Promise<Bus> {
  const { SocketBus } = await import('./socket-bus.ts');
  return SocketBus.connect(path, { token });
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
  const timeoutMs = options.timeoutMs ?? 30_000;
  // waitMs tells the runtime how long we wait: an ask still open after that is withdrawn, not run later.
  const bytes = await bus.request(
    subject,
    encode({ id: options.id ?? `c-${randomUUID()}`, waitMs: waitMsFor(timeoutMs), data }),
    {
      timeoutMs,
    },
  );
  return decodeReply(subject, bytes);
}

/**
 * Sends a paged command (`review.list`) and follows `nextCursor` until the last page, concatenating the
 * `key` arrays (a file whose diff came in parts joined into one): the whole answer, each page within one
 * message. A refused page is returned as is.
 */
export async function callAllPages(
  bus: Bus,
  agentId: string,
  type: string,
  data: Record<string, unknown>,
  options: { key?: string; timeoutMs?: number; maxPages?: number } = {},
): Promise<Reply> {
  const key = options.key ?? 'files';
  let merged: (Reply & { ok: true }) | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < (options.maxPages ?? 10_000); page++) {
    const reply = await call(bus, agentId, type, cursor === undefined ? data : { ...data, cursor }, options);
    if (!reply.ok) return reply;
    const items = (reply[key] as unknown[] | undefined) ?? [];
    merged = merged ? { ...merged, [key]: joinParts(merged[key] as unknown[], items) } : reply;
    cursor = typeof reply['nextCursor'] === 'string' ? reply['nextCursor'] : undefined;
    if (cursor === undefined) break;
  }
  const { nextCursor: _done, ...all } = merged!;
  return { ...all, [key]: whole((all[key] as unknown[] | undefined) ?? []) } as Reply;
}

type Part = { path?: unknown; diff?: unknown; diffPart?: { start: number; end: number; total: number } };

/**
 * `before` then `items`, a file whose diff came in parts (`diffPart`, review.list) joined into one entry: the
 * diff concatenated, the rest (hunks) from the last part; `diffPart` dropped once the diff is whole.
 */
export function joinParts(before: unknown[], items: unknown[]): unknown[] {
  const out = [...before];
  for (const item of items) {
    const last = out.at(-1) as Part | undefined;
    const next = item as Part;
    if (last?.diffPart && next?.diffPart && last.path === next.path && next.diffPart.start === last.diffPart.end) {
      const diff = `${last.diff as string}${next.diff as string}`;
      out[out.length - 1] = { ...next, diff, diffPart: { ...next.diffPart, start: 0 } };
    } else out.push(item);
  }
  return out;
}

/** `items` with `diffPart` dropped from the files whose parts are all joined. */
export function whole(items: unknown[]): unknown[] {
  return items.map((item) => {
    const { diffPart, ...rest } = item as Part;
    return diffPart && diffPart.start === 0 && diffPart.end === diffPart.total ? rest : item;
  });
}

/** One readable line for a fact: time, agent, type and key fields. */
export type FactLine = (fact: StoredFact | Omit<StoredFact, 'seq'>) => string;
