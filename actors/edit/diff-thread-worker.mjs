// The diff worker thread (actors/edit/diff-thread.ts starts it). Plain JS so that Node loads it in every
// mode (sources under tsx, the esbuild bundle, vitest): it registers tsx and imports the TypeScript diffs.
// Texts arrive as UTF-8 bytes (moved, not cloned) and are decoded here as the sender's would be; a file's
// bytes (beforeFile/afterFile) as the edit kernel decodes files, read here from a stored copy when it still
// has their hash (beforeStored/afterStored; else it answers `stale`). `inspect` finds a big file's facts and
// sends its bytes back.
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { cappedDiff } = await import('./edit-report.ts');
const { decodeText, sha256 } = await import('./file-io.ts');
const { reviewDiff } = await import('../../machines/review/action-log-hunks.ts');

const text = (bytes) =>
  bytes == null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/** A file's bytes as the edit kernel's text (decodeText: BOM dropped, CRLF as LF). */
const fileText = (bytes, display) =>
  decodeText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), display).text;

/** A big file's facts as textFile finds them, or the RuntimeError decodeText throws, as {code, message}. */
function inspect(id, display, bytes) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let decoded;
  try {
    decoded = decodeText(buf, display);
  } catch (err) {
    if (typeof err?.code !== 'string') throw err;
    parentPort.postMessage({ id, refused: { code: err.code, message: err.message } });
    return;
  }
  const { bom, lineEnding, text: t } = decoded;
  // The bytes go back (moved again): the host keeps them as the file's.
  const facts = { hash: sha256(buf), bom, lineEnding, textLength: t.length };
  parentPort.postMessage({ id, facts, bytes }, [bytes.buffer]);
}

/** The bytes of a stored copy ({file, hash}) when they are still those bytes; else undefined. */
function storedBytes(stored) {
  try {
    const bytes = readFileSync(stored.file);
    return sha256(bytes) === stored.hash ? bytes : undefined;
  } catch {
    return undefined;
  }
}

parentPort.on('message', (m) => {
  const { id, kind, display, beforeFile, afterFile, beforeStored, afterStored } = m;
  try {
    if (kind === 'review') parentPort.postMessage({ id, review: reviewDiff(display, text(m.before), text(m.after)) });
    else if (kind === 'inspect') inspect(id, display, m.before);
    else {
      const before = beforeStored ? storedBytes(beforeStored) : m.before;
      const after = afterStored ? storedBytes(afterStored) : m.after;
      if (before === undefined || after === undefined) {
        parentPort.postMessage({ id, stale: true });
        return;
      }
      const b = beforeFile ? fileText(before, display) : text(before);
      const a = afterFile ? fileText(after, display) : text(after);
      parentPort.postMessage({ id, report: cappedDiff(display, b, a) });
    }
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.stack ?? err) });
  }
});
parentPort.postMessage({ ready: true });
