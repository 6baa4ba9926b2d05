/**
 * @module
 * `skein call <type> [json]`: one command, its reply on stdout; exit 0 when
 * `ok`, 1 when refused, 2 for bad usage.
 */
import { call, connectClient } from '../transport/client.ts';
import { decodeJsonArgument } from '../transport/codec.ts';
import { action, EXIT, UsageError } from './output.ts';
import { clientTarget } from './target.ts';

export async function callCommand(
  type: string,
  json: string,
  opts: { agent?: string; id?: string; timeout: string; nats?: string; data?: string },
): Promise<void> {
  await action(async () => {
    let data: unknown;
    try {
      data = decodeJsonArgument('json argument', json);
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
      const reply = await call(client.bus, agentId, type, data, { timeoutMs, ...(opts.id ? { id: opts.id } : {}) });
      process.stdout.write(`${JSON.stringify(reply, null, 2)}\n`);
      return reply.ok ? EXIT.ok : EXIT.failed;
    } finally {
      await client.close();
    }
  });
}
