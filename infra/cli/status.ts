/**
 * @module
 * `skein status [--digest] [--json]`: asks the live runtime (runtime.status).
 */
import { call, connectClient } from '../transport/client.ts';
import { action, EXIT } from './output.ts';
import { clientTarget } from './target.ts';

export async function status(opts: { digest?: boolean; json?: boolean; nats?: string; data?: string }): Promise<void> {
  await action(async () => {
    const target = clientTarget(opts);
    const client = await connectClient(target);
    try {
      const root = client.info?.rootAgentId ?? target.config.rootAgentId;
      const reply = await call(client.bus, root, 'runtime.status', {}, { timeoutMs: 10_000 });
      if (!reply.ok) {
        process.stderr.write(`skein: ${reply.error.message}\n`);
        return EXIT.failed;
      }
      if (opts.digest) process.stdout.write(`${String(reply['digest'])}\n`);
      else if (opts.json) process.stdout.write(`${JSON.stringify(reply, null, 2)}\n`);
      else {
        const { ok: _ok, ...fields } = reply;
        for (const [k, v] of Object.entries(fields)) process.stdout.write(`${k}: ${String(v)}\n`);
      }
      return EXIT.ok;
    } finally {
      await client.close();
    }
  });
}
