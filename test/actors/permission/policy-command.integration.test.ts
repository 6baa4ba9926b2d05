/**
 * `skein policy check`: decisions, output and exit codes, in-process and
 * through a real process with commander.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runPolicyCheck } from '../../../infra/cli/policy-command.ts';
import { BYPASS_POLICY } from '../../support/permission-fixtures.ts';

let dir: string;
let policy: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skein-policy-cli-'));
  policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify(BYPASS_POLICY));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('runPolicyCheck', () => {
  it('prints decision, reason, matched rule and sub-commands', async () => {
    const r = await runPolicyCheck({ policy: [policy], tool: 'terminal', input: 'git status && ls -la' });
    expect(r).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'decision: allow (allow_rule)',
        'reason: Allowed: every one of 2 sub-commands matches an allow rule.',
        `rule: always_allow "^ls(\\s|$)" from ${policy} matched "ls -la"`,
        'sub-commands (2):',
        '  git status',
        '  ls -la',
        '',
      ].join('\n'),
    });
  });

  it('exits 4 for deny, 3 for confirm, 2 for bad usage', async () => {
    expect((await runPolicyCheck({ policy: [policy], tool: 'terminal', input: 'sudo rm -rf build' })).code).toBe(4);
    const ask = await runPolicyCheck({ policy: [policy], tool: 'terminal', input: 'cargo build' });
    expect(ask.code).toBe(3);
    expect(ask.stdout).toContain('"always" would persist: ^cargo\\s+build(\\s|$)');
    expect(await runPolicyCheck({ policy: [policy], tool: 'shell', input: 'x' })).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "skein policy check: unknown tool 'shell'; use one of terminal, " +
        'terminal_input, read_file, edit_file, write_file, spawn_agent\n',
    });
    expect(
      (await runPolicyCheck({ policy: [join(dir, 'missing.json')], tool: 'terminal', input: 'x' })).stderr,
    ).toMatch(/does not exist/);
    writeFileSync(policy, JSON.stringify({ tools: { terminal: { always_allow: 'ls' } } }));
    expect(await runPolicyCheck({ policy: [policy], tool: 'terminal', input: 'ls' })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/tools\.terminal\.always_allow: Invalid input: expected array/),
    });
  });

  it('checks file paths against the workspace, with --json', async () => {
    writeFileSync(policy, JSON.stringify({ tools: { edit_file: { always_allow: [{ pattern: '^src/' }] } } }));
    // As in the runtime, a file can only be created in an existing directory of the workspace.
    mkdirSync(join(dir, '.git'));
    const r = await runPolicyCheck({
      policy: [policy],
      tool: 'edit_file',
      input: 'src/../.git/config',
      workspace: dir,
      json: true,
    });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({
      outcome: 'confirm',
      level: 'always_ask',
      scope: 'sensitive',
      subCommands: ['.git/config', 'src/../.git/config'],
    });
  });
});

describe('as a process', () => {
  it('registers on a commander program and sets the exit code', () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const script = join(dir, 'cli.mjs');
    const commander = pathToFileURL(createRequire(import.meta.url).resolve('commander')).href;
    writeFileSync(
      script,
      `
      import { Command } from ${JSON.stringify(commander)};
      import { registerPolicyCommands } from ${JSON.stringify(join(root, 'infra/cli/policy-command.ts'))};
      const program = new Command('skein').exitOverride();
      registerPolicyCommands(program);
      try { await program.parseAsync(process.argv); } catch (e) { process.exitCode = e.exitCode === 0 ? 0 : 2; }
    `,
    );
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', script, 'policy', 'check', ...args], {
        cwd: root,
        encoding: 'utf8',
      });
    const deny = run('--policy', policy, '--tool', 'terminal', '--input', 'curl x | sh');
    expect(deny.status).toBe(4);
    expect(deny.stdout).toMatch(/^decision: deny \(deny_rule\)\n/);
    expect(run('--policy', policy, '--tool', 'terminal', '--input', 'npm test').status).toBe(0);
    expect(run('--policy', policy, '--tool', 'terminal').status).toBe(2);
  });
});
