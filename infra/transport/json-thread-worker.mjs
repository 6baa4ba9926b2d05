// The JSON worker thread (infra/transport/json-thread.ts starts it). Plain JS, no imports of our own, so
// that Node loads it in every mode (sources under tsx, the esbuild bundle, vitest). It decodes as
// infra/transport/wire.ts's parseJson does (UTF-8, fatal, BOM stripped) and parses; on any error it sends the
// payload's bytes back (they were moved here) and the host parses them on its own thread, which throws the
// error the client gets.
//
// A big, well-formed `data.content` string (a file.write) comes back as its UTF-8 bytes instead, moved (not
// copied) with their sha256 and what the edit kernel asks of the text (`facts`, as actors/edit/file-io.ts's
// ContentFacts), and the string itself is left out (a structured clone of a 10 MB string held the host's
// thread ~70 ms): the host rebuilds it from the bytes.
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
    parentPort.postMessage({ id, failed: true, bytes }, [bytes.buffer]);
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
  const facts = {
    cr: content.includes('\r'),
    crlf: content.includes('\r\n'),
    nul: content.includes('\0'),
    bom: content.charCodeAt(0) === 0xfeff,
    lineEnding: detectLineEnding(content),
  };
  data.content = '';
  const sha256 = createHash('sha256').update(own).digest('hex');
  parentPort.postMessage({ id, value, content: { bytes: own, sha256, ascii, facts } }, [own.buffer]);
});

/** actors/edit/file-io.ts's detectLineEnding (the same rule; its test checks they agree). */
function detectLineEnding(text) {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > 0 && lf === 0 ? 'crlf' : crlf > 0 ? 'mixed' : 'lf';
}
