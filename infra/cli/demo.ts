/**
 * @module
 * `skein demo`.
 */
import { runDemo } from '../agent/demo.ts';
import { action, EXIT } from './output.ts';

export async function demo(opts: { keep?: boolean }): Promise<void> {
  await action(async () => ((await runDemo({ keep: opts.keep ?? false })).ok ? EXIT.ok : EXIT.failed));
  process.exit(process.exitCode ?? 0);
}
