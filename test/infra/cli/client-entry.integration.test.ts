/**
 * The fast entry (client-main.ts, bundled by client-build.mjs into dist/cli-client; issue 15) behaves as the
 * full CLI for every command skein.mjs sends to it: the same help, the same usage errors naming the bad
 * argument, the same replies from a runtime, embedded and behind a private broker. It is built here into
 * its own directory, so the test does not depend on (or race with) `npm run build`; the full CLI runs with
 * SKEIN_NO_FAST=1.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Metafile } from 'esbuild';
import { buildClient } from '../../../infra/cli/client-build.mjs';
import { cleanEnv, type EmbeddedRun, runCli, SKEIN_BIN, startCliRuntime, startEmbeddedCli } from '../../support/cli.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const outdir = `dist/cli-client-test-${process.pid}`;
const fastBin = join(root, outdir, 'client-main.js');
let metafile: Metafile;

beforeAll(async () => {
  metafile = await buildClient(root, outdir);
}, 120_000);
afterAll(() => rmSync(join(root, outdir), { recursive: true, force: true }));

const fast = (args: string[], cwd?: string) => runCli(args, { bin: fastBin, ...(cwd ? { cwd } : {}) });
const full = (args: string[], cwd?: string) =>
  runCli(args, { env: cleanEnv({ SKEIN_NO_FAST: '1' }), ...(cwd ? { cwd } : {}) });

/** Runs `args` through both entries, one after the other, and returns both results. */
async function both(args: string[], cwd?: string) {
  return { fast: await fast(args, cwd), full: await full(args, cwd) };
}

