#!/usr/bin/env node
// The `skein` executable. Runs the esbuild bundle in dist/cli when it is at least as new as every
// TypeScript source (built by `npm install` via the prepare script, or `node infra/cli/build.mjs`);
// otherwise registers tsx and runs the sources as they are. Plain JS on purpose.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bundle = `${root}dist/cli/main.js`;

function newestSource() {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of ['actors', 'machines', 'schemas', 'infra']) walk(`${root}${dir}`);
  return newest;
}

if (process.env.SKEIN_NO_BUNDLE !== '1' && existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource()) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
