// A diff-thread worker that dies as a crash would (the thread exits, code 3) when asked to inspect a file shown as
// "die-here", and is the real worker (actors/edit/diff-thread-worker.mjs) for everything else. Given to DiffThread
// by the tests of a file's bytes lost with the thread. The listener that dies is registered first, so it runs first.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', ({ kind, display }) => {
  if (kind === 'inspect' && display === 'die-here') process.exit(3);
});
await import('../../actors/edit/diff-thread-worker.mjs');
