#!/usr/bin/env node
// The `skein` executable. Runs an esbuild bundle when it is at least as new as the TypeScript it was built
// from (built by `npm install` via the prepare script, or `node infra/cli/build.mjs`); otherwise registers
// tsx and runs the sources as they are. A command that only talks to a runtime (`skein call`, `status`...)
// runs the fast entry, dist/cli-client (one script with V8's code cache, client-build.mjs), which checks just
// its own sources (sources.json) and loads nothing else; every other command runs dist/cli. SKEIN_NO_BUNDLE=1
// runs the sources, SKEIN_NO_FAST=1 dist/cli.
// Plain JS on purpose.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bundle = `${root}dist/cli/main.js`;
const clientBundle = `${root}dist/cli-client/client-main.js`;
/** The commands client-main.ts registers (client-commands.ts); a test holds the two lists equal. */
const CLIENT_COMMANDS = new Set([
  'call',
  'tail',
  'status',
  'agents',
  'cancel',
  'review',
  'accept',
  'reject',
  'undo-reject',
  'approvals',
  'approve',
  'deny',
]);

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

/** Whether the fast entry is built and no source it was built from changed since (a missing one: stale). */
function clientBundleFresh() {
  let built;
  let sources;
  try {
    built = statSync(clientBundle).mtimeMs;
    sources = JSON.parse(readFileSync(`${root}dist/cli-client/sources.json`, 'utf8'));
  } catch {
    return false;
  }
  for (const source of sources) {
    const stat = statSync(`${root}${source}`, { throwIfNoEntry: false });
    if (stat === undefined || stat.mtimeMs > built) return false;
  }
  return true;
}

const noBundle = process.env.SKEIN_NO_BUNDLE === '1';
if (!noBundle && process.env.SKEIN_NO_FAST !== '1' && CLIENT_COMMANDS.has(process.argv[2]) && clientBundleFresh()) {
  await import(clientBundle);
} else if (!noBundle && existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource()) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
