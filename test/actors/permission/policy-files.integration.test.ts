/**
 * Policy files on disk (real temp dirs): loading with errors that name the
 * key, atomic persistence of learned rules, and symlink escapes with real
 * symlinks.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  globalPolicyPath,
  loadPolicyFile,
  loadPolicyLayers,
  persistLearnedRules,
  projectPolicyPath,
  resolvePathFacts,
  writePolicyFile,
} from '../../../actors/permission/policy-files.ts';
import { decide } from '../../../machines/permission/permission-policy.ts';
import { mergePolicies } from '../../../machines/permission/policy.ts';

let dir: string;
let ws: string;
let outside: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skein-policy-'));
  ws = join(dir, 'ws');
  outside = join(dir, 'outside');
  mkdirSync(join(ws, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'x');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('loading', () => {
  it('loads global and project layers in order; a missing file is no layer', async () => {
    const global = join(dir, 'global.json');
    writeFileSync(global, JSON.stringify({ tool_permissions: { default: 'deny' } }));
    expect(await loadPolicyLayers({ workspace: ws, globalPath: global })).toEqual([
      { name: 'global', policy: { default: 'deny', tools: {} } },
    ]);
    mkdirSync(join(ws, '.skein'));
    writeFileSync(
      projectPolicyPath(ws),
      JSON.stringify({ tools: { terminal: { always_allow: [{ pattern: '^ls' }] } } }),
    );
    const layers = await loadPolicyLayers({ workspace: ws, globalPath: global });
    expect(layers.map((l) => l.name)).toEqual(['global', 'project']);
    expect(await loadPolicyFile(join(dir, 'nope.json'))).toBeUndefined();
  });

  it('names the file and the key in errors', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ tools: { terminal: { always_deny: [{ pattern: 1 }] } } }));
    await expect(loadPolicyFile(bad)).rejects.toThrow(
      `Policy file '${bad}' is invalid: tools.terminal.always_deny.0.pattern: ` +
        `Invalid input: expected string, received number. Fix the file and try again.`,
    );
    writeFileSync(bad, '{ "default": ');
    await expect(loadPolicyFile(bad)).rejects.toThrow(/is invalid: not valid JSON/);
  });

  it('finds the global file from SKEIN_POLICY or XDG_CONFIG_HOME', () => {
    expect(globalPolicyPath({ SKEIN_POLICY: '/etc/skein.json' })).toBe('/etc/skein.json');
    expect(globalPolicyPath({ XDG_CONFIG_HOME: '/cfg' })).toBe('/cfg/skein/policy.json');
  });
});

describe('persisting learned rules', () => {
  it('creates the project file, adds patterns once, and keeps the file shape', async () => {
    const first = await persistLearnedRules(ws, {
      tool: 'terminal',
      list: 'always_allow',
      patterns: ['^cargo\\s+build(\\s|$)'],
    });
    expect(first.path).toBe(projectPolicyPath(ws));
    await persistLearnedRules(ws, {
      tool: 'terminal',
      list: 'always_allow',
      patterns: ['^cargo\\s+build(\\s|$)', '^make\\b'],
    });
    expect(JSON.parse(readFileSync(first.path, 'utf8'))).toEqual({
      tools: { terminal: { always_allow: [{ pattern: '^cargo\\s+build(\\s|$)' }, { pattern: '^make\\b' }] } },
    });
    writeFileSync(first.path, JSON.stringify({ agent: { tool_permissions: { default: 'confirm' } }, other: 1 }));
    const wrapped = await persistLearnedRules(ws, { tool: 'edit_file', list: 'always_deny', patterns: ['^secrets/'] });
    expect(JSON.parse(readFileSync(first.path, 'utf8'))).toEqual({
      agent: {
        tool_permissions: { default: 'confirm', tools: { edit_file: { always_deny: [{ pattern: '^secrets/' }] } } },
      },
      other: 1,
    });
    expect(wrapped.policy.tools.edit_file!.always_deny).toEqual([{ pattern: '^secrets/' }]);
    expect(readdirSync(join(ws, '.skein'))).toEqual(['policy.json']);
  });

  it('serializes concurrent writes (no lost rule)', async () => {
    await Promise.all(
      ['^a\\b', '^b\\b', '^c\\b', '^d\\b'].map((p) =>
        persistLearnedRules(ws, { tool: 'terminal', list: 'always_deny', patterns: [p] }),
      ),
    );
    const saved = (await loadPolicyFile(projectPolicyPath(ws)))!;
    expect(saved.tools.terminal!.always_deny.map((r) => r.pattern).sort()).toEqual([
      '^a\\b',
      '^b\\b',
      '^c\\b',
      '^d\\b',
    ]);
  });

  it('neither reads nor writes the project file through a root swapped for a symlink out', async () => {
    // The first write pins the root (its real path as first resolved).
    await persistLearnedRules(ws, { tool: 'terminal', list: 'always_deny', patterns: ['^rm\\b'] });
    const planted = JSON.stringify({ default: 'allow' });
    mkdirSync(join(outside, '.skein'));
    writeFileSync(join(outside, '.skein', 'policy.json'), planted);
    renameSync(ws, `${ws}-kept`);
    symlinkSync(outside, ws);
    // Followed, the learned rule would have been merged into the planted allow-all and taken as the layer.
    await expect(
      persistLearnedRules(ws, { tool: 'terminal', list: 'always_allow', patterns: ['^ls\\b'] }),
    ).rejects.toThrow(/now resolves to/);
    await expect(writePolicyFile(projectPolicyPath(ws), { default: 'confirm' }, ws)).rejects.toThrow(/now resolves to/);
    expect(readFileSync(join(outside, '.skein', 'policy.json'), 'utf8')).toBe(planted);
    expect(readdirSync(join(outside, '.skein'))).toEqual(['policy.json']);
  });

  it('refuses to extend an invalid file or write an invalid policy', async () => {
    mkdirSync(join(ws, '.skein'));
    writeFileSync(projectPolicyPath(ws), JSON.stringify({ tools: { bogus: {} } }));
    await expect(persistLearnedRules(ws, { tool: 'terminal', list: 'always_allow', patterns: ['^x'] })).rejects.toThrow(
      /tools\.bogus: unknown tool 'bogus'/,
    );
    await expect(writePolicyFile(join(dir, 'g.json'), { default: 'sometimes' })).rejects.toThrow(
      /default: Invalid option/,
    );
  });
});

describe('symlink escapes (real symlinks)', () => {
  const policy = mergePolicies([
    {
      name: 'project',
      policy: {
        default: undefined,
        tools: {
          edit_file: { default: undefined, always_allow: [{ pattern: '.*' }], always_deny: [], always_confirm: [] },
        },
      },
    },
  ]);
  const check = async (path: string) =>
    decide({ tool: 'edit_file', input: path, path: await resolvePathFacts(path, [ws]) }, policy);

  it('asks when a file or a parent directory links outside, even under allow-all', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'src', 'link.txt'));
    symlinkSync(outside, join(ws, 'out'));
    const file = await check('src/link.txt');
    expect(file).toMatchObject({
      outcome: 'confirm',
      level: 'always_ask',
      scope: 'symlink',
      reason: `\`src/link.txt\` points outside the project (symlink to \`${realpathSync(outside)}/secret.txt\`)`,
    });
    expect(await check('out/new-file.txt')).toMatchObject({ outcome: 'confirm', scope: 'symlink' });
    expect(await check('out/deeper/missing/x.txt')).toMatchObject({ outcome: 'confirm', scope: 'symlink' });
  });

  it('allows links that stay inside, and plain files, and asks for links into .git', async () => {
    writeFileSync(join(ws, 'src', 'a.ts'), '');
    symlinkSync(join(ws, 'src', 'a.ts'), join(ws, 'alias.ts'));
    mkdirSync(join(ws, '.git'));
    symlinkSync(join(ws, '.git'), join(ws, 'g'));
    expect((await check('alias.ts')).outcome).toBe('allow');
    expect((await check('src/new.ts')).outcome).toBe('allow');
    expect(await check('g/config')).toMatchObject({ outcome: 'confirm', scope: 'sensitive' });
  });

  it('works when the workspace root itself is reached through a symlink', async () => {
    const alias = join(dir, 'ws-alias');
    symlinkSync(ws, alias);
    const facts = await resolvePathFacts('src/x.ts', [alias]);
    expect(decide({ tool: 'edit_file', input: 'src/x.ts', path: facts }, policy).outcome).toBe('allow');
  });
});
