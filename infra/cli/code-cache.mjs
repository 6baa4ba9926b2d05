// Runs a CommonJS bundle with V8's code cache kept beside it: the fast entry's start (client-start.mjs, issue
// 15). Node 20 has no module.enableCompileCache, and compiling the bundle (commander, zod, nats.js: ~0.8 MB)
// on every `skein call` was a fifth of its CPU time; with the cache, V8 deserializes what an earlier run
// compiled. The cache is written after the first run that exits 0 (and after one whose cache V8 rejected:
// another Node, other flags), so it holds the functions that run compiled too. Plain JS, so skein.mjs needs
// no tsx.
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/**
 * Runs `file` (a CommonJS bundle) and awaits its `done` export; writes the code cache when it had none (or V8
 * rejected it) and the run left no failing exit code.
 * @param {string} file absolute path of the bundle
 * @returns {Promise<boolean>} whether V8 compiled it from the cache
 */
export async function runCached(file) {
  const source = readFileSync(file, 'utf8');
  // Named for the bundle's ctime (set by any write, and by no utimes): V8 checks a cache against the source's
  // length, not its text, and would run the old code of a bundle changed in place to the same length
  // (a rebuild empties the directory anyway).
  const cacheFile = `${file}.${statSync(file, { bigint: true }).ctimeNs}.v8cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  await module.exports.done;
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  // Only after a run that worked: a failed one (no runtime yet, a typo) compiled too little of what a call runs.
  if (!fromCache && !process.exitCode) {
    try {
      // Whole or not at all: another `skein` may be reading it, or writing its own.
      const partial = `${cacheFile}.${process.pid}`;
      writeFileSync(partial, script.createCachedData());
      renameSync(partial, cacheFile);
    } catch {
      // A read-only install: every run compiles, as without a cache.
    }
  }
  return fromCache;
}
