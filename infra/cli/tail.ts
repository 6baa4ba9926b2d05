/**
 * @module
 * `skein tail [pattern]`: live facts, one readable line each; `--json`
 * prints the raw envelopes. Runs until Ctrl-C.
 */
import { subjectPatterns } from '../../schemas/index.ts';
import { connectClient } from '../transport/client.ts';
import { decodeFact } from '../transport/codec.ts';
import { factLine } from './fact-line.ts';
import { action } from './output.ts';
import { clientTarget } from './target.ts';

export async function tail(
  pattern: string | undefined,
  opts: { json?: boolean; nats?: string; data?: string },
): Promise<void> {
  await action(async () => {
    const client = await connectClient(clientTarget(opts));
    const patterns = pattern ? [pattern] : [subjectPatterns.allEvents, subjectPatterns.allOutput];
    for (const p of patterns) {
      client.bus.subscribe(p, (msg) => {
        try {
          const fact = decodeFact(msg.subject, msg.data);
          process.stdout.write(opts.json ? `${JSON.stringify(fact)}\n` : `${factLine(fact)}\n`);
        } catch (err) {
          process.stderr.write(`skein tail: skipped a message on ${msg.subject}: ${(err as Error).message}\n`);
        }
      });
    }
    await client.bus.flush();
    process.stderr.write(`tailing ${patterns.join(' and ')} (Ctrl-C to stop)\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await client.close();
    return 0;
  });
}
