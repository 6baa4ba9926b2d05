/**
 * @module
 * `skein call <type> [json]`: one command, its reply on stdout; exit 0 when
 * `ok`, 1 when refused, 2 for bad usage. The data `-` is read from stdin (past
 * the OS's limit on one argument, ~128 KiB). While the command waits for someone
 * to answer a permission request, stderr says so (and until when).
 */
import { randomUUID } from 'node:crypto';
import { subjectPatterns } from '../../schemas/subjects.ts';
import type { Bus } from '../transport/bus.ts';
import { call, connectClient } from '../transport/client.ts';
import { decodeFactEnvelope, decodeJsonArgument } from '../transport/wire.ts';
import { action, EXIT, UsageError } from './output.ts';
import { clientTarget } from './target.ts';

export async function callCommand(
  type: string,
  json: string,
  opts: { agent?: string; id?: string; timeout: string; nats?: string; data?: string },
): Promise<void> {
  await action(async () => {
    const fromStdin = json === '-';
    const text = fromStdin ? await readStdin() : json;
    let data: unknown;
    try {
      data = decodeJsonArgument(
        fromStdin ? `the data of ${type} on stdin` : `the data of ${type}`,
        text,
        'give the command\'s data itself as JSON, e.g. skein call file.read \'{"path":"a.txt"}\' ' +
          '(or - to read it from stdin)',
      );
    } catch (err) {
      throw new UsageError(`${(err as Error).message}`);
    }
    const timeoutMs = Number(opts.timeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
      throw new UsageError(`--timeout '${opts.timeout}' is not a positive number of ms`);
    const target = clientTarget(opts);
    const client = await connectClient(target);
    try {
      const agentId = opts.agent ?? client.info?.rootAgentId ?? target.config.rootAgentId;
      const id = opts.id ?? `c-${randomUUID()}`;
      const stop = announceAsks(client.bus, agentId, id);
      try {
        const reply = await call(client.bus, agentId, type, data, { timeoutMs, id });
        process.stdout.write(`${JSON.stringify(reply, null, 2)}\n`);
        return reply.ok ? EXIT.ok : EXIT.failed;
      } finally {
        stop();
      }
    } finally {
      await client.close();
    }
  });
}

/** All of stdin as UTF-8 (the data `-`); on a terminal, says how to end it. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('skein call: reading the data from stdin (end it with Ctrl-D)\n');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Says on stderr when the command asks for permission: which request, until when this call waits (after that
 * the runtime withdraws the ask: nothing runs later), and how to answer. The ask is the `permission.requested`
 * fact the command caused (its causationId is the command id).
 */
function announceAsks(bus: Bus, agentId: string, commandId: string): () => void {
  const sub = bus.subscribe(subjectPatterns.agentEvents(agentId), (msg) => {
    if (!msg.subject.includes('.permission.')) return;
    let fact: ReturnType<typeof decodeFactEnvelope>;
    try {
      // The envelope only (no catalogue: start-up time); the fields shown are read defensively.
      fact = decodeFactEnvelope(msg.subject, msg.data);
    } catch {
      return;
    }
    if (fact.type !== 'permission.requested' || fact.causationId !== commandId) return;
    const d = fact.data as { requestId?: unknown; tool?: unknown; input?: unknown; callerDeadline?: unknown };
    if (typeof d.requestId !== 'string' || typeof d.input !== 'string') return;
    const until =
      typeof d.callerDeadline === 'string'
        ? ` until ${d.callerDeadline}; after that it is withdrawn and nothing runs`
        : '';
    process.stderr.write(
      `skein call: waiting for an answer to permission request ${d.requestId} ` +
        `(${String(d.tool)} ${JSON.stringify(d.input.slice(0, 120))})${until}. ` +
        `Answer with \`skein approve ${d.requestId}\` or \`skein deny ${d.requestId}\`.\n`,
    );
  });
  return () => sub.unsubscribe();
}
