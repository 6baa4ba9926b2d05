// The JSON worker thread (infra/transport/json-thread.ts starts it). Plain JS, no imports of our own, so
// that Node loads it in every mode (sources under tsx, the esbuild bundle, vitest). It decodes as
// infra/transport/wire.ts's parseJson does (UTF-8, fatal, BOM stripped) and parses; on any error it says
// so and the host parses on its own thread, which throws the error the client gets.
import { parentPort } from 'node:worker_threads';

const decoder = new TextDecoder('utf-8', { fatal: true });

parentPort.on('message', ({ id, bytes }) => {
  let value;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    parentPort.postMessage({ id, failed: true });
    return;
  }
  parentPort.postMessage({ id, value });
});
