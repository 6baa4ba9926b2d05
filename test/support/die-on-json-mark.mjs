// Part of dying-json-worker.mjs: ends the worker thread (exit code 3) on a payload that holds "die-here".
import { parentPort } from 'node:worker_threads';

const MARK = Buffer.from('die-here');

parentPort.on('message', ({ bytes }) => {
  if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(MARK)) process.exit(3);
});
