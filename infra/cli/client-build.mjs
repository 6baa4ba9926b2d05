// The fast entry's bundle (client-main.ts → dist/cli-client; skein.mjs runs it for the commands that only talk
// to a runtime), shared by `npm run build` (build.mjs) and the test that runs it (client-entry test). Commander
// and zod are bundled in, tree-shaken: loaded from node_modules they are ~120 files, most of `skein call`'s
// start-up (issue 15). Nothing this bundle reaches hands a zod schema to a package (only @nats-io ones stay
// external; the test holds that), so its own zod meets no other copy. Plain JS, so build.mjs needs no tsx.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * Builds the fast entry into `outdir` (emptied first; two levels below `root`, as dist/cli-client is, for
 * the worker script's path) and writes `sources.json` there: our TypeScript it was built from, the files
 * skein.mjs checks are older than the bundle. Returns the esbuild metafile.
 * @param {string} root the repository root, ending in '/'
 * @param {string} outdir relative to root
 */
export async function buildClient(root, outdir) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const bundled = ['commander', 'zod'];
  const others = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((n) => !bundled.includes(n));
  rmSync(join(root, outdir), { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['infra/cli/client-main.ts'],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: others.flatMap((n) => [n, `${n}/*`]),
    // Commander is CommonJS: its require() of node builtins needs a real `require` in an ES module.
    banner: {
      js:
        "import { createRequire as __skeinRequire } from 'node:module'; " +
        'const require = __skeinRequire(import.meta.url);',
    },
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  const sources = Object.keys(result.metafile.inputs)
    .filter((f) => !f.includes('node_modules/') && f.endsWith('.ts'))
    .sort();
  writeFileSync(join(root, outdir, 'sources.json'), `${JSON.stringify(sources, null, 1)}\n`);
  return result.metafile;
}
