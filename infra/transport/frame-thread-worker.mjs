// The socket frame worker thread (infra/transport/frame-thread.ts starts it). Plain JS, no imports of our own,
// so that Node loads it in every mode (sources under tsx, the esbuild bundle, vitest). It decodes a frame as
// line-frames.ts and wire.ts's decodeFrame do (UTF-8 with replacement, a trailing CR dropped, JSON) and its
// base64 `data` as socket-server.ts / socket-bus.ts do (Buffer's base64); the schema check stays with the
// caller. On any error it says so and the caller treats the frame as it treats any invalid one.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', ({ id, pieces }) => {
  let frame;
  let payload;
  try {
    const bytes = Buffer.concat(pieces);
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    frame = JSON.parse(bytes.toString('utf8', 0, end));
    if (frame && typeof frame === 'object' && typeof frame.data === 'string') {
      const decoded = Buffer.from(frame.data, 'base64');
      // Its own ArrayBuffer whole, so that it moves back without a copy.
      payload =
        decoded.byteOffset === 0 && decoded.byteLength === decoded.buffer.byteLength
          ? decoded
          : new Uint8Array(decoded);
      frame.data = '';
    }
  } catch {
    parentPort.postMessage({ id, failed: true });
    return;
  }
  if (payload) parentPort.postMessage({ id, frame, payload }, [payload.buffer]);
  else parentPort.postMessage({ id, frame });
});
