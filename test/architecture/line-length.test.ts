/**
 * Source lines stay within 120 characters (Biome's formatter wraps code, not
 * strings or comments, so this catches what it leaves).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINE = 120;

describe('line length', () => {
  it(`keeps every line of the TypeScript and JavaScript sources within ${MAX_LINE} characters`, () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.mjs'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f && !f.startsWith('test/fixtures/'));
    expect(files.length).toBeGreaterThan(100);
    const long: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(join(root, file), 'utf8');
      } catch {
        continue; // deleted in the work tree
      }
      text.split('\n').forEach((line, i) => {
        if (line.length > MAX_LINE) long.push(`${file}:${i + 1} (${line.length})`);
      });
    }
    expect(long).toEqual([]);
  });
});
