/**
 * The policy file watcher on a real filesystem (issue 14): a file whose directory does not exist yet, edits
 * in place and by rename, a broken file, and the directory removed and made again all reach `onChange` with
 * what the file holds (validated), once per settled change.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readPolicyFile, watchPolicyFiles, type PolicyFileRead } from '../../../actors/permission/policy-watch.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('watchPolicyFiles', () => {
  it('follows a project file from before its directory exists, through edits, breakage and re-creation', async () => {
    const tmp = tempDir('skein-policy-watch-');
    const file = join(tmp.path, 'ws', '.skein', 'policy.json');
    const seen: PolicyFileRead[] = [];
    const watch = watchPolicyFiles(
      [{ layer: 'project', path: file }],
      async (_layer, path, read) => {
        expect(path).toBe(file);
        seen.push(read);
      },
      memoryLogger('silent').logger,
      50,
    );
    const last = async (n: number) => {
      await expect.poll(() => seen.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(n);
      return seen.at(-1)!;
    };
    try {
      mkdirSync(join(tmp.path, 'ws', '.skein'), { recursive: true });
      writeFileSync(file, JSON.stringify({ default: 'deny' }));
      await expect.poll(async () => JSON.stringify(seen.at(-1)), { timeout: 5_000 }).toContain('"deny"');

      let n = seen.length;
      writeFileSync(`${file}.tmp`, JSON.stringify({ default: 'allow' }));
      renameSync(`${file}.tmp`, file); // an editor's atomic save
      expect(await last(n + 1)).toMatchObject({ ok: true, policy: { default: 'allow' } });

      n = seen.length;
      writeFileSync(file, '{ "default": ');
      expect(await last(n + 1)).toMatchObject({ ok: false, error: expect.stringMatching(/not valid JSON/) });

      n = seen.length;
      rmSync(join(tmp.path, 'ws', '.skein'), { recursive: true });
      expect(await last(n + 1)).toEqual({ ok: true, policy: undefined });

      mkdirSync(join(tmp.path, 'ws', '.skein'));
      writeFileSync(file, JSON.stringify({ default: 'confirm' }));
      await expect.poll(async () => JSON.stringify(seen.at(-1)), { timeout: 5_000 }).toContain('"confirm"');
      n = seen.length;
      writeFileSync(file, JSON.stringify({ default: 'deny' }));
      expect(await last(n + 1)).toMatchObject({ ok: true, policy: { default: 'deny' } });
    } finally {
      watch.close();
      tmp.dispose();
    }
  });

  it('names the bad key of a valid JSON file that is not a policy', async () => {
    const tmp = tempDir('skein-policy-read-');
    try {
      const file = join(tmp.path, 'policy.json');
      writeFileSync(file, JSON.stringify({ tools: { terminal: { always_allow: 'ls' } } }));
      expect(await readPolicyFile(file)).toEqual({
        ok: false,
        error: expect.stringMatching(/tools\.terminal\.always_allow/),
      });
      expect(await readPolicyFile(join(tmp.path, 'missing.json'))).toEqual({ ok: true, policy: undefined });
    } finally {
      tmp.dispose();
    }
  });
});
