import { spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic as atomicWrite } from '../../../actors/common/atomic-write.ts';
import { decodeText, encodeText, readTextFile, resolveInWorkspace } from '../../../actors/edit/file-io.ts';

let dir: string;
let ws: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skein-edit-io-'));
  ws = join(dir, 'ws');
  mkdirSync(ws);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('workspace confinement', () => {
  it('resolves relative paths inside the first root and allows new files in existing dirs', async () => {
    writeFileSync(join(ws, 'a.ts'), 'x');
    expect(await resolveInWorkspace([ws], 'a.ts')).toMatchObject({ exists: true, isDirectory: false });
    expect(await resolveInWorkspace([ws], 'new.ts')).toMatchObject({ exists: false });
  });
  it('refuses a path outside, and a symlink that escapes', async () => {
    writeFileSync(join(dir, 'secret'), 's');
    symlinkSync(join(dir, 'secret'), join(ws, 'link'));
    symlinkSync(dir, join(ws, 'dirlink'));
    await expect(resolveInWorkspace([ws], '../secret')).rejects.toThrow(/is outside the agent's workspace/);
    await expect(resolveInWorkspace([ws], 'link')).rejects.toThrow(
      /resolves through a symlink to ".*secret", outside the agent's workspace/,
    );
    await expect(resolveInWorkspace([ws], 'dirlink/new.txt')).rejects.toThrow(/outside the agent's workspace/);
  });
  it('names the missing parent directory', async () => {
    await expect(resolveInWorkspace([ws], 'no/such/file.ts')).rejects.toThrow(
      `Can't create file: parent directory doesn't exist: ` +
        `"${join(ws, 'no/such')}". Create the directory first, then write the file.`,
    );
  });
});

describe('decoding and encoding', () => {
  it('round-trips CRLF and BOM byte for byte', () => {
    const original = Buffer.from('\ufeffa\r\nb\r\n', 'utf8');
    const d = decodeText(original, 'f');
    expect(d).toEqual({ text: 'a\nb\n', bom: true, lineEnding: 'crlf' });
    expect(encodeText(d.text, d).equals(original)).toBe(true);
    expect(encodeText('a\nnew\nb\n', d).toString('utf8')).toBe('\ufeffa\r\nnew\r\nb\r\n');
  });
  it('leaves mixed line endings alone', () => {
    const d = decodeText(Buffer.from('a\r\nb\nc'), 'f');
    expect(d).toEqual({ text: 'a\r\nb\nc', bom: false, lineEnding: 'mixed' });
  });
  it('refuses binary, invalid UTF-8 and over-size files', async () => {
    writeFileSync(join(ws, 'bin'), Buffer.from([1, 2, 0, 3]));
    writeFileSync(join(ws, 'latin1'), Buffer.from([0x61, 0x62, 0xe9, 0x0a]));
    writeFileSync(join(ws, 'big'), 'x'.repeat(100));
    await expect(readTextFile([ws], 'bin', 1000, 'bin')).rejects.toThrow(
      `Can't edit file: "bin" is a binary file (it contains NUL bytes). Only UTF-8 text files can be edited.`,
    );
    await expect(readTextFile([ws], 'latin1', 1000, 'latin1')).rejects.toThrow(
      `Can't edit file: "latin1" is not valid UTF-8 (at byte 2). Only UTF-8 text files can be edited.`,
    );
    await expect(readTextFile([ws], 'big', 10, 'big')).rejects.toThrow(
      `Can't edit file: "big" is 100 bytes, over the 10-byte limit. ` +
        'Edit a smaller file, or raise domains.edit.maxFileBytes in the runtime config.',
    );
  });
});

describe('atomic write', () => {
  it('keeps mode bits and leaves no temp file', async () => {
    const f = join(ws, 'script.sh');
    writeFileSync(f, 'old');
    chmodSync(f, 0o751);
    await atomicWrite(f, Buffer.from('new'), statSync(f).mode & 0o7777);
    expect(readFileSync(f, 'utf8')).toBe('new');
    expect(statSync(f).mode & 0o777).toBe(0o751);
    expect(readdirSync(ws)).toEqual(['script.sh']);
  });

  it('a process killed mid-write leaves the old or the new file, never a torn one', async () => {
    const f = join(ws, 'large.txt');
    const size = 16 * 1024 * 1024;
    writeFileSync(f, Buffer.alloc(size, 'O'));
    const script = fileURLToPath(new URL('../../support/edit-atomic-writer.ts', import.meta.url));
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', script, f, String(size)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      // Let it get into a write (16 MB takes a while on this VM), then kill it hard.
      await vi.waitFor(
        () => {
          const temps = readdirSync(ws).filter((n) => n.endsWith('.tmp'));
          if (temps.length === 0) throw new Error('no write in progress yet');
        },
        { timeout: 20_000, interval: 5 },
      );
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const data = readFileSync(f);
      expect(data.length).toBe(size);
      const first = data[0]!;
      expect([0x4f, 0x4e, 0x4d]).toContain(first); // O, N or M
      expect(data.every((b) => b === first)).toBe(true);
    }
  });
});
