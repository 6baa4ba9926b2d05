// The esbuild options of the console page, shared by the server's in-memory build (infra/ui/page.ts) and
// `npm run build` (infra/cli/build.mjs → dist/ui). Plain JS so that build.mjs can import it without tsx; paths
// come from the repository root the caller passes (this file may itself be bundled into dist/cli).
import { join } from 'node:path';

/** @param {string} root the repository root */
export function pageBuild(root) {
  const web = join(root, 'infra', 'ui', 'web');
  return {
    absWorkingDir: root,
    entryPoints: { app: join(web, 'main.ts') },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    // The shared schemas import node:crypto for ids; the page gets Web Crypto instead.
    alias: { 'node:crypto': join(web, 'node-crypto.ts') },
    logLevel: 'warning',
  };
}
