/**
 * The web console's answer keys against asks the operator cannot see, in a real chromium against a real
 * private broker: a/s/d pressed while the Approvals panel is out of view answer nothing (typing "status" on
 * the tab bar sent s, Always, for an ask behind the Review tab: an audit helper, 5 December), and the keys arm
 * again when the asks come into view.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { type ConsoleUnderTest, openConsole } from '../support/console.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const POLL = { timeout: 20_000 };

describe('web console: answer keys and asks out of view', { timeout: 90_000 }, () => {
  let rt: TestRuntime;
  let ui: ConsoleUnderTest;

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'private',
      policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^docs/' }] } } },
    });
    mkdirSync(join(rt.workspace, 'docs'));
    ok(await rt.call('agent.spawn', { label: 'helper', agentId: 'helper' }));
    ui = await openConsole(rt);
    await ui.page.goto(ui.server.url);
    await ui.page.waitForSelector('body[data-ready=true]', POLL);
  }, 60_000);
  afterAll(async () => {
    await ui?.dispose();
    await rt?.dispose();
  });

  it('a/s/d answer nothing while the asks are out of view (typing "status" on the tab bar)', async () => {
    const write = call(
      rt.bus,
      'helper',
      'file.write',
      { path: 'docs/unseen.md', content: 'canary-unseen\n' },
      { timeoutMs: 60_000 },
    );
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    const ask = ui.page.getByRole('article', { name: /write_file request .* from helper/ });
    await ask.waitFor(POLL);
    // Out of view behind the Review tab, long enough to be armed, then s (Always) typed on the tab bar.
    await ui.page.getByRole('tab', { name: 'Review' }).click();
    await new Promise((r) => setTimeout(r, 1_100));
    await ui.page.getByRole('tab', { name: 'Review' }).press('s');
    await ui.page.getByRole('tab', { name: 'Review' }).press('a');
    await new Promise((r) => setTimeout(r, 500));
    const pending = ok(await rt.call('permission.pending', {}))['requests'] as Array<{ input: string }>;
    expect(pending.map((p) => p.input)).toContain('docs/unseen.md');
    expect(existsSync(join(rt.workspace, 'docs', 'unseen.md'))).toBe(false);
    // In view again, the keys arm anew: an immediate d is held back, then answers.
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    await ui.page.locator('body').press('d');
    await expect.poll(() => ui.page.locator('#notice').textContent(), POLL).toContain('just became the first');
    await new Promise((r) => setTimeout(r, 1_100));
    await ui.page.locator('body').press('d');
    expect(await write).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(rt.workspace, 'docs', 'unseen.md'))).toBe(false);
  });
});
