// The fast entry's start, bundled by client-build.mjs into dist/cli-client/client-main.js beside the bundle
// it runs (client-main.cjs, from client-main.ts) with V8's code cache (code-cache.mjs). Plain JS.
import { fileURLToPath } from 'node:url';
import { runCached } from './code-cache.mjs';

await runCached(fileURLToPath(new URL('./client-main.cjs', import.meta.url)));
