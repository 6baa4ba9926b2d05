/**
 * @module
 * Text files for the edit kernel: reading one confined to the agent's workspace roots
 * (`actors/common/confined-fs.ts`), decoding it (refusing binary, invalid UTF-8 and over-size files;
 * remembering BOM and line endings) and encoding it back. Writes go through `writeConfined`.
 */
import { createHash } from 'node:crypto';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { type ConfinedFile, readConfined } from '../common/confined-fs.ts';

export type { ConfinedFile } from '../common/confined-fs.ts';

export { realRoots, resolveAndRead, resolveInWorkspace, type ResolvedPath } from '../common/confined-fs.ts';

export type LineEnding = 'lf' | 'crlf' | 'mixed';

/** A decoded text file: `text` has no BOM and, for CRLF files, LF line endings. */
export type TextFile = {
  path: string;
  bytes: Buffer;
  text: string;
  bom: boolean;
  lineEnding: LineEnding;
  mode: number;
  mtimeMs: number;
  hash: string;
  /** `text.length`, known without decoding a big file's text (see `decodeFile`). */
  textLength: number;
};

/**
 * What the edit kernel asks of a new text besides its bytes, found where it was encoded (the host's JSON thread,
 * for a big file.write), so its 10 MB are never scanned here: whether it has a CR, a CRLF, a NUL, a leading BOM
 * character, and its line endings (`detectLineEnding`).
 */
export type ContentFacts = { cr: boolean; crlf: boolean; nul: boolean; bom: boolean; lineEnding: LineEnding };

/** What decoding a file tells besides its text: found on the file thread for big files (`decodeFile`). */
export type FileFacts = { hash: string; bom: boolean; lineEnding: LineEnding; textLength: number };

/** A file's facts found off the event loop, and its bytes (moved there and back: the ones given are empty after). */
export type Inspected = { facts: FileFacts; bytes: Buffer };

/**
 * Finds a file's facts off the event loop: undefined when it is small (decode it here), or when the thread
 * cannot; throws the RuntimeError `decodeText` would for binary or invalid UTF-8, and a retryable `unavailable`
 * when the thread died with the bytes.
 */
export type InspectFile = (bytes: Buffer, shown: string) => Promise<Inspected | undefined>;

export { DEFAULT_MAX_FILE_BYTES } from '../../schemas/edit-config.ts';

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Reads and decodes a text file confined to `roots` (see `confined-fs.ts`: no symlink followed out of the
 * roots, no hard-linked or special file); throws a RuntimeError naming the path for anything that is not
 * editable text.
 */
export async function readTextFile(
  roots: readonly string[],
  path: string,
  maxBytes: number,
  shown = path,
): Promise<TextFile> {
  const file = await readConfined(roots, path, maxBytes, shown);
  if (!file)
    throw new RuntimeError(
      ErrorCode.NotFound,
      `Can't edit file: path not found: ${JSON.stringify(shown)}. ` +
        `Check the path, or create the file with write_file.`,
    );
  return textFile(file, shown);
}

/** A file read through the confined walk, decoded as text (refuses binary and invalid UTF-8). */
export function textFile(file: ConfinedFile, shown: string): TextFile {
  const decoded = decodeText(file.bytes, shown);
  return {
    path: file.path,
    bytes: file.bytes,
    ...decoded,
    mode: file.mode,
    mtimeMs: file.mtimeMs,
    hash: sha256(file.bytes),
    textLength: decoded.text.length,
  };
}

/**
 * `textFile`, with a big file's hash, UTF-8 check and line endings found by `inspect` off the event loop; its
 * text is then decoded here only if asked for (a whole-file write never asks: its diff decodes on the diff
 * thread). For a 10 MB file the decode and the hash held the event loop for 50–200 ms, twice per write.
 */
export async function decodeFile(file: ConfinedFile, shown: string, inspect?: InspectFile): Promise<TextFile> {
  const inspected = inspect ? await inspect(file.bytes, shown) : undefined;
  if (!inspected) return textFile(file, shown);
  const { facts, bytes } = inspected;
  // The bytes came back from the thread in a new view: `file` holds them again, not the emptied one.
  file.bytes = bytes;
  let text: string | undefined;
  return {
    path: file.path,
    bytes,
    bom: facts.bom,
    lineEnding: facts.lineEnding,
    mode: file.mode,
    mtimeMs: file.mtimeMs,
    hash: facts.hash,
    textLength: facts.textLength,
    get text() {
      text ??= decodeText(bytes, shown).text;
      return text;
    },
  };
}

/** Bytes → kernel text (no BOM, CRLF as LF for pure-CRLF files). Refuses binary and invalid UTF-8. */
export function decodeText(bytes: Buffer, shown: string): { text: string; bom: boolean; lineEnding: LineEnding } {
  const probe = bytes.subarray(0, 8192);
  if (probe.includes(0))
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `Can't edit file: ${JSON.stringify(shown)} is a binary file ` +
        `(it contains NUL bytes). Only UTF-8 text files can be edited.`,
    );
  let raw: string;
  try {
    raw = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `Can't edit file: ${JSON.stringify(shown)} is not valid UTF-8 (at ` +
        `byte ${firstInvalidUtf8(bytes)}). Only UTF-8 text files can be edited.`,
    );
  }
  const bom = raw.charCodeAt(0) === 0xfeff;
  if (bom) raw = raw.slice(1);
  const lineEnding = detectLineEnding(raw);
  return { text: lineEnding === 'crlf' ? raw.replace(/\r\n/g, '\n') : raw, bom, lineEnding };
}

export function detectLineEnding(text: string): LineEnding {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > 0 && lf === 0 ? 'crlf' : crlf > 0 ? 'mixed' : 'lf';
}

/**
 * Kernel text → bytes with the file's BOM and line endings: CRLF files get
 * CRLF on every line (inserted ones too), LF files get LF (a model's `\r\n`
 * included), mixed files are written as they are. A CRLF file's kernel text has every line ending as LF (the
 * model's new text is made LF before it is applied): a `\r` left in it is the file's own, written back as it
 * was (`x\r\r\n` lost a `\r` until 8 December). A BOM the text begins with is the file's one BOM, not a second.
 */
export function encodeText(text: string, format: { bom: boolean; lineEnding: LineEnding }): Buffer {
  const body =
    format.lineEnding === 'crlf'
      ? text.replace(/\n/g, '\r\n')
      : format.lineEnding === 'lf'
        ? text.replace(/\r\n/g, '\n')
        : text;
  const bom = format.bom && body.charCodeAt(0) !== 0xfeff;
  return Buffer.from((bom ? '\ufeff' : '') + body, 'utf8');
}

/** Validates that `text` is well-formed (no lone surrogates), so it encodes to valid UTF-8. */
export function assertWellFormed(text: string, what: string): void {
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `The ${what} contains a lone UTF-16 surrogate, which is not valid UTF-8. Send well-formed text.`,
    );
  }
}

/** Offset of the first byte that starts an invalid UTF-8 sequence. */
function firstInvalidUtf8(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const n = b < 0x80 ? 0 : b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : -1;
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) if (((bytes[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return i;
}
