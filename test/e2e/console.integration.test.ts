/**
 * The web console (issue 17) in a real chromium against a real private
 * broker: a sub-agent's confirm-level write is approved from the page, a hunk
 * rejected there is restored on disk, a command's output and typed input
 * show in the rendered terminal, time travel shows the earlier screen exactly
 * as `skein replay --screen --at` renders it, and without the token the page
 * shows nothing.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { screenAt } from '../../infra/terminal/screen-replay.ts';
import { call } from '../../infra/transport/client.ts';
import { type ConsoleUnderTest, noAsksLeft, openConsoleScene, pressOnNextAsk } from '../support/console.ts';
import { ok } from '../support/replies.ts';
import type { TestRuntime } from '../support/runtime.ts';

const POLL = { timeout: 20_000 };

describe('web console', { timeout: 90_000 }, () => {
  let rt: TestRuntime;
  let ui: ConsoleUnderTest;

  beforeAll(async () => {
    ({ rt, ui } = await openConsoleScene(
      {
        default: 'allow',
        tools: {
          write_file: { always_confirm: [{ pattern: '^docs/' }] },
          read_file: { default: 'confirm' },
          terminal: { always_deny: [{ pattern: '^touch\\b' }] },
        },
      },
      'write the plan',
    ));
  }, 60_000);
  afterEach(() => noAsksLeft(ui));
  afterAll(async () => {
    await ui?.dispose();
    await rt?.dispose();
  });

  it('shows the agent tree live with status and task', async () => {
    const tree = ui.page.getByRole('tree', { name: 'Agents' });
    await tree.getByRole('treeitem', { name: 'helper running' }).waitFor(POLL);
    expect(await tree.getByRole('treeitem', { name: 'helper running' }).textContent()).toContain('write the plan');
    await ui.shot('tree');
  });

  it("approving a sub-agent's confirm-level write in the page makes the write happen", async () => {
    const target = join(rt.workspace, 'docs', 'plan.md');
    const write = call(
      rt.bus,
      'helper',
      'file.write',
      { path: 'docs/plan.md', content: 'canary-approved-plan\n' },
      {
        timeoutMs: 60_000,
      },
    );
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    const ask = ui.page.getByRole('article', { name: /write_file request .* from helper/ });
    await ask.waitFor(POLL);
    expect(await ask.getByLabel('path').textContent()).toBe('docs/plan.md');
    expect(await ask.getByLabel('content').textContent()).toBe('canary-approved-plan\n');
    expect(existsSync(target)).toBe(false);
    await ui.shot('approvals');
    const answered = await watchAnswered(ui);
    await ask.getByRole('button', { name: 'Approve', exact: true }).click();
    // Answered at once: the buttons give way to what was sent, so it can't be sent twice.
    await expect.poll(answered, POLL).toContain('Approve sent');
    expect(await ask.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect(await write).toMatchObject({ ok: true });
    expect(readFileSync(target, 'utf8')).toBe('canary-approved-plan\n');
    await ask.waitFor({ state: 'detached', ...POLL });
  });

  it('the d key denies the first pending ask (the a key approves; s is Always)', async () => {
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    // A key pressed as an ask has just become the first answers nothing (an agent could swap the first ask
    // under the operator's finger by withdrawing another); once it has been first a second, it answers. The key
    // comes in the frame that first draws the ask.
    const pressed = await pressOnNextAsk(ui.page, 'd');
    const write = call(
      rt.bus,
      'helper',
      'file.write',
      { path: 'docs/denied.md', content: 'canary-denied\n' },
      {
        timeoutMs: 60_000,
      },
    );
    const ask = ui.page.getByRole('article', { name: /write_file request .* from helper/ });
    await ask.waitFor(POLL);
    expect(await ask.getByRole('button', { name: 'Deny' }).getAttribute('aria-keyshortcuts')).toBe('d');
    expect(await ask.getAttribute('aria-label')).toContain(await pressed());
    await expect.poll(() => ui.page.locator('#notice').textContent(), POLL).toContain('just became the first');
    expect(await ask.getByRole('button', { name: 'Deny' }).count()).toBe(1);
    await new Promise((r) => setTimeout(r, 1_100));
    await ui.page.locator('body').press('d');
    expect(await write).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(rt.workspace, 'docs', 'denied.md'))).toBe(false);
  });

  it('Always approves a read and learns a rule: the same read again does not ask', async () => {
    writeFileSync(join(rt.workspace, 'docs', 'always.md'), 'read me\n');
    const read = (timeoutMs: number) => call(rt.bus, 'helper', 'file.read', { path: 'docs/always.md' }, { timeoutMs });
    const first = read(60_000);
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    const ask = ui.page.getByRole('article', { name: /read_file request .* from helper/ });
    await ask.waitFor(POLL);
    const always = ask.getByRole('button', { name: 'Always', exact: true });
    // The button says which rule an "always" answer persists.
    expect(await always.getAttribute('title')).toMatch(/^Always allow `docs\/always\.md`/);
    const answered = await watchAnswered(ui);
    await always.click();
    await expect.poll(answered, POLL).toContain('Always sent');
    expect(await first).toMatchObject({ ok: true });
    await ask.waitFor({ state: 'detached', ...POLL });
    // The learned rule answers the next identical request without a person (no ask: a short timeout suffices).
    expect(await read(10_000)).toMatchObject({ ok: true });
    // The rule is the narrowest that covers the read: a sibling still asks.
    writeFileSync(join(rt.workspace, 'docs', 'other.md'), 'canary-sibling\n');
    const sibling = call(rt.bus, 'helper', 'file.read', { path: 'docs/other.md' }, { timeoutMs: 60_000 });
    const siblingAsk = ui.page.getByRole('article', { name: /read_file request .* from helper/ });
    await siblingAsk.waitFor(POLL);
    expect(await siblingAsk.getByLabel('path').textContent()).toBe('docs/other.md');
    await siblingAsk.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await sibling).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });

  it('a hunk rejected in the page is restored on disk, and Undo reject brings the change back', async () => {
    const file = join(rt.workspace, 'notes.txt');
    const base = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    writeFileSync(file, `${base.join('\n')}\n`);
    const changed = base.map((l, i) => (i === 2 ? 'line 3 CHANGED-TOP' : i === 26 ? 'line 27 CHANGED-BOTTOM' : l));
    ok(await rt.call('file.write', { path: 'notes.txt', content: `${changed.join('\n')}\n` }));
    await ui.page.getByRole('tab', { name: 'Review' }).click();
    const section = ui.page.getByRole('region', { name: `file ${file}` });
    const top = section.getByRole('group', { name: `hunk @@ -1,6 +1,6 @@ of ${file}` });
    await top.waitFor(POLL);
    expect(await section.getByRole('group', { name: /^hunk @@/ }).count()).toBe(2);
    await ui.shot('review');
    await top.getByRole('button', { name: 'Reject', exact: true }).click();
    await expect.poll(() => readFileSync(file, 'utf8'), POLL).not.toContain('CHANGED-TOP');
    const afterReject = readFileSync(file, 'utf8');
    expect(afterReject).toContain('line 3\n');
    expect(afterReject).toContain('line 27 CHANGED-BOTTOM');
    await expect.poll(() => section.getByRole('group', { name: /^hunk @@/ }).count(), POLL).toBe(1);
    // Undo reject re-applies what the last Reject of all changes removed.
    const all = ui.page.getByRole('group', { name: 'all changes' });
    await all.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => readFileSync(file, 'utf8'), POLL).toBe(`${base.join('\n')}\n`);
    await ui.page.getByRole('button', { name: 'Undo reject' }).click();
    await expect.poll(() => readFileSync(file, 'utf8'), POLL).toContain('line 27 CHANGED-BOTTOM');
    expect(readFileSync(file, 'utf8')).not.toContain('CHANGED-TOP');
    await all.getByRole('button', { name: 'Accept' }).click();
    await ui.page.getByText('No changes to review.').waitFor(POLL);
  });

  it("reviews any agent's subtree: rejecting a file in the helper's review leaves main's changes alone", async () => {
    ok(await rt.call('file.write', { path: 'helper-only.txt', content: 'canary-helper\n' }, { agentId: 'helper' }));
    ok(await rt.call('file.write', { path: 'main-only.txt', content: 'canary-main\n' }));
    await ui.page.getByRole('tab', { name: 'Review' }).click();
    await ui.page.getByRole('combobox', { name: 'Review changes of' }).selectOption('helper');
    const helperFile = ui.page.getByRole('region', { name: `file ${join(rt.workspace, 'helper-only.txt')}` });
    const mainFile = ui.page.getByRole('region', { name: /main-only\.txt/ });
    // main's review (shown until the helper's arrives) lists helper-only.txt too: wait for the helper's own,
    // which has the helper's file and not main's.
    await expect
      .poll(async () => ({ helper: await helperFile.count(), main: await mainFile.count() }), POLL)
      .toEqual({ helper: 1, main: 0 });
    await helperFile
      .getByRole('group', { name: /^file / })
      .getByRole('button', { name: 'Reject' })
      .click();
    await expect.poll(() => existsSync(join(rt.workspace, 'helper-only.txt')), POLL).toBe(false);
    expect(readFileSync(join(rt.workspace, 'main-only.txt'), 'utf8')).toBe('canary-main\n');
    await ui.page.getByRole('combobox', { name: 'Review changes of' }).selectOption('main');
    // main's review as it is after the reject: its own file, and not the helper's rejected one.
    await expect
      .poll(async () => ({ helper: await helperFile.count(), main: await mainFile.count() }), POLL)
      .toEqual({ helper: 0, main: 1 });
    await ui.page.getByRole('group', { name: 'all changes' }).getByRole('button', { name: 'Accept' }).click();
    await ui.page.getByText('No changes to review.').waitFor(POLL);
  });

  it("a command's output and what is typed in the page appear in the rendered terminal", async () => {
    const { terminalId } = ok(await rt.call('terminal.open', {}));
    ok(await rt.call('terminal.exec', { terminalId, command: "printf 'out-%s\\n' canary-printed" }));
    await ui.page.getByRole('tab', { name: 'Terminals' }).click();
    const panel = ui.page.getByRole('region', { name: `terminal ${terminalId} of main` });
    const rows = panel.locator('.xterm-rows');
    await expect.poll(() => rows.textContent(), POLL).toContain('out-canary-printed');
    await panel.locator('.xterm-screen').click();
    await ui.page.keyboard.type('echo typed-canary-42');
    await ui.page.keyboard.press('Enter');
    await expect.poll(() => rows.textContent(), POLL).toMatch(/typed-canary-42\s*typed-canary-42/);
    await ui.shot('terminals');
  });

  it('typing in the page passes the gate: a line the policy denies is refused and never runs', async () => {
    const { terminalId } = ok(await rt.call('terminal.open', {}));
    await ui.page.getByRole('tab', { name: 'Terminals' }).click();
    const panel = ui.page.getByRole('region', { name: `terminal ${terminalId} of main` });
    await panel.locator('.xterm-screen').click();
    await ui.page.keyboard.type('touch canary-typed.txt');
    await ui.page.keyboard.press('Enter');
    await expect.poll(() => panel.getByRole('alert').textContent(), POLL).toContain('typing refused');
    expect(existsSync(join(rt.workspace, 'canary-typed.txt'))).toBe(false);
  });

  it('a terminal waiting for input is highlighted, and input typed in the page answers it', async () => {
    const { terminalId } = ok(await rt.call('terminal.open', {}));
    const exec = ok(
      await rt.call('terminal.exec', { terminalId, command: "read -p 'name? ' n; echo got-the-name", yieldMs: 500 }),
    );
    expect(exec['status']).not.toBe('exited');
    await ui.page.getByRole('tab', { name: 'Terminals' }).click();
    const panel = ui.page.getByRole('region', { name: `terminal ${terminalId} of main` });
    await expect.poll(() => panel.getAttribute('data-input-required'), POLL).toBe('');
    expect(await panel.getByRole('status').textContent()).toContain('input required: name?');
    await ui.shot('input-required');
    await panel.locator('.xterm-screen').click();
    await ui.page.keyboard.type('canary');
    await ui.page.keyboard.press('Enter');
    await expect.poll(() => panel.locator('.xterm-rows').textContent(), POLL).toContain('got-the-name');
    await expect.poll(() => panel.getAttribute('data-input-required'), POLL).toBe(null);
  });

  it('time travel shows an earlier screen exactly as `skein replay --screen --at` renders it', async () => {
    const { terminalId } = ok(await rt.call('terminal.open', {}));
    ok(await rt.call('terminal.exec', { terminalId, command: 'echo first-screen' }));
    const earlier = await rt.log.lastSeq('output');
    ok(await rt.call('terminal.exec', { terminalId, command: 'clear; echo second-screen' }));
    await ui.page.getByRole('tab', { name: 'Time travel' }).click();
    await ui.page.getByRole('combobox', { name: 'Terminal' }).selectOption(terminalId);
    const screen = ui.page.getByLabel('Screen at this point');
    await expect.poll(() => screen.textContent(), POLL).toContain('second-screen');
    const where = ui.page.getByRole('status').filter({ hasText: 'at output seq' });
    await expect.poll(() => where.textContent(), POLL).toContain(`${terminalId} at output seq`);
    // The slider position of the last chunk at or before `earlier`.
    const seqs: number[] = [];
    for await (const f of rt.log.read({ stream: 'output', subject: `skein.out.*.${terminalId}` })) seqs.push(f.seq);
    const index = seqs.filter((s) => s <= earlier).length - 1;
    await ui.page.getByRole('slider', { name: 'Point in the log' }).fill(String(index));
    const expected = await screenAt((o) => rt.log.read(o), terminalId, seqs[index]);
    await expect.poll(() => screen.getAttribute('data-at-seq'), POLL).toBe(String(seqs[index]));
    expect(await screen.textContent()).toBe(expected.lines.join('\n'));
    expect(expected.lines.join('\n')).toContain('first-screen');
    expect(expected.lines.join('\n')).not.toContain('second-screen');
    expect(await ui.page.getByRole('list', { name: 'Facts around this point' }).textContent()).toContain('terminal.');
    await ui.shot('time-travel');
  });

  it('switches between a light and a dark theme', async () => {
    const html = ui.page.locator('html');
    const toggle = ui.page.getByRole('button', { name: 'Dark theme' });
    if ((await html.getAttribute('data-theme')) === 'dark') await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    expect(await html.getAttribute('data-theme')).toBe('dark');
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await ui.shot('time-travel-dark');
    await ui.page.getByRole('tab', { name: /Approvals/ }).click();
    await ui.shot('approvals-dark');
    await toggle.click();
    expect(await html.getAttribute('data-theme')).toBe('light');
  });

  it('without the token the page shows nothing, and a token buys one credential once', async () => {
    const bare = await ui.browser.newPage();
    await bare.goto(`${ui.server.origin}/`);
    await bare.getByRole('alert').waitFor(POLL);
    expect(await bare.getByRole('alert').textContent()).toContain('one-time token');
    expect(await bare.locator('#app').isVisible()).toBe(false);
    expect(await bare.getByRole('treeitem').count()).toBe(0);
    await ui.shot('locked', bare);
    // The token the first page spent is spent (about:blank first: a hash change alone would not reload).
    await bare.goto('about:blank');
    await bare.goto(ui.server.url);
    await bare.getByRole('alert').waitFor(POLL);
    expect(await bare.getByRole('alert').textContent()).toContain('not valid or was used already');
    expect(await bare.getByRole('treeitem').count()).toBe(0);
    await bare.close();
    const token = new URL(ui.server.url).hash.replace('#token=', '');
    const post = (headers: Record<string, string>) =>
      fetch(`${ui.server.origin}/token`, { method: 'POST', headers, body: JSON.stringify({ token }) });
    const json = { 'content-type': 'application/json' };
    expect((await post({ ...json, origin: ui.server.origin })).status).toBe(403);
    expect((await post({ ...json, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ 'content-type': 'text/plain', origin: ui.server.origin })).status).toBe(403);
    expect((await fetch(`${ui.server.origin}/token`)).status).toBe(405);
    expect(await hostHeader(ui.server.origin, 'evil.example:80')).toBe(421);
  });

  it('the browser credential cannot run commands as an agent: the broker refuses', async () => {
    const grant = JSON.parse((await ui.page.evaluate(() => sessionStorage.getItem('skein-console-grant')))!) as {
      creds: string;
      inboxPrefix: string;
    };
    const nc = await connect({
      servers: rt.info.natsUrl!,
      authenticator: credsAuthenticator(new TextEncoder().encode(grant.creds)),
      inboxPrefix: grant.inboxPrefix,
      maxReconnectAttempts: 0,
    });
    const errors: string[] = [];
    void (async () => {
      for await (const st of nc.status()) if (st.type === 'error') errors.push(String(st.error?.message));
    })();
    try {
      // What the console may do works: watching and the root's read commands.
      const tree = JSON.parse(
        new TextDecoder().decode((await nc.request('skein.cmd.main.agent.tree', '{"data":{}}')).data),
      );
      expect(tree.ok).toBe(true);
      const attempts: Array<[string, unknown]> = [
        ['skein.cmd.main.terminal.exec', { terminalId: 'x', command: 'touch canary-console-exec' }],
        ['skein.cmd.helper.terminal.open', {}],
        ['skein.cmd.helper.file.write', { path: 'canary-console-write.txt', content: 'canary' }],
        ['skein.cmd.main.edit.begin', { path: 'canary-console-edit.txt', mode: 'write' }],
        ['skein.cmd.main.agent.spawn', { label: 'canary', agentId: 'canary-console' }],
        ['skein.cmd.main.agent.cancel', { agentId: 'helper' }],
        ['skein.cmd.main.policy.set', { layer: 'project', policy: { default: 'allow' } }],
        ['skein.evt.main.agent.main', { type: 'agent.completed' }],
        ['$JS.API.STREAM.DELETE.SKEIN_EVENTS', {}],
        ['$JS.API.STREAM.UPDATE.SKEIN_EVENTS', { name: 'SKEIN_EVENTS', max_msgs: 1 }],
        ['$JS.API.STREAM.PURGE.SKEIN_OUTPUT', {}],
        ['$JS.API.STREAM.MSG.DELETE.SKEIN_EVENTS', { seq: 1 }],
      ];
      const before = await rt.log.lastSeq('events');
      for (const [subject, data] of attempts) nc.publish(subject, JSON.stringify({ data }));
      nc.subscribe('_INBOX_main.>');
      await nc.flush();
      const expected = [
        ...attempts.map(([subject]) => `Permissions Violation for Publish to "${subject}"`),
        'Permissions Violation for Subscription to "_INBOX_main.>"',
      ];
      await expect.poll(() => [...errors].sort(), POLL).toEqual([...expected].sort());
      // Nothing happened: no canary on disk, no agent spawned or cancelled, the log intact and unchanged.
      for (const f of ['canary-console-exec', 'canary-console-write.txt', 'canary-console-edit.txt']) {
        expect(existsSync(join(rt.workspace, f))).toBe(false);
      }
      expect(ok(await rt.call('agent.get', {}, { agentId: 'helper' }))['status']).toBe('running');
      expect((await rt.call('agent.get', {}, { agentId: 'canary-console' })).ok).toBe(false);
      expect(await rt.log.lastSeq('events')).toBe(before);
    } finally {
      await nc.close();
    }
  });
});

/** The status of a GET with a forged Host header (fetch will not send one). */
/**
 * Records from now on the text of every answered note an ask shows (`Approve sent`): the note shows until the
 * ask leaves the list, which can come before a locator's next look (a CI run saw it go, and waited 30 s for it).
 */
async function watchAnswered(ui: ConsoleUnderTest): Promise<() => Promise<string[]>> {
  await ui.page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { answered: string[] }).answered = seen;
    const look = () => {
      for (const note of document.querySelectorAll('article [role="status"].answered')) {
        if (note.textContent && !seen.includes(note.textContent)) seen.push(note.textContent);
      }
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  return () => ui.page.evaluate(() => (window as unknown as { answered: string[] }).answered);
}

function hostHeader(origin: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/`, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
