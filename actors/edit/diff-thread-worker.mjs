// The diff worker thread (actors/edit/diff-thread.ts starts it). Plain JS so that Node loads it in every
// mode (sources under tsx, the esbuild bundle, vitest): it registers tsx and imports the TypeScript diff.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { cappedDiff } = await import('./edit-report.ts');

parentPort.on('message', ({ id, display, before, after }) => {
  try {
    parentPort.postMessage({ id, report: cappedDiff(display, before, after) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.stack ?? err) });
  }
});
parentPort.postMessage({ ready: true });
