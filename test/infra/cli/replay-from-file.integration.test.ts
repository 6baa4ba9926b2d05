/**
 * `skein replay --from-file` on what is not quite a log (README walk-through): `/etc/passwd` replayed to 0 facts
 * with exit 0 and a warning per line naming no line; an export with a line deleted replayed with no warning.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.ts';
import { tempDir } from '../../support/temp-dir.ts';

const GOLDEN = fileURLToPath(new URL('../../fixtures/golden/demo-events.jsonl', import.meta.url));
const goldenLines = () => readFileSync(GOLDEN, 'utf8').trimEnd().split('\n');

describe('skein replay --from-file (real CLI)', () => {
  let dir: ReturnType<typeof tempDir>;
  afterEach(() => dir?.dispose());
  const write = (name: string, lines: string[]) => {
    const path = join(dir.path, name);
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  };

  it('refuses a file none of whose lines is a fact, saying it is not a log export', async () => {
    dir = tempDir();
    const path = write('passwd', ['root:x:0:0:root:/root:/bin/bash', 'daemon:x:1:1::/usr/sbin:/usr/sbin/nologin']);
    const out = await runCli(['replay', '--from-file', path]);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(
      new RegExp(
        `^skein: --from-file '${path}' is not a skein event log export: none of its 2 lines is a fact \\(line 1:`,
      ),
    );
    expect(out.stderr.split('\n')).toHaveLength(2);
  });

  it('names the line number of each line it skips', async () => {
    dir = tempDir();
    const lines = goldenLines();
    const path = write('bad.jsonl', [...lines.slice(0, 2), 'garbage', ...lines.slice(2)]);
    const out = await runCli(['replay', '--digest', '--from-file', path]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(new RegExp(`^skein replay: skipped line 3 of ${path}: payload is not JSON`));
    expect(out.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('warns about a gap in the sequence, naming the missing range', async () => {
    dir = tempDir();
    const lines = goldenLines();
    const one = write('one.jsonl', [...lines.slice(0, 4), ...lines.slice(5)]);
    const three = write('three.jsonl', [...lines.slice(0, 6), ...lines.slice(9)]);
    const a = await runCli(['replay', '--digest', '--from-file', one]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stderr).toBe(
      `skein replay: warning: fact 5 is missing from ${one} (the sequence jumps from 4 to 6); ` +
        'the state is replayed without it\n',
    );
    const b = await runCli(['replay', '--from-file', three]);
    expect(b.stderr).toContain(`warning: facts 7-9 are missing from ${three} (the sequence jumps from 6 to 10)`);
    const whole = await runCli(['replay', '--digest', '--from-file', GOLDEN]);
    expect(whole.stderr).toBe('');
  });
});
