import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs a script in a fresh node (tsx) with V8 printing every wasm function it compiles; resolves with stderr. */
function traced(script: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-tiering-'));
  const file = join(dir, 'parse.mts');
  writeFileSync(file, script);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--trace-wasm-compilation-times', '--import', 'tsx', file],
      { cwd: ROOT, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true });
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(stdout + stderr);
      },
    );
  });
}

describe('tree-sitter grammars stay on V8 baseline wasm code', () => {
  // Issue 15: the gate's first few hundred parses tiered the bash grammar up to TurboFan in the background
  // (57 functions, one for 0.6 s; ~1.4 s of CPU and ~40 MiB kept), in the middle of the output flood bench.
  it('does not tier the grammars up to TurboFan after hundreds of shell parses', async () => {
    const splitter = join(ROOT, 'actors/permission/shell-splitter.ts');
    const out = await traced(
      `const { createShellSplitter } = await import(${JSON.stringify(splitter)});\n` +
        'const split = await createShellSplitter();\n' +
        'const line = (i) => `cd /tmp/x${i} && git status | grep -v x | awk ' +
        "'{print $2}'" +
        ' > o${i} 2>&1`;\n' +
        'for (let i = 0; i < 400; i++) split(line(i));\n' +
        'await new Promise((r) => setTimeout(r, 2000));\n' +
        "console.log('parsed');\n",
    );
    expect(out).toContain('parsed');
    expect(out).toMatch(/using Liftoff/);
    // A few small functions Liftoff leaves to TurboFan remain (3 here, ≤ 1,757 bytes of wasm); tier-up compiled 57,
    // one of them 27,302 bytes.
    const turbofan = [...out.matchAll(/using TurboFan.* bodysize (\d+)/g)].map((m) => Number(m[1]));
    expect(turbofan.length).toBeLessThan(10);
    expect(Math.max(0, ...turbofan)).toBeLessThan(5_000);
  }, 120_000);
});
