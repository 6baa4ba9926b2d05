/**
 * @module
 * The console page's files: `index.html`, and `app.js`/`app.css` bundled by
 * esbuild from `infra/ui/web/main.ts` (in memory, when esbuild is installed:
 * a checkout always serves its current source), else the copy `npm run build`
 * wrote to `dist/ui/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageBuild } from './page-build.mjs';

export type PageFile = { type: string; body: Buffer };

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WEB = join(ROOT, 'infra', 'ui', 'web');
const DIST = join(ROOT, 'dist', 'ui');

export async function loadPage(): Promise<Map<string, PageFile>> {
  const files = new Map<string, PageFile>();
  files.set('/', { type: 'text/html; charset=utf-8', body: readFileSync(join(WEB, 'index.html')) });
  const bundled = (await bundleInMemory()) ?? fromDist();
  files.set('/app.js', { type: 'text/javascript; charset=utf-8', body: bundled.js });
  files.set('/app.css', { type: 'text/css; charset=utf-8', body: bundled.css });
  return files;
}

async function bundleInMemory(): Promise<{ js: Buffer; css: Buffer } | undefined> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  const result = await esbuild.build({ ...pageBuild(ROOT), outdir: '/ui', write: false });
  const pick = (ext: string) => Buffer.from(result.outputFiles.find((f) => f.path.endsWith(ext))?.contents ?? []);
  return { js: pick('.js'), css: pick('.css') };
}

function fromDist(): { js: Buffer; css: Buffer } {
  const js = join(DIST, 'app.js');
  if (!existsSync(js)) throw new Error(`the console page is not built (${js} is missing): run \`npm run build\``);
  return { js: readFileSync(js), css: readFileSync(join(DIST, 'app.css')) };
}
