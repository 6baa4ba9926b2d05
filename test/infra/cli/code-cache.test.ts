/**
 * The fast entry's code cache (code-cache.mjs, issue 15): the first run that works writes V8's cache beside
 * the bundle once the command has run, later runs compile from it, and a cache V8 rejects or one written for
 * an earlier bundle is never run: the bundle's own code is. Each run is a real `node` process on real files.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const loader = fileURLToPath(new URL('../../../infra/cli/code-cache.mjs', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A CommonJS bundle that says `word` once a timer fired (its `done`), as client-main's command does. */
function bundle(word: string, exitCode = 0): string {
  const say = `console.log(${JSON.stringify(word)}); process.exitCode = ${exitCode}`;
  return `exports.done = new Promise((resolve) => setTimeout(() => { ${say}; resolve(); }, 20));\n`;
}

/** Runs the bundle through runCached in a fresh node; its stdout, and whether it compiled from the cache. */
function run(file: string): Promise<{ out: string; fromCache: boolean }> {
  const code =
    `const { runCached } = await import(${JSON.stringify(loader)}); ` +
    "console.log('fromCache=' + (await runCached(process.argv[1])));";
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', code, file], (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(new Error(`${err.message}\n${stderr}`));
      const [out, flag] = stdout.trim().split('\n');
      resolve({ out: out!, fromCache: flag === 'fromCache=true' });
    });
  });
}

function fresh(): { dir: string; file: string; caches: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'skein-code-cache-'));
  dirs.push(dir);
  return { dir, file: join(dir, 'b.cjs'), caches: () => readdirSync(dir).filter((f) => f.endsWith('.v8cache')) };
}

describe('runCached', () => {
  it('writes the cache after the command has run, and compiles from it on the next run', async () => {
    const { dir, file, caches } = fresh();
    writeFileSync(file, bundle('hello'));
    expect(await run(file)).toEqual({ out: 'hello', fromCache: false });
    expect(caches()).toHaveLength(1);
    const written = statSync(join(dir, caches()[0]!)).mtimeMs;
    expect(await run(file)).toEqual({ out: 'hello', fromCache: true });
    expect(await run(file)).toEqual({ out: 'hello', fromCache: true });
    // Accepted: not written again, nor any partial file left.
    expect(statSync(join(dir, caches()[0]!)).mtimeMs).toBe(written);
    expect(readdirSync(dir).sort()).toEqual(['b.cjs', caches()[0]]);
  });

  it('writes no cache after a failed run: it compiled too little of what a call runs', async () => {
    const { file, caches } = fresh();
    writeFileSync(file, bundle('nope', 1));
    expect(await run(file)).toEqual({ out: 'nope', fromCache: false });
    expect(caches()).toEqual([]);
  });

  it('runs the bundle when V8 rejects a corrupt cache, then replaces it with a good one', async () => {
    const { dir, file, caches } = fresh();
    writeFileSync(file, bundle('hello'));
    await run(file);
    const cache = join(dir, caches()[0]!);
    writeFileSync(cache, Buffer.alloc(readFileSync(cache).length, 7));
    expect(await run(file)).toEqual({ out: 'hello', fromCache: false });
    expect(await run(file)).toEqual({ out: 'hello', fromCache: true });
  });

  it('never runs the cache of an earlier bundle changed in place to the same length', async () => {
    // V8 checks a cache against the source's length only: keyed on length alone, this printed 'hello'.
    const { file, caches } = fresh();
    writeFileSync(file, bundle('hello'));
    await run(file);
    writeFileSync(file, bundle('HELLO'));
    expect(await run(file)).toEqual({ out: 'HELLO', fromCache: false });
    expect(caches()).toHaveLength(2);
  });
});
