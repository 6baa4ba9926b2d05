/**
 * @module
 * `skein accept -i`: each file's diff, a question, then one `review.accept` of the files answered yes with the
 * content that was shown (`seen`), so a file an agent changes while you read is refused, never accepted
 * unseen. A file whose diff the listing leaves out (too big) is loaded in full before it is shown.
 */
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { FileReview } from '../../schemas/review.ts';
import { call, callAllPages } from '../transport/client.ts';
import { EXIT } from './output.ts';
import { type RemoteOptions, withClient } from './remote.ts';
import { renderDiff, wantsColor } from './review-diff.ts';

const TIMEOUT_MS = 60_000;

/** Lines of stdin, one per question; undefined once stdin ends (taken as "quit"). */
function answers(): { next(prompt: string): Promise<string | undefined>; close(): void } {
  const rl = createInterface({ input: process.stdin, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  return {
    async next(prompt) {
      process.stderr.write(prompt);
      const { value, done } = await lines.next();
      return done ? undefined : String(value).trim().toLowerCase();
    },
    close: () => rl.close(),
  };
}

export async function acceptInteractively(paths: string[], opts: RemoteOptions): Promise<number> {
  return withClient(opts, async (client, agentId) => {
    const list = (data: Record<string, unknown>) =>
      callAllPages(client.bus, agentId, 'review.list', data, { key: 'files', timeoutMs: TIMEOUT_MS });
    const listed = await list(paths.length ? { paths: paths.map((p) => resolve(p)) } : {});
    if (!listed.ok) {
      process.stderr.write(`skein: ${listed.error.message}\n`);
      return EXIT.failed;
    }
    const files = listed['files'] as FileReview[];
    if (files.length === 0) {
      process.stdout.write('no changes to review\n');
      return EXIT.ok;
    }
    const ask = answers();
    const chosen: FileReview[] = [];
    try {
      for (const [i, listedFile] of files.entries()) {
        let file = listedFile;
        if (file.diffLeftOut) {
          const full = await list({ paths: [file.path], full: true });
          if (!full.ok) throw new Error(full.error.message);
          file = (full['files'] as FileReview[])[0] ?? file;
        }
        process.stdout.write(`\n${file.status} ${file.path} by ${file.agents.join(', ')}\n`);
        process.stdout.write(renderDiff(file, { cwd: process.cwd(), color: wantsColor(process.stdout) }));
        const answer = await ask.next(`accept this file (${i + 1} of ${files.length})? [y/N/q] `);
        if (answer === undefined || answer === 'q') break;
        if (answer === 'y' || answer === 'yes') chosen.push(file);
      }
    } finally {
      ask.close();
    }
    if (chosen.length === 0) {
      process.stdout.write('nothing accepted\n');
      return EXIT.ok;
    }
    const seen = Object.fromEntries(chosen.map((f) => [f.path, f.currentHash]));
    const reply = await call(
      client.bus,
      agentId,
      'review.accept',
      { paths: chosen.map((f) => f.path), seen },
      { timeoutMs: TIMEOUT_MS },
    );
    if (opts.json) process.stdout.write(`${JSON.stringify(reply, null, 2)}\n`);
    else if (!reply.ok) process.stderr.write(`skein: ${reply.error.message}\n`);
    else {
      const accepted = reply['accepted'] as Array<{ path: string; hunkIds: string[] }>;
      for (const a of accepted) process.stdout.write(`accepted ${a.path} (${a.hunkIds.length} hunk(s))\n`);
    }
    return reply.ok ? EXIT.ok : EXIT.failed;
  });
}
