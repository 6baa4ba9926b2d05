/**
 * @module
 * A fact as UTF-8 JSON for the log, with the big text of an output chunk
 * (`data.data`, up to 256 KiB of terminal output) written into the payload
 * once. `encode` made it three times: JSON.stringify scanned and copied it into
 * a string, TextEncoder copied that into bytes, and the string was garbage the
 * size of the chunk (issue 15: ~4 ms of the host's thread per MB of a flood).
 * Here printable ASCII without `"` or `\` (most of a flood) is written as
 * bytes straight from the chunk; other ASCII goes through JSON.stringify of
 * the text alone; anything else, and small facts, through `encode`. The JSON
 * decodes to the same fact; only the order of keys may differ.
 */
import type { Fact } from '../../schemas/index.ts';
import { encode } from './wire.ts';

/** Texts shorter than this go through `encode`: the two writes cost more than they save. */
export const DIRECT_TEXT_CHARS = 16 * 1024;

/** A character JSON escapes: a control character, `"` or `\`. */
const ESCAPED = /[\x00-\x1f"\\]/;

/**
 * `textJsonSafe`: the caller knows `data.data` is printable ASCII without `"` or `\` or CR or LF (the output path
 * does, from each read), so it is not scanned again (~2 ms per MB of a flood).
 */
export function encodeFact(fact: Fact, textJsonSafe = false): Uint8Array {
  const data = fact.data as Record<string, unknown> | null;
  const text = typeof data === 'object' && data !== null ? data['data'] : undefined;
  if (typeof text !== 'string' || text.length < DIRECT_TEXT_CHARS) return encode(fact);
  // Only ASCII: each character is one byte, so latin1 writes it as UTF-8 would.
  if (!textJsonSafe && Buffer.byteLength(text, 'utf8') !== text.length) return encode(fact);
  const { data: _fields, ...envelope } = fact;
  const { data: _text, ...fields } = data!;
  // `data` is the last key of both objects (inserted last), so the JSON ends with `"data":""}}`.
  const shell = JSON.stringify({ ...envelope, data: { ...fields, data: '' } });
  const head = shell.slice(0, -4);
  const quoted = !textJsonSafe && ESCAPED.test(text) ? JSON.stringify(text) : undefined;
  const headBytes = Buffer.byteLength(head, 'utf8');
  const textBytes = quoted === undefined ? text.length + 2 : quoted.length;
  const out = Buffer.allocUnsafe(headBytes + textBytes + 2);
  let at = out.write(head, 0, 'utf8');
  if (quoted === undefined) {
    out[at++] = 0x22;
    at += out.write(text, at, 'latin1');
    out[at++] = 0x22;
  } else at += out.write(quoted, at, 'latin1');
  out[at++] = 0x7d;
  out[at++] = 0x7d;
  return out;
}
