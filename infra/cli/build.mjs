// Bundles the CLI (our TypeScript only; packages stay in node_modules) into dist/cli with esbuild, so
// `skein` starts without transpiling on every run, and its fast entry into dist/cli-client. `npm install` runs
// it (prepare); skein.mjs falls back to tsx when dist/ is missing or older than a source file.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { pageBuild } from '../ui/page-build.mjs';
import { buildClient } from './client-build.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Our TypeScript bundled as ESM for Node 20; packages stay in node_modules. */
const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
};

await build({ ...common, entryPoints: ['infra/cli/main.ts'], outdir: 'dist/cli', splitting: true });

// The fast entry for the commands that only talk to a runtime (`skein call`...): client-build.mjs.
await buildClient(root, 'dist/cli-client');

// `skein/client` (package.json exports): the typed client SDK as one ESM file.
await build({ ...common, entryPoints: ['infra/client/index.ts'], outdir: 'dist/client' });

// The web console page (`skein ui`): app.js and app.css for the browser, served from dist/ui when esbuild
// (a dev dependency) is not installed.
await build({ ...pageBuild(root), outdir: 'dist/ui' });
