// The JSON worker thread (infra/transport/json-thread.ts starts it). Plain JS, no imports of our own, so
// that Node loads it in every mode (sources under tsx, the esbuild bundle, vitest). It decodes as
// infra/transport/wire.ts's parseJson does (UTF-8, fatal, BOM stripped) and parses; on any error it says
// so and the host parses on its own thread, which throws the error the client gets.
//
// A big, well-formed `data.content` string (a file.write) also comes back as its UTF-8 bytes, moved (not
// copied) with their sha256, so the host writes and hashes them without encoding the text again. When those
// bytes are all ASCII the string itself is left out (a structured clone of a 10 MB string held the host's
// thread ~70 ms): the host rebuilds it from the bytes, a plain copy.
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

const decoder = new TextDecoder('utf-8', { fatal: true });
/** Length of a `data.content` string from which it is sent as bytes (json-thread.ts: CONTENT_BYTES_CHARS). */
const CONTENT_BYTES_CHARS = 256 * 1024;

parentPort.on('message', ({ id, bytes, contentChars = CONTENT_BYTES_CHARS }) => {
  let value;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    parentPort.postMessage({ id, failed: true });
    return;
  }
  const data = value !== null && typeof value === 'object' ? value.data : undefined;
  const content = data !== null && typeof data === 'object' ? data.content : undefined;
  if (typeof content !== 'string' || content.length < contentChars || !content.isWellFormed()) {
    parentPort.postMessage({ id, value });
    return;
  }
  const encoded = Buffer.from(content, 'utf8');
  // Its own buffer whole (a big Buffer.from is never pooled, but a view must not move more than its bytes).
  const own =
    encoded.byteOffset === 0 && encoded.byteLength === encoded.buffer.byteLength ? encoded : Buffer.from(encoded);
  const ascii = own.byteLength === content.length;
  if (ascii) data.content = '';
  const sha256 = createHash('sha256').update(own).digest('hex');
  parentPort.postMessage({ id, value, content: { bytes: own, sha256, ascii } }, [own.buffer]);
});
