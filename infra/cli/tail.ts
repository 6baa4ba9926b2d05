/**
 * @module
 * `skein tail [pattern]`: live facts, one readable line each; `--json`
 * prints the raw envelopes. Runs until Ctrl-C.
 */
import { subjectPatterns } from '../../schemas/index.ts';
import { connectClient } from '../transport/client.ts';
import { decodeFact } from '../transport/codec.ts';
import { factLine } from './fact-line.ts';
import { action, UsageError } from './output.ts';
import { clientTarget } from './target.ts';

/** What a usage error about the pattern suggests: facts live under these. */
const PATTERN_HINT =
  "tail prints facts: try 'skein.evt.>' (every fact), 'skein.evt.main.>' (agent main's), " +
  "'skein.evt.*.terminal.>' (every terminal's) or 'skein.out.>' (terminal output)";

export async function tail(
  pattern: string | undefined,
  opts: { json?: boolean; nats?: string; data?: string },
): Promise<void> {
  await action(async () => {
    if (pattern !== undefined) checkTailPattern(pattern);
    const client = await connectClient(clientTarget(opts));
    try {
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
      return 0;
    } finally {
      // Also when a subscription is refused: an open connection would keep the process alive after the error.
      await client.close();
    }
  });
}

/**
 * Refuses a pattern that is not a NATS subject pattern (empty tokens, whitespace, `>` before the end, a
 * wildcard inside a token) or that lies outside the facts' subjects (`skein.evt.…`, `skein.out.…`): either
 * would tail nothing, forever.
 */
export function checkTailPattern(pattern: string): void {
  const refuse = (why: string) => {
    throw new UsageError(`tail pattern '${pattern}' ${why}; ${PATTERN_HINT}`);
  };
  if (/\s/.test(pattern)) refuse('holds whitespace (a subject has none)');
  const tokens = pattern.split('.');
  if (tokens.some((t) => t === '')) refuse('has an empty token (two dots in a row, or a dot at an end)');
  tokens.forEach((t, i) => {
    if (t === '>' && i !== tokens.length - 1) refuse("has '>' before its last token (it must come last)");
    if (t.length > 1 && /[*>]/.test(t)) refuse("has '*' or '>' inside a token (a wildcard is a token of its own)");
  });
  const [root, kind] = tokens;
  if (root !== 'skein' || kind === undefined) refuse("does not start with 'skein.'");
  if (!['evt', 'out', '*', '>'].includes(kind!)) refuse(`matches no facts ('skein.${kind}' subjects are not facts)`);
}
