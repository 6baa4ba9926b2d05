// The fast entry's bundle (client-main.ts → dist/cli-client; skein.mjs runs it for the commands that only talk
// to a runtime), shared by `npm run build` (build.mjs) and the test that runs it (client-entry test). Every
// package it uses (commander, zod, nats.js) is bundled in, tree-shaken, into one CommonJS file,
// client-main.cjs: loaded from node_modules they are ~120 files, most of `skein call`'s start-up (issue 15),
// and one script is what V8's code cache takes (code-cache.mjs). client-main.js (client-start.mjs) runs it.
// Nothing is left external but node's own modules (the test holds that), so its zod meets no other copy.
// Plain JS, so build.mjs needs no tsx.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * Builds the fast entry into `outdir` (emptied first, with any code cache; two levels below `root`, as
 * dist/cli-client is, for the worker script's path) and writes `sources.json` there: our files it was built
 * from, the files skein.mjs checks are older than the bundle. Returns the esbuild metafile of the bundle.
 * @param {string} root the repository root, ending in '/'
 * @param {string} outdir relative to root
 */
export async function buildClient(root, outdir) {
  rmSync(join(root, outdir), { recursive: true, force: true });
  const common = { absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', logLevel: 'warning' };
  const result = await build({
    ...common,
    entryPoints: ['infra/cli/client-main.ts'],
    outfile: join(outdir, 'client-main.cjs'),
    format: 'cjs',
    // The worker scripts are found next to the module that starts them (frame-thread.ts).
    define: { 'import.meta.url': '__skeinModuleUrl' },
    banner: { js: "var __skeinModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    sourcemap: 'linked',
    metafile: true,
  });
  const start = await build({
    ...common,
    entryPoints: ['infra/cli/client-start.mjs'],
    outfile: join(outdir, 'client-main.js'),
    format: 'esm',
    metafile: true,
  });
  const sources = [...Object.keys(result.metafile.inputs), ...Object.keys(start.metafile.inputs)]
    .filter((f) => !f.includes('node_modules/') && /\.(ts|mjs)$/.test(f))
    .sort();
  writeFileSync(join(root, outdir, 'sources.json'), `${JSON.stringify(sources, null, 1)}\n`);
  return result.metafile;
}
