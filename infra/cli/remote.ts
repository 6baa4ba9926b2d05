/**
 * @module
 * One command to the runtime, its reply rendered: the shared body of the
 * thin CLI commands (agents, review, approvals…). `--json` prints the reply.
 */
import type { CommandOf, CommandType, ReplyOf } from '../../schemas/index.ts';
import { call, callAllPages, connectClient, type Client } from '../transport/client.ts';
import type { Reply } from '../transport/codec.ts';
import { EXIT } from './output.ts';
import { clientTarget } from './target.ts';

export type RemoteOptions = { nats?: string; data?: string; json?: boolean; agent?: string };

/** Connects, runs `work`, closes. `agentId` is --agent or the runtime's root agent. */
export async function withClient<T>(
  opts: RemoteOptions,
  work: (client: Client, agentId: string) => Promise<T>,
): Promise<T> {
  const target = clientTarget(opts);
  const client = await connectClient(target);
  try {
    return await work(client, opts.agent ?? client.info?.rootAgentId ?? target.config.rootAgentId);
  } finally {
    await client.close();
  }
}

/**
 * Sends `type` and prints the reply with `render` (or as JSON with --json); exit 1 when refused. The reply is
 * typed by the command's reply schema (the runtime parsed it before sending).
 */
export async function callAndPrint<T extends CommandType>(
  opts: RemoteOptions,
  type: T,
  data: unknown,
  render: (reply: ReplyOf<CommandOf<T>>) => string,
  agentId?: string,
  /** The reply is paged (review.list): follow nextCursor and merge this array. */
  pagedKey?: string,
): Promise<number> {
  return withClient(opts, async (client, root) => {
    const reply: Reply = pagedKey
      ? await callAllPages(client.bus, agentId ?? root, type, data as Record<string, unknown>, {
          key: pagedKey,
          timeoutMs: 60_000,
        })
      : await call(client.bus, agentId ?? root, type, data, { timeoutMs: 60_000 });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(reply, null, 2)}\n`);
    } else if (reply.ok) {
      const text = render(reply as unknown as ReplyOf<CommandOf<T>>);
      if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    } else {
      process.stderr.write(`skein: ${reply.error.message}\n`);
    }
    return reply.ok ? EXIT.ok : EXIT.failed;
  });
}
