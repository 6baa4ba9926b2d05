/**
 * @module
 * The page's side of the bus: commands as request/reply on
 * `skein.cmd.<agent>.<type>` (the same envelope every client sends), and
 * facts, output and asks as plain subscriptions. A refused reply becomes a
 * `CommandRefused` naming the command and the host's message.
 */
import type { NatsConnection } from '@nats-io/nats-core';

export type Reply = Record<string, unknown>;

export class CommandRefused extends Error {
  override name = 'CommandRefused';
}

const DEFAULT_TIMEOUT_MS = 15_000;

export class ConsoleBus {
  readonly nc: NatsConnection;
  readonly root: string;

  constructor(nc: NatsConnection, root: string) {
    this.nc = nc;
    this.root = root;
  }

  /** Sends `type` on `agentId`'s subject; resolves with the reply's fields, rejects with the host's error. */
  async call(agentId: string, type: string, data: unknown = {}, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Reply> {
    // waitMs: a gated call (typing) whose ask is still open when this call gives up is withdrawn, never run later.
    const body = JSON.stringify({ id: `console-${crypto.randomUUID()}`, waitMs: timeoutMs, data });
    const msg = await this.nc.request(`skein.cmd.${agentId}.${type}`, body, { timeout: timeoutMs });
    const reply = JSON.parse(new TextDecoder().decode(msg.data)) as Reply & { ok?: boolean; error?: Reply };
    if (reply.ok !== true) {
      throw new CommandRefused(`${type}: ${String(reply.error?.['message'] ?? 'refused without a reason')}`);
    }
    return reply;
  }

  /** Calls `fn` with each message on `subject` decoded as JSON (undecodable messages are skipped). */
  watch(subject: string, fn: (message: Reply, subject: string) => void): void {
    this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        try {
          fn(JSON.parse(new TextDecoder().decode(msg.data)) as Reply, msg.subject);
        } catch {
          // Not JSON: nothing the page can show.
        }
      },
    });
  }
}
