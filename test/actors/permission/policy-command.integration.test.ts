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
    expect(ask.stdout).toContain('"always" would persist: (?-i)^cargo build$');
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

describe('runPolicyCheck --command', () => {
  it("judges the tool call the command's CommandDef declares, as the gate does", async () => {
    const exec = await runPolicyCheck({
      policy: [policy],
      command: 'terminal.exec',
      data: JSON.stringify({ terminalId: 't-1', command: 'sudo rm -rf build' }),
      json: true,
    });
    expect(exec.code).toBe(4);
    expect(JSON.parse(exec.stdout)).toMatchObject({ tool: 'terminal', input: 'sudo rm -rf build' });
    // terminal.write is input to a terminal, not a terminal command: the terminal_input class decides.
    const write = await runPolicyCheck({
      policy: [policy],
      command: 'terminal.write',
      data: JSON.stringify({ terminalId: 't-1', data: 'ls\n' }),
      json: true,
    });
    expect(JSON.parse(write.stdout)).toMatchObject({ tool: 'terminal_input', input: 'ls\n' });
    const begin = await runPolicyCheck({
      policy: [policy],
      command: 'edit.begin',
      data: JSON.stringify({ path: 'new.ts', mode: 'write' }),
      workspace: dir,
      json: true,
    });
    expect(JSON.parse(begin.stdout)).toMatchObject({ tool: 'write_file', input: 'new.ts' });
  });

  it('refuses bad usage with exit 2 and says what to do', async () => {
    const bad = (opts: Parameters<typeof runPolicyCheck>[0]) => runPolicyCheck({ policy: [policy], ...opts });
    expect((await bad({ command: 'terminal.nope' })).stderr).toContain("unknown command 'terminal.nope'");
    expect((await bad({ command: 'agent.get' })).stderr).toContain('is not a tool call');
    expect((await bad({ command: 'terminal.exec', data: '{' })).stderr).toContain('--data is not valid JSON');
    const missing = await bad({ command: 'terminal.exec', data: '{"terminalId":"t-1"}' });
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain('data.command');
    expect((await bad({ command: 'terminal.read', data: '{"terminalId":"t-1"}' })).stderr).toContain(
      'runs nothing a policy judges',
    );
    expect((await bad({ command: 'terminal.exec', tool: 'terminal', data: '{}' })).stderr).toContain(
      'drop --tool and --input',
    );
    expect((await bad({})).stderr).toContain('give --tool and --input, or --command and --data');
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
    // Three tsx processes one after another: 38 s at load 21 (helpers' test runs), 15 s at load 10.
  }, 120_000);
});
