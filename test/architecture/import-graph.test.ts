/**
 * The import graph of the source tree: layers import one way
 * (`infra → actors → machines → schemas`, types included), machines and
 * schemas import no effects, and no two modules import each other in a cycle.
 * Reads the files as text; nothing is executed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const LAYERS = ['schemas', 'machines', 'actors', 'infra'] as const;
type Layer = (typeof LAYERS)[number];

/** Packages a pure layer may import: no I/O, no clocks beyond what xstate schedules. */
const PURE_PACKAGES: Record<'schemas' | 'machines', RegExp> = {
  schemas: /^(zod|node:crypto)$/,
  machines: /^(zod|xstate|diff|scslre|@eslint-community\/regexpp|node:crypto)$/,
};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.(ts|mjs)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Every import specifier of a file: static, `import type`, re-exports and dynamic `import('…')`. */
function importsOf(text: string): string[] {
  const specs: string[] = [];
  const fromClause = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/.source;
  const dynamic = /import\s*\(\s*['"]([^'"]+)['"]\s*\)/.source;
  const bare = /^import\s+['"]([^'"]+)['"]/.source;
  const re = new RegExp(`${fromClause}|${dynamic}|${bare}`, 'gm');
  for (const m of text.matchAll(re)) specs.push((m[1] ?? m[2] ?? m[3]) as string);
  return specs;
}

/**
 * Edges being removed by the domain redesign (issue 9). Each must still exist (so the list never goes
 * stale) and the list must end empty.
 */
const KNOWN: string[] = [];

const layerOf = (path: string): Layer | undefined => LAYERS.find((l) => path.startsWith(`${l}/`));

function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const layer of LAYERS) {
    for (const file of sources(layer)) {
      const text = readFileSync(join(root, file), 'utf8');
      const targets = importsOf(text)
        .filter((s) => s.startsWith('.'))
        .map((s) => relative(root, resolve(root, dirname(file), s)));
      edges.set(file, targets);
    }
  }
  return edges;
}

describe('import graph', () => {
  const edges = graph();

  it('reads every kind of import statement', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      "export { c } from './c.ts';",
      "const d = await import('./d.ts');",
      "import './e.ts';",
      'import {\n  f,\n  g,\n} from "./f.ts";',
    ].join('\n');
    expect(importsOf(text)).toEqual(['./a.ts', '../b.ts', './c.ts', './d.ts', './e.ts', './f.ts']);
  });

  it('finds the source tree', () => {
    for (const layer of LAYERS) expect([...edges.keys()].some((f) => f.startsWith(`${layer}/`))).toBe(true);
  });

  it('imports run infra → actors → machines → schemas, never upwards', () => {
    const upward: string[] = [];
    for (const [file, targets] of edges) {
      const from = LAYERS.indexOf(layerOf(file) as Layer);
      for (const target of targets) {
        const layer = layerOf(target);
        if (layer && LAYERS.indexOf(layer) > from) upward.push(`${file} → ${target}`);
      }
    }
    expect(upward.filter((e) => !KNOWN.includes(e))).toEqual([]);
    for (const known of KNOWN.filter((k) => !k.startsWith('cycle:'))) expect(upward).toContain(known);
  });

  it('schemas and machines import no effectful package', () => {
    const bad: string[] = [];
    for (const layer of ['schemas', 'machines'] as const) {
      for (const file of sources(layer)) {
        for (const spec of importsOf(readFileSync(join(root, file), 'utf8'))) {
          if (!spec.startsWith('.') && !PURE_PACKAGES[layer].test(spec)) bad.push(`${file} → ${spec}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('has no import cycle', () => {
    const found = cycles(edges).map((c) => `cycle: ${c.join(', ')}`);
    expect(found.filter((c) => !KNOWN.includes(c))).toEqual([]);
    for (const known of KNOWN.filter((k) => k.startsWith('cycle:'))) expect(found).toContain(known);
  });
});

/** Strongly connected components of more than one module (Tarjan), each sorted. */
function cycles(edges: Map<string, string[]>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}
