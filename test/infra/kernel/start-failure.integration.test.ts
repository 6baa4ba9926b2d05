/**
 * An embedded start that fails after the event log is open (the socket key unreadable, an auth file not
 * writable) closes the log's files instead of leaving them to the garbage collector; a full disk while the
 * start writes its auth files (the socket key, the operator token, the log seal) says which file and what to do,
 * not a bare ENOSPC. The disk-full cases run on a real 1 MiB tmpfs (skipped, with the reason printed, where it
 * cannot be mounted).
 */
import { mkdirSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { socketKey, writeOperatorToken } from '../../../infra/transport/auth/socket-tokens.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { startTestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { mountTmpfs } from '../../support/tmpfs.ts';

/** The files under `dir` this process holds open. */
function openFilesUnder(dir: string): string[] {
  const held: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) held.push(target);
    } catch {
      // Closed meanwhile (the fd of readdir itself).
    }
  }
  return held;
}

describe('a failed embedded start', () => {
  const temp = tempDir('skein-start-fail-');
  afterAll(() => temp.dispose());

  it('closes the event log it opened when the socket key cannot be read', async () => {
    const dir = join(temp.path, 'key-dir');
    // A directory where the socket key should be: reading it fails after the log is open.
    mkdirSync(join(dir, 'data', 'auth', 'socket.key'), { recursive: true });
    // Named, with what to do (a bare EISDIR until 8 December).
    const key = join(dir, 'data', 'auth', 'socket.key');
    await expect(startTestRuntime({ mode: 'embedded', dir })).rejects.toThrow(
      `${key} cannot be read as the socket key (EISDIR); move it away to make one`,
    );
    expect(openFilesUnder(join(dir, 'data'))).toEqual([]);
  });
});

const disk = mountTmpfs(1024 * 1024);
const skip = typeof disk === 'string' ? disk : undefined;
if (skip) console.warn(`skipping the disk-full start tests: ${skip}`);
afterAll(() => {
  if (typeof disk !== 'string') disk.dispose();
});

describe.skipIf(skip !== undefined)('auth files written on start, on a full disk (1 MiB tmpfs)', () => {
  it('names the socket key or the operator token and says to free space and start again', () => {
    if (typeof disk === 'string') return;
    const dataDir = join(disk.path, 'data');
    mkdirSync(join(dataDir, 'auth'), { recursive: true });
    disk.fill(0);
    try {
      const keyPath = join(dataDir, 'auth', 'socket.key');
      expect(() => socketKey(dataDir)).toThrow(
        `the socket key ${keyPath} could not be written (ENOSPC: disk full); ` +
          'free space on that disk (or move --data) and start skein again',
      );
      const tokenPath = join(dataDir, 'auth', 'operator.token');
      expect(() => writeOperatorToken(dataDir, Buffer.alloc(32, 1))).toThrow(
        `the operator token ${tokenPath} could not be written (ENOSPC: disk full); ` +
          'free space on that disk (or move --data) and start skein again',
      );
    } finally {
      disk.free();
    }
  });

  it('names the key or the state of the log seal', async () => {
    if (typeof disk === 'string') return;
    const dataDir = join(disk.path, 'seal');
    mkdirSync(join(dataDir, 'auth'), { recursive: true });
    disk.fill(0);
    try {
      await expect(JsonlLog.open({ dir: dataDir, sealDir: join(dataDir, 'auth') })).rejects.toThrow(
        `the key of the log seal ${join(dataDir, 'auth', 'log.key')} could not be written (ENOSPC: disk full); ` +
          'free space on that disk (or move --data) and start skein again',
      );
    } finally {
      disk.free();
    }
  });
});
