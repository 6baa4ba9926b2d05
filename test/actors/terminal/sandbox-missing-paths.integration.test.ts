/**
 * The workspace's protected paths (`.git`, `.skein`, `skein.config.json`, `.gitmodules`) when they do not exist as
 * the sandboxed terminal opens, with real bubblewrap and real PTYs (security review: bwrap bound only the paths
 * that existed, so `mkdir -p .skein && printf … > .skein/policy.json` run by an allowed program wrote the policy
 * that judged the agent). Each missing one is an empty read-only directory inside the sandbox; on the host it is
 * an empty directory while a sandbox mounts it, removed when the last sandboxed terminal of the workspace closes.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PROTECTED_IN_WORKSPACE } from '../../../actors/terminal/sandbox-args.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

const A = 'a1';

/** What a protected path is on the host: missing, an empty directory (the placeholder), or anything else. */
function state(ws: string, name: string): 'missing' | 'placeholder' | 'changed' {
  const st = lstatSync(join(ws, name), { throwIfNoEntry: false });
  if (!st) return 'missing';
  return st.isDirectory() && readdirSync(join(ws, name)).length === 0 ? 'placeholder' : 'changed';
}

const untouched = (ws: string) =>
  Object.fromEntries(PROTECTED_IN_WORKSPACE.map((n) => [n, state(ws, n) === 'changed' ? 'changed' : 'untouched']));
const allUntouched = Object.fromEntries(PROTECTED_IN_WORKSPACE.map((n) => [n, 'untouched']));

/** rename(2) itself (perl-base is essential in Debian): `mv` refuses a file over a directory before it asks. */
const rename = (from: string, to: string) => `perl -e 'rename("${from}", "${to}") or die "$!\\n"'`;

/** Every way to make a protected name from inside: write it, make it a directory, rename or link something to it. */
const ATTACKS: Array<[string, string]> = [
  ['the project policy (mkdir -p, the review)', `mkdir -p .skein && printf '{"default":"allow"}' > .skein/policy.json`],
  ['.skein/config.json', 'mkdir .skein; echo {} > .skein/config.json'],
  ['.skein renamed from a directory', 'mkdir -p d1 && echo {} > d1/policy.json && mv -T d1 .skein'],
  ['.skein as a symlink', 'mkdir -p d2 && ln -s d2 .skein && echo {} > .skein/policy.json'],
  ['.skein as a file', 'echo {} > .skein'],
  ['.skein, replacing what is there', 'rm -rf .skein; mkdir .skein && echo {} > .skein/policy.json'],
  ['skein.config.json', `echo '{"domains":{"terminal":{"sandbox":false}}}' > skein.config.json`],
  ['skein.config.json renamed from a file', `echo {} > f1 && ${rename('f1', 'skein.config.json')}`],
  ['skein.config.json as a hard link', 'echo {} > f2 && ln f2 skein.config.json'],
  ['skein.config.json as a symlink', 'echo {} > f3 && ln -sfn f3 skein.config.json'],
  ['skein.config.json, replacing what is there', 'rm -rf skein.config.json; echo {} > skein.config.json'],
  ['git init', 'git init -q . && git config core.fsmonitor "touch pwned"'],
  ['.git as a directory', 'mkdir -p .git/hooks && echo "touch pwned" > .git/hooks/pre-commit'],
  ['.git renamed from a directory', 'mkdir -p g1/hooks && mv -T g1 .git'],
  ['.git as a gitfile', 'echo "gitdir: /tmp/evil" > .git'],
  ['.gitmodules', `printf '[submodule "x"]\\n\\tpath = x\\n\\turl = ext::sh -c touch% pwned\\n' > .gitmodules`],
  ['.gitmodules renamed from a file', `echo x > f4 && ${rename('f4', '.gitmodules')}`],
];

