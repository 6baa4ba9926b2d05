/**
 * `domains.edit` in the runtime config: the file-size cap of the edit tools is the operator's to set, and
 * every refusal names the key to raise. Before, `domains.edit` was accepted and ignored (any key in it, even
 * a misspelt one), while the refusal told the user to "raise maxFileBytes", which nothing could set.
 * Real runtimes (embedded), real files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_FILE_BYTES } from '../../../schemas/edit-config.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

const running: TestRuntime[] = [];
afterAll(async () => {
  for (const rt of running) await rt.dispose();
});

async function runtime(edit: Record<string, unknown>, maxPayloadBytes?: number): Promise<TestRuntime> {
  const rt = await startTestRuntime({
    mode: 'embedded',
    flags: { domains: { edit }, ...(maxPayloadBytes ? { limits: { maxPayloadBytes } } : {}) },
  });
  running.push(rt);
  return rt;
}

describe('domains.edit.maxFileBytes', () => {
  it('caps what the edit tools read, edit and write, and each refusal names the key', async () => {
    const rt = await runtime({ maxFileBytes: 1_000 });
    writeFileSync(join(rt.workspace, 'big.txt'), `${'b'.repeat(1_499)}\n`);
    for (const reply of [
      await rt.call('file.read', { path: 'big.txt' }),
      await rt.call('file.edit', { path: 'big.txt', edits: [{ oldText: 'bbb', newText: 'c' }] }),
      await rt.call('file.write', { path: 'new.txt', content: 'n'.repeat(1_001) }),
    ]) {
      expect(reply).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
      expect(JSON.stringify(reply)).toMatch(/over the 1000-byte limit.*raise domains\.edit\.maxFileBytes/);
    }
    // The canary: the refused write left nothing, the refused edit changed nothing.
    expect(() => readFileSync(join(rt.workspace, 'new.txt'))).toThrow(/ENOENT/);
    expect(readFileSync(join(rt.workspace, 'big.txt'), 'utf8')).toBe(`${'b'.repeat(1_499)}\n`);
    // At the cap it is allowed.
    ok(await rt.call('file.write', { path: 'at-cap.txt', content: 'a'.repeat(1_000) }));
    expect(readFileSync(join(rt.workspace, 'at-cap.txt'), 'utf8')).toHaveLength(1_000);
  });

  it('raised above the 8 MiB default, a 10 MB file is written and read back; the default refuses it', async () => {
    const tenMb = 10 * 1000 * 1000;
    expect(tenMb).toBeGreaterThan(DEFAULT_MAX_FILE_BYTES);
    const content = `HEAD\n${'0123456789abcdef\n'.repeat(Math.ceil(tenMb / 17))}`;
    // 10 MB calls take seconds under a loaded CI machine: a generous reply timeout (the bench times them).
    const slow = { timeoutMs: 45_000 };
    const byDefault = await runtime({}, 16 * 1024 * 1024);
    expect(await byDefault.call('file.write', { path: 'ten.txt', content }, slow)).toMatchObject({
      ok: false,
      error: { code: 'limit_exceeded' },
    });
    const raised = await runtime({ maxFileBytes: 16 * 1024 * 1024 }, 16 * 1024 * 1024);
    ok(await raised.call('file.write', { path: 'ten.txt', content }, slow));
    expect(readFileSync(join(raised.workspace, 'ten.txt'), 'utf8')).toBe(content);
    const edited = ok(
      await raised.call(
        'file.edit',
        {
          path: 'ten.txt',
          edits: [{ oldText: 'HEAD\n', newText: 'FIRST\n' }],
        },
        slow,
      ),
    );
    expect(JSON.stringify(edited)).not.toMatch(/limit/);
    expect(readFileSync(join(raised.workspace, 'ten.txt'), 'utf8').slice(0, 23)).toBe('FIRST\n0123456789abcdef\n');
  }, 180_000);

  it('refuses a bad value or an unknown key at start, naming it', async () => {
    await expect(runtime({ maxFileBytes: 0 })).rejects.toThrow(/domains\.edit\.maxFileBytes/);
    await expect(runtime({ maxFileBytes: 2 ** 30 })).rejects.toThrow(/domains\.edit\.maxFileBytes.*256 MiB/);
    await expect(runtime({ maxBytes: 5 })).rejects.toThrow(/domains\.edit.*maxBytes/);
  });
});
