/**
 * `skein up --ui` and `skein ui` as a person runs them: a one-time URL on
 * loopback whose token buys one browser credential, the page and its bundle
 * served, and clear refusals where the console cannot work (embedded mode,
 * no runtime, a bad port).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, startEmbeddedCli, type LongRunning } from '../../support/cli.ts';

const URL_LINE = /console: (http:\/\/127\.0\.0\.1:\d+)\/#token=([\w-]+)/;

async function exchange(origin: string, token: string): Promise<Response> {
  return fetch(`${origin}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ token }),
  });
}

/** A connection to the runtime's broker with a console credential, as the page makes it. */
function connectAs(dir: string, creds: string) {
  const info = JSON.parse(readFileSync(join(dir, 'data', 'runtime.json'), 'utf8')) as { natsUrl: string };
  return connect({
    servers: info.natsUrl,
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
    inboxPrefix: '_INBOX.console',
    reconnect: false,
  });
}

describe('skein ui', { timeout: 90_000 }, () => {
  let dir: string;
  let up: LongRunning;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-ui-'));
    mkdirSync(join(dir, 'ws', '.skein'), { recursive: true });
    writeFileSync(join(dir, 'ws', '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    up = startCli(['up', '--private', '--ui', '--data', join(dir, 'data'), '--workspace', join(dir, 'ws')]);
    await up.waitFor(URL_LINE, 60_000);
  });
  afterAll(async () => {
    if (up?.child.exitCode === null) {
      up.child.kill('SIGTERM');
      await up.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('`skein up --ui` prints a one-time URL whose token buys one browser credential', async () => {
    const [, origin, token] = up.stdout().match(URL_LINE)!;
    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>skein console</title>');
    const app = await fetch(`${origin}/app.js`);
    expect(app.headers.get('content-type')).toContain('text/javascript');
    expect((await app.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    const first = await exchange(origin!, token!);
    expect(first.status).toBe(200);
    const grant = (await first.json()) as Record<string, string>;
    const info = JSON.parse(readFileSync(join(dir, 'data', 'runtime.json'), 'utf8')) as Record<string, string>;
    expect(grant).toMatchObject({
      websocketUrl: info['websocketUrl'],
      rootAgentId: 'main',
      inboxPrefix: '_INBOX.console',
    });
    expect(grant['creds']).toContain('-----BEGIN NATS USER JWT-----');
    expect((await exchange(origin!, token!)).status).toBe(403);
  });

  // SIGHUP: the window running `skein ui` closed. It ended the process at once, and the credential lived on for
  // its 12 hours, able to answer asks (security review, issue 15's session).
  it.each(['SIGTERM', 'SIGHUP'] as const)(
    '`skein ui` serves another console until %s; the credential it handed out dies with it',
    async (signal) => {
      const ui = startCli(['ui', '--data', join(dir, 'data')]);
      const [, origin, token] = await ui.waitFor(URL_LINE, 60_000);
      expect(token).not.toBe(up.stdout().match(URL_LINE)![2]);
      const got = await exchange(origin!, token!);
      expect(got.status).toBe(200);
      const { creds } = (await got.json()) as { creds: string };
      const open = () => connectAs(dir, creds);
      // While the console runs, its credential works and can ask the runtime about the root.
      const page = await open();
      const closed = page.closed();
      const reply = await page.request('skein.cmd.main.permission.pending', JSON.stringify({ data: {} }));
      expect(new TextDecoder().decode(reply.data)).toContain('"ok":true');
      ui.child.kill(signal);
      expect(await ui.exited).toBe(0);
      // The broker closed the page's connection and refuses the credential from now on.
      await Promise.race([closed, sleep(10_000)]);
      expect(page.isClosed()).toBe(true);
      await expect(open()).rejects.toThrow(/Authorization Violation|authentication/i);
    },
  );

  // Review: a console killed (SIGKILL, a crash) never revoked what it handed out: valid for its 12 hours. The next
  // console (or broker) start now revokes the users of consoles whose process is gone.
  it("a killed console's credential is revoked when the next console starts", async () => {
    const first = startCli(['ui', '--data', join(dir, 'data')]);
    const [, origin, token] = await first.waitFor(URL_LINE, 60_000);
    const { creds } = (await (await exchange(origin!, token!)).json()) as { creds: string };
    const open = () => connectAs(dir, creds);
    first.child.kill('SIGKILL');
    await first.exited;
    // Nothing revoked it: the page still connects.
    const page = await open();
    const closed = page.closed();
    const second = startCli(['ui', '--data', join(dir, 'data')]);
    await second.waitFor(URL_LINE, 60_000);
    await Promise.race([closed, sleep(10_000)]);
    expect(page.isClosed()).toBe(true);
    await expect(open()).rejects.toThrow(/Authorization Violation|authentication/i);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('refuses an embedded runtime, a data dir without a runtime and a bad port, saying what to do', async () => {
    const embedded = await startEmbeddedCli({ policy: { default: 'allow' } });
    try {
      const r = await runCli(['ui', '--data', embedded.data]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('this runtime runs in embedded mode');
      expect(r.stderr).toContain('skein up --private --ui');
    } finally {
      await embedded.dispose();
    }
    const none = await runCli(['ui', '--data', join(dir, 'no-such-data')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no runtime has run with data dir .*no-such-data; start one with `skein up`/);
    const port = await runCli(['ui', '--data', join(dir, 'data'), '--port', 'eighty']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port 'eighty' is not a port number");
  });
});