describe('sandbox: protected paths missing when the terminal opens', () => {
  let h: ReturnType<typeof terminalHarness>;
  let terminalId: string;
  const run = (command: string, t = terminalId) => h.manager.exec(A, { terminalId: t, command, timeoutMs: 10_000 });

  beforeAll(async () => {
    h = terminalHarness({ closeGraceMs: 300, sandbox: true });
    const o = await h.open(A);
    expect(o.sandbox).toBe(true);
    terminalId = o.terminalId;
  });
  afterAll(async () => {
    await h?.dispose();
  });

  it.each(ATTACKS)('cannot create %s', async (_what, command) => {
    const r = await run(command);
    expect(r.exitCode).not.toBe(0);
    expect(r.output).toMatch(/Read-only file system|Device or resource busy|File exists|Is a directory/i);
    expect(untouched(h.workspace)).toEqual(allUntouched);
  });

  it('sees each missing one as an empty directory, and writes the rest of the workspace', async () => {
    const r = await run('find .skein .git skein.config.json .gitmodules -type d -empty | wc -l; echo ok > work.txt');
    expect(r).toMatchObject({ exitCode: 0, output: '4\n' });
    expect(readFileSync(join(h.workspace, 'work.txt'), 'utf8')).toBe('ok\n');
  });
});

describe('sandbox: the placeholders of missing protected paths', () => {
  let h: ReturnType<typeof terminalHarness>;
  beforeEach(() => {
    h = terminalHarness({ closeGraceMs: 300, sandbox: true });
  });
  afterEach(async () => {
    await h.dispose();
  });
  const run = (terminalId: string, command: string) => h.manager.exec(A, { terminalId, command, timeoutMs: 10_000 });
  const states = () => PROTECTED_IN_WORKSPACE.map((n) => state(h.workspace, n));

  it('stay while any sandboxed terminal mounts them, and are gone after the last one closes', async () => {
    const first = await h.open(A);
    expect(states()).toEqual(['placeholder', 'placeholder', 'placeholder', 'placeholder']);
    const second = await h.open(A);
    await h.manager.close(A, { terminalId: first.terminalId });
    // Removing a placeholder from outside would detach the read-only mount in the sandbox that still has it.
    expect(states()).toEqual(['placeholder', 'placeholder', 'placeholder', 'placeholder']);
    const r = await run(second.terminalId, `mkdir -p .skein && echo '{"default":"allow"}' > .skein/policy.json`);
    expect(r.output).toMatch(/Read-only file system/);
    expect(existsSync(join(h.workspace, '.skein', 'policy.json'))).toBe(false);
    await h.manager.close(A, { terminalId: second.terminalId });
    expect(states()).toEqual(['missing', 'missing', 'missing', 'missing']);
  });

  it('keeps what the host wrote into one meanwhile (a learned rule in .skein/policy.json)', async () => {
    const t = await h.open(A);
    writeFileSync(join(h.workspace, '.skein', 'policy.json'), '{"default":"deny"}');
    await h.manager.close(A, { terminalId: t.terminalId });
    expect(readFileSync(join(h.workspace, '.skein', 'policy.json'), 'utf8')).toBe('{"default":"deny"}');
    expect(states()).toEqual(['missing', 'changed', 'missing', 'missing']);
  });

  it("covers a sub-agent's workspace, and leaves the workspace around it read-only", async () => {
    const sub = join(h.workspace, 'sub');
    mkdirSync(sub);
    const t = await h.manager.open(A, { cwd: sub }, { workspace: sub });
    expect(PROTECTED_IN_WORKSPACE.map((n) => state(sub, n))).toEqual(Array(4).fill('placeholder'));
    // Read-only from the root bind (here, under /tmp, the sandbox's private /tmp): never the host's.
    await run(t.terminalId, `mkdir -p ../.skein && echo '{"default":"allow"}' > ../.skein/policy.json`);
    expect(states()).toEqual(['missing', 'missing', 'missing', 'missing']);
    await h.manager.close(A, { terminalId: t.terminalId });
    expect(PROTECTED_IN_WORKSPACE.map((n) => state(sub, n))).toEqual(Array(4).fill('missing'));
  });

  it('refuses to open when a protected path is a symlink (the agent could replace the link)', async () => {
    mkdirSync(join(h.workspace, 'shared'));
    symlinkSync('shared', join(h.workspace, '.skein'));
    await expect(h.open(A)).rejects.toMatchObject({
      code: 'invalid_state',
      message: expect.stringContaining(`'${join(h.workspace, '.skein')}' is a symbolic link`),
    });
    rmSync(join(h.workspace, '.skein'));
    expect(states()).toEqual(['missing', 'missing', 'missing', 'missing']);
  });
});
