/**
 * `skein call` starts fast because it loads only what a call needs (issue 14, "CLI startup"): what the CLI
 * loads at start (main.ts) and for a call (call.ts, with every static import) must not pull in the catalogue
 * (every schema built with zod), the kernel, the domains, or the transports' heavy packages. esbuild's
 * metafile is the import graph the bundle really has; dynamic imports (one transport per mode) stay out.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));

async function staticGraph(entry: string): Promise<{ files: string[]; packages: string[] }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    write: false,
    metafile: true,
    splitting: true,
    outdir: '/nonexistent-out',
    logLevel: 'silent',
  });
  const outputs = result.metafile.outputs;
  const entryOut = Object.entries(outputs).find(([, o]) => o.entryPoint === entry)!;
  // Follow the entry chunk's static imports only: `import()` chunks load when a mode or command needs them.
  const seen = new Set<string>([entryOut[0]]);
  const queue = [entryOut[0]];
  const packages = new Set<string>();
  while (queue.length > 0) {
    const out = outputs[queue.pop()!]!;
    for (const imp of out.imports) {
      if (imp.kind !== 'import-statement') continue;
      if (imp.external) packages.add(imp.path);
      else if (!seen.has(imp.path)) {
        seen.add(imp.path);
        queue.push(imp.path);
      }
    }
  }
  const files = [...seen].flatMap((o) => Object.keys(outputs[o]!.inputs));
  return { files: files.sort(), packages: [...packages].sort() };
}

describe('skein call start-up imports', () => {
  it.each(['infra/cli/main.ts', 'infra/cli/call.ts'])('%s loads no catalogue, kernel or domain', async (entry) => {
    const { files, packages } = await staticGraph(entry);
    const heavy = files.filter(
      (f) =>
        f === 'schemas/catalog.ts' ||
        f === 'schemas/index.ts' ||
        f === 'infra/transport/codec.ts' ||
        (f.startsWith('infra/kernel/') &&
          !['infra/kernel/config.ts', 'infra/kernel/data-dir.ts', 'infra/kernel/runtime-info.ts'].includes(f)) ||
        /^(machines|actors)\//.test(f),
    );
    expect(heavy).toEqual([]);
    expect(packages.filter((p) => !p.startsWith('node:'))).toEqual(
      entry.endsWith('main.ts') ? ['commander', 'zod'] : ['zod'],
    );
  });
});