/** The names in a help text's "Commands:" section, `help` left out. */
function commandNames(help: string): string[] {
  const section = help.split('Commands:\n')[1] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {2}([a-z-]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

describe('the fast CLI entry', () => {
  it('serves exactly the commands skein.mjs sends to it, each with the help the full CLI gives', async () => {
    const listed = commandNames((await fast(['--help'])).stdout);
    const dispatched = [...readFileSync(SKEIN_BIN, 'utf8').matchAll(/^ {2}'([a-z-]+)',$/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual(dispatched.sort());
    // Each is also a command of the full CLI, with the same help text, word for word.
    expect(commandNames((await full(['--help'])).stdout)).toEqual(expect.arrayContaining(listed));
    for (const name of listed) {
      const { fast: f, full: g } = await both([name, '--help']);
      expect({ name, ...f }).toEqual({ name, ...g });
      expect(f.stdout).toContain(`Usage: skein ${name}`);
    }
  }, 300_000);

  it('refuses bad input with the full CLI’s message and exit code', async () => {
    const missing = join(tmpdir(), 'skein-no-such-data-dir');
    const cases = [
      ['call'],
      ['call', 'runtime.ping', '{bad'],
      ['call', 'runtime.ping', '[1]'],
      ['call', 'runtime.ping', '--timeout', 'soon', '--data', missing],
      ['call', 'runtime.ping', '--bogus'],
      ['call', 'runtime.ping', '--data', missing],
      ['status', '--nats'],
      ['approve'],
      ['cancel', '--data', missing, 'a1'],
      ['review', '--data', missing],
    ];
    for (const args of cases) {
      const { fast: f, full: g } = await both(args);
      expect({ args, ...f }).toEqual({ args, ...g });
      expect(f.code).not.toBe(0);
    }
    // What a few of those say: the argument at fault, and what to do.
    expect((await fast(['call', 'runtime.ping', '{bad'])).stderr).toMatch(/data of runtime\.ping.*not JSON/);
    expect((await fast(['call', 'runtime.ping', '--timeout', 'soon'])).stderr).toMatch(/--timeout 'soon'/);
    expect((await fast(['call', 'runtime.ping', '--data', missing])).stderr).toMatch(/no runtime found.*skein up/);
  }, 300_000);

  describe('against an embedded runtime', () => {
    let run: EmbeddedRun;
    beforeAll(async () => {
      run = await startEmbeddedCli({ policy: { default: 'allow' } });
    });
    afterAll(() => run.dispose());

    it('gives the full CLI’s replies and exit codes', async () => {
      const d = ['--data', run.data];
      const cases = [
        ['call', 'runtime.ping', ...d],
        ['call', 'no.such-command', ...d],
        ['call', 'agent.spawn', '{"label":5}', ...d],
        ['status', '--json', ...d],
        ['agents', '--tree', ...d],
        ['review', '--json', ...d],
        ['approvals', '--once', '--json', ...d],
        ['approve', 'r-none', ...d],
      ];
      for (const args of cases) {
        const { fast: f, full: g } = await both(args, run.workspace);
        expect({ args, ...f }).toEqual({ args, ...g });
      }
      expect(JSON.parse((await fast(['call', 'runtime.ping', ...d])).stdout)).toEqual({ ok: true, pong: true });
    }, 300_000);
  });

  it('calls a runtime behind a private broker (nats.js, operator creds) as the full CLI does', async () => {
    const run = await startCliRuntime({ mode: 'private', policy: { default: 'allow' } });
    try {
      for (const args of [
        ['call', 'runtime.ping', '--data', run.data],
        ['agents', '--json', '--data', run.data],
      ]) {
        const { fast: f, full: g } = await both(args, run.workspace);
        expect({ args, ...f }).toEqual({ args, ...g });
        expect(f.code).toBe(0);
      }
    } finally {
      await run.dispose();
    }
  }, 120_000);

  it('makes no function from a string when zod parses (its JIT is off: code the V8 cache cannot keep)', async () => {
    // A preload counts what `new Function` makes; zod's JIT made one per object schema parsed (5 here).
    const dir = mkdtempSync(join(tmpdir(), 'skein-fn-count-'));
    const preload = join(dir, 'count.mjs');
    writeFileSync(
      preload,
      'let made = 0; globalThis.Function = new Proxy(Function, { ' +
        'construct(t, a) { made++; return Reflect.construct(t, a); }, ' +
        'apply(t, s, a) { made++; return Reflect.apply(t, s, a); } });\n' +
        "process.on('exit', () => process.stderr.write(`made from strings: ${made}\\n`));\n",
    );
    try {
      const missing = join(dir, 'no-data');
      const env = cleanEnv({ NODE_OPTIONS: `--import=${preload}` });
      const { stderr } = await runCli(['call', 'runtime.ping', '--data', missing], { bin: fastBin, env });
      expect(stderr).toMatch(/no runtime found/);
      expect(stderr).toContain('made from strings: 0\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bundles every package it runs into one script: imports nothing but node’s own modules', () => {
    // What the bundle holds: the inputs with bytes in an output (tree-shaken ones have none).
    const held = Object.values(metafile.outputs).flatMap((o) =>
      Object.entries(o.inputs)
        .filter(([, input]) => input.bytesInOutput > 0)
        .map(([path]) => path),
    );
    const bundled = new Set(
      held.filter((f) => f.includes('node_modules/')).map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)![1]),
    );
    expect([...bundled]).toEqual(expect.arrayContaining(['commander', 'zod', '@nats-io/transport-node']));
    // No package is loaded from node_modules beside it (one script for V8's code cache; no second zod).
    const imported = Object.values(metafile.outputs).flatMap((o) =>
      o.imports.filter((i) => i.external && !isBuiltin(i.path)).map((i) => i.path),
    );
    expect(imported).toEqual([]);
    expect(Object.keys(metafile.outputs).filter((o) => o.endsWith('.js') || o.endsWith('.cjs'))).toEqual([
      `${outdir}/client-main.cjs`,
    ]);
    // zod tree-shaken: its locales (all but the default, English) are not in the bundle (index.js: an empty
    // module initializer).
    expect(held.filter((f) => /zod\/v4\/locales\/(?!en\.js|index\.js)/.test(f))).toEqual([]);
  });
});
