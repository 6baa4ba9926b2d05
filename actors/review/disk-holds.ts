/**
 * @module
 * Whether a file still holds what a change left there: a shell change whose record is retried later is recorded
 * only while it does. Once a later change has replaced it, that change's record starts from the disk and covers
 * it; recording the old one after it would make the log say the file holds what it no longer does. Never
 * follows a symlink and never blocks on a FIFO an agent put in the file's place.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';

/** Whether `path` is a regular file holding exactly `content` (UTF-8), or absent when `content` is null. */
export async function diskHolds(path: string, content: string | null): Promise<boolean> {
  const stat = await lstat(path).catch(() => null);
  if (content === null) return stat === null;
  if (!stat?.isFile() || stat.size !== Buffer.byteLength(content)) return false;
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (!file) return false;
  try {
    const now = await file.stat();
    if (!now.isFile() || now.size !== stat.size) return false;
    const { buffer, bytesRead } = await file.read(Buffer.alloc(now.size + 1), 0, now.size + 1, 0);
    return bytesRead === now.size && buffer.subarray(0, bytesRead).equals(Buffer.from(content));
  } finally {
    await file.close();
  }
}
