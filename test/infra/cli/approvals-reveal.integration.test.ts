/**
 * `skein approvals` (listing, then watching) prints each new ask through `reveal`, as its first listing does: a
 * path an agent chose with escape sequences in it is shown as codes, never sent to the operator's terminal to
 * act on (it could clear the screen or rewrite the lines above; an audit helper, 5 December).
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
});
