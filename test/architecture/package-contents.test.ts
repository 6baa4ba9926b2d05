/**
 * What `npm pack` ships: the runtime's sources, the CLI and the docs; never
 * the tests or their fixtures. And every `exports` entry names a file that is shipped.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('npm pack', () => {
  it('ships the sources and the CLI, not the tests', { timeout: 60_000 }, () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
    });
    const [pack] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
    const paths = pack!.files.map((f) => f.path);
    expect(paths.filter((p) => p.startsWith('test/') || /\.test\.ts$/.test(p))).toEqual([]);
    expect(paths).toContain('infra/cli/skein.mjs');
    expect(paths).toContain('schemas/index.ts');
    expect(paths).toContain('docs/protocol.md');
    type Target = string | Record<string, string>;
    const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, Target> };
    // A conditional entry (`skein/client`: types + import) names a shipped file under every condition.
    const targets = Object.values(pkg.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t)));
    for (const target of targets) expect(paths).toContain(target.replace(/^\.\//, ''));
  });
});
