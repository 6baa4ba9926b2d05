// The diff worker thread (actors/edit/diff-thread.ts starts it). Plain JS so that Node loads it in every
// mode (sources under tsx, the esbuild bundle, vitest): it registers tsx and imports the TypeScript diffs.
// Texts arrive as UTF-8 bytes (moved, not cloned) and are decoded here as the sender's would be.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { cappedDiff } = await import('./edit-report.ts');
const { reviewDiff } = await import('../../machines/review/action-log-hunks.ts');

const text = (bytes) =>
  bytes == null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

parentPort.on('message', ({ id, kind, display, before, after }) => {
  try {
    if (kind === 'review') parentPort.postMessage({ id, review: reviewDiff(display, text(before), text(after)) });
    else parentPort.postMessage({ id, report: cappedDiff(display, text(before), text(after)) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.stack ?? err) });
  }
});
parentPort.postMessage({ ready: true });
