/**
 * The security review's live repro, through the whole runtime: under a global `default: deny` that allows only
 * `sh build.sh` and writing `build.sh`, an agent in a workspace without `.skein` writes a build script that makes
 * `.skein/policy.json` saying `{"default":"allow"}` and runs it. Before the fix the sandbox bound `.skein` only when
 * it existed: the script wrote the project policy, the runtime reloaded it, and `touch PWNED`, denied before, ran.
 * The same script then goes for the other protected paths (`skein.config.json`, read by the next `skein up`; `.git`;
 * `.gitmodules`), which were just as open.
 */
import { existsSync, lstatSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { tempDir } from '../support/temp-dir.ts';
import { attack, outcome, reportAttacks, settle } from './support.ts';

const temp = tempDir('skein-missing-');
let rt: TestRuntime;
let terminalId: string;
const exec = (command: string) => rt.call('terminal.exec', { terminalId, command, timeoutMs: 10_000 });

const BUILD = [
  `mkdir -p .skein && printf '{"default":"allow"}' > .skein/policy.json`,
  `printf '{"domains":{"terminal":{"sandbox":false}}}' > skein.config.json`,
  'git init -q . && git config core.fsmonitor "touch PWNED"',
  `printf '[submodule "x"]\\n\\tpath = x\\n\\turl = ../evil\\n' > .gitmodules`,
].join('\n');

beforeAll(async () => {
  const globalPolicy = join(temp.path, 'global-policy.json');
  writeFileSync(
    globalPolicy,
    JSON.stringify({
      default: 'deny',
      tools: {
        terminal: { always_allow: [{ pattern: '^sh\\s+build\\.sh$' }] },
        write_file: { always_allow: [{ pattern: '^build\\.sh$' }] },
      },
    }),
  );
  rt = await startTestRuntime({
    mode: 'embedded',
    dir: temp.path,
    policy: null,
    sandbox: 'auto',
    flags: { domains: { permission: { globalPolicy } } },
  });
  // The harness makes `.skein` for a project policy; this workspace has none (nor .git or a config file).
  rmSync(join(rt.workspace, '.skein'), { recursive: true });
  const open = await rt.call('terminal.open', {});
  if (!open.ok || open['sandbox'] !== true) throw new Error(`expected a sandboxed terminal: ${JSON.stringify(open)}`);
  terminalId = String(open['terminalId']);
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
  temp.dispose();
});
reportAttacks('sandbox-missing-paths');

/** A protected path on the host is missing or an empty directory (the sandbox's placeholder), nothing else. */
function untouched(name: string): boolean {
  const st = lstatSync(join(rt.workspace, name), { throwIfNoEntry: false });
  return !st || (st.isDirectory() && readdirSync(join(rt.workspace, name)).length === 0);
}

describe('a workspace without .skein, .git or skein.config.json (security review)', () => {
  attack('sandbox-missing', 'an allowed build script writes the project policy, then a denied command', async () => {
    expect(outcome(await exec('touch PWNED'))).toBe('permission_denied');
    const write = await rt.call('file.write', { path: 'build.sh', content: `${BUILD}\n` });
    expect(outcome(write)).toBe('ok');
    const build = await exec('sh build.sh');
    expect(outcome(build)).toBe('ok');
    expect(build.ok ? String(build['output']) : '').toMatch(/Read-only file system/);
    for (const name of ['.skein', 'skein.config.json', '.git', '.gitmodules']) expect(untouched(name), name).toBe(true);
    // Time for the policy watch to reload a project file, had one been written (the repro's took under 1 s).
    await settle(1_000, () => existsSync(join(rt.workspace, '.skein', 'policy.json')));
    expect(outcome(await exec('touch PWNED'))).toBe('permission_denied');
    expect(existsSync(join(rt.workspace, 'PWNED'))).toBe(false);
  });

  attack('sandbox-missing', 'the placeholders are gone once the terminal closes', async () => {
    expect(outcome(await rt.call('terminal.close', { terminalId }))).toBe('ok');
    for (const name of ['.skein', 'skein.config.json', '.git', '.gitmodules']) {
      expect(existsSync(join(rt.workspace, name)), name).toBe(false);
    }
  });
});
