// Part of dying-frame-worker.mjs: ends the worker thread (exit code 3) on a frame whose payload holds "die-here".
import { parentPort } from 'node:worker_threads';

const MARK = Buffer.from('die-here');

parentPort.on('message', ({ pieces }) => {
  try {
    const frame = JSON.parse(Buffer.concat(pieces).toString('utf8'));
    const payload = typeof frame?.data === 'string' ? Buffer.from(frame.data, 'base64') : Buffer.alloc(0);
    if (payload.includes(MARK)) process.exit(3);
  } catch {
    // Not JSON: the real worker says so.
  }
});
