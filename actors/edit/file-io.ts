/**
 * @module
 * File effects for the edit kernel: confining a path to the agent's
 * workspace roots after resolving symlinks, decoding a text file (refusing
 * binary, invalid UTF-8 and over-size files; remembering BOM and line
 * endings), encoding it back, and atomic writes (temp file in the same
 * directory, fsync, rename, directory fsync; mode bits kept).
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';

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
};

export type ResolvedPath = { path: string; exists: boolean; isDirectory: boolean };

export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Real paths of the roots (resolved once per call; roots must exist). */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) {
    try {
      out.push(await realpath(r));
    } catch {
      throw new RuntimeError(
        ErrorCode.NotFound,
        `Worktree at '${r}' does not exist. Configure an existing workspace root for this agent.`,
      );
    }
  }
  return out;
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

/**
 * Resolves `given` (absolute, or relative to the first root) to a real path
 * inside one of `roots`. A missing file is allowed (for creation) when its
 * parent directory exists inside a root; a symlink (file or parent) whose
 * target leaves every root is refused.
 */
export async function resolveInWorkspace(roots: readonly string[], given: string): Promise<ResolvedPath> {
  if (given.includes('\0'))
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `Can't create file: invalid filename: ${JSON.stringify(given)} contains a NUL byte. Use a plain path.`,
    );
  if (roots.length === 0)
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      'This agent has no workspace roots, so it cannot touch files. Configure a workspace root for the agent.',
    );
  const real = await realRoots(roots);
  const lexical = isAbsolute(given) ? resolve(given) : resolve(real[0]!, given);
  const outside = () =>
    new RuntimeError(
      ErrorCode.PermissionDenied,
      `Path ${JSON.stringify(given)} is outside the agent's workspace ` +
        `(${real.join(', ')}). Use a path inside a workspace root.`,
      {
        details: { path: given },
      },
    );
  const lexicallyInside = real.some((r) => inside(r, lexical)) || roots.some((r) => inside(resolve(r), lexical));
  if (!lexicallyInside) throw outside();
  let target: string;
  let exists = true;
  try {
    target = await realpath(lexical);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    exists = false;
    // A dangling symlink: refuse rather than create a file wherever it points.
    const link = await lstat(lexical).catch(() => undefined);
    if (link?.isSymbolicLink())
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `Path ${JSON.stringify(given)} is a symlink to a missing target. Edit a regular file inside the workspace.`,
      );
    const parent = dirname(lexical);
    let realParent: string;
    try {
      realParent = await realpath(parent);
    } catch {
      throw new RuntimeError(
        ErrorCode.NotFound,
        `Can't create file: parent directory doesn't exist: ` +
          `${JSON.stringify(parent)}. Create the directory first, then write the file.`,
      );
    }
    const ps = await stat(realParent);
    if (!ps.isDirectory())
      throw new RuntimeError(
        ErrorCode.InvalidMessage,
        `Can't create file: parent is not a directory: ` +
          `${JSON.stringify(parent)}. Choose a path whose parent is a directory.`,
      );
    target = join(realParent, basename(lexical));
  }
  if (!real.some((r) => inside(r, target))) {
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `Path ${JSON.stringify(given)} resolves through a symlink to ${JSON.stringify(target)}, ` +
        `outside the agent's workspace. Edit files inside the workspace, or ask for permission.`,
      {
        details: { path: given, target },
      },
    );
  }
  const isDirectory = exists ? (await stat(target)).isDirectory() : false;
  return { path: target, exists, isDirectory };
}

/** Reads and decodes a text file; throws a RuntimeError naming the path for anything that is not editable text. */
export async function readTextFile(path: string, maxBytes: number, shown = path): Promise<TextFile> {
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT')
      throw new RuntimeError(
        ErrorCode.NotFound,
        `Can't edit file: path not found: ${JSON.stringify(shown)}. ` +
          `Check the path, or create the file with write_file.`,
      );
    throw err;
  });
  if (st.isDirectory())
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `Can't edit file: path is a directory: ${JSON.stringify(shown)}. Give the path of a file.`,
    );
  if (st.size > maxBytes) {
    throw new RuntimeError(
      ErrorCode.LimitExceeded,
      `Can't edit file: ${JSON.stringify(shown)} is ${st.size} bytes, over ` +
        `the ${maxBytes}-byte limit. Edit a smaller file or raise maxFileBytes.`,
    );
  }
  const bytes = Buffer.from(await readFileBytes(path));
  const decoded = decodeText(bytes, shown);
  return { path, bytes, ...decoded, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs, hash: sha256(bytes) };
}

async function readFileBytes(path: string): Promise<Uint8Array> {
  const fh = await open(path, constants.O_RDONLY);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
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
 * included), mixed files are written as they are.
 */
export function encodeText(text: string, format: { bom: boolean; lineEnding: LineEnding }): Buffer {
  const body =
    format.lineEnding === 'crlf'
      ? text.replace(/\r?\n/g, '\r\n')
      : format.lineEnding === 'lf'
        ? text.replace(/\r\n/g, '\n')
        : text;
  return Buffer.from((format.bom ? '\ufeff' : '') + body, 'utf8');
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

/**
 * Writes `data` to `path` atomically: a temp file in the same directory,
 * fsync, rename over the target, then fsync the directory. Readers see the
 * old file or the new one, never a torn one. `mode` (permission bits) is kept.
 */
export async function atomicWrite(path: string, data: Buffer, mode?: number): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.skein-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', mode ?? 0o666);
  try {
    try {
      await fh.writeFile(data);
      if (mode !== undefined) await fh.chmod(mode);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  const dh = await open(dir, constants.O_RDONLY).catch(() => undefined);
  if (dh) {
    await dh.sync().catch(() => undefined);
    await dh.close();
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
