/**
 * `skein review --diff` rendering (issue 14, friction): relative paths, hunk ids on the `@@` lines, colour only
 * when asked. The diffs come from the review domain's own `reviewDiff`, as the runtime sends them.
 */
import { describe, expect, it } from 'vitest';
import { displayPath, renderDiff, wantsColor } from '../../../infra/cli/review-diff.ts';
import { reviewDiff } from '../../../machines/review/action-log-hunks.ts';

const ESC = '\x1b[';

function file(path: string, base: string | null, current: string | null) {
  return { path, ...reviewDiff(path, base, current) };
}

describe('review --diff rendering', () => {
  it('shows paths relative to the working dir and each hunk id on its @@ line', () => {
    const base = `${Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n')}\n`;
    const current = base.replace('line 2\n', 'line two\n').replace('line 25\n', 'line 25b\n');
    const f = file('/tmp/ws/src/x.ts', base, current);
    expect(f.hunks).toHaveLength(2);
    const text = renderDiff(f, { cwd: '/tmp/ws', color: false });
    const lines = text.split('\n');
    expect(lines[0]).toBe('--- a/src/x.ts');
    expect(lines[1]).toBe('+++ b/src/x.ts');
    expect(text).not.toContain('/tmp/ws');
    const ats = lines.filter((l) => l.startsWith('@@'));
    expect(ats).toEqual([expect.stringMatching(/@@ .* @@ /), expect.stringMatching(/@@ .* @@ /)]);
    expect(ats[0]?.endsWith(` ${f.hunks[0]?.id}`)).toBe(true);
    expect(ats[1]?.endsWith(` ${f.hunks[1]?.id}`)).toBe(true);
    expect(text).not.toContain(ESC);
  });

  it('rewrites only the header: a removed line that reads "-- x" stays as it is', () => {
    const f = file('/w/a.txt', 'keep\n-- x\n++ y\n', 'keep\n');
    const text = renderDiff(f, { cwd: '/w', color: false });
    expect(text.split('\n').filter((l) => l.startsWith('---'))).toEqual(['--- a/a.txt', '--- x']);
    expect(text).toContain('-++ y');
  });

  it('keeps /dev/null for a created file, and absolute paths outside the working dir', () => {
    const created = renderDiff(file('/w/new.txt', null, 'hi\n'), { cwd: '/w', color: false });
    expect(created.split('\n').slice(0, 2)).toEqual(['--- /dev/null', '+++ b/new.txt']);
    const outside = renderDiff(file('/elsewhere/b.txt', 'a\n', 'b\n'), { cwd: '/w', color: false });
    expect(outside.split('\n').slice(0, 2)).toEqual(['--- a/elsewhere/b.txt', '+++ b/elsewhere/b.txt']);
    expect(displayPath('/w', '/w')).toBe('/w');
    expect(displayPath('/w2/x', '/w')).toBe('/w2/x');
  });

  it('colours added, removed and @@ lines when asked, and only then', () => {
    const text = renderDiff(file('/w/a.txt', 'old\n', 'new\n'), { cwd: '/w', color: true });
    expect(text).toContain(`${ESC}31m-old${ESC}0m`);
    expect(text).toContain(`${ESC}32m+new${ESC}0m`);
    expect(text).toMatch(/\x1b\[36m@@ .* h[0-9a-f]+\x1b\[0m/);
  });

  it('colour needs a TTY and no NO_COLOR', () => {
    expect(wantsColor({ isTTY: true }, {})).toBe(true);
    expect(wantsColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(wantsColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(wantsColor({ isTTY: false }, {})).toBe(false);
    expect(wantsColor({}, {})).toBe(false);
  });
});
