/**
 * `skein mcp --http`: the Streamable HTTP transport, behind a bearer token,
 * with the same acceptance set as stdio. A client without the token, with a
 * wrong one, or sending a foreign Host header gets nothing done: its canary
 * command never runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKEIN_BIN } from '../../support/cli.ts';
import { httpClient, mcpEnv, mcpWorkspace, type TestClient } from '../../support/mcp.ts';
import { acceptance } from './acceptance.ts';

const TOKEN = 'test-token-0123456789abcdef';

describe('skein mcp --http', () => {
  let ws: ReturnType<typeof mcpWorkspace>;
  let child: ChildProcess;
  let url: string;
  let c: TestClient;

  beforeAll(async () => {
    ws = mcpWorkspace();
    child = spawn(process.execPath, [SKEIN_BIN, 'mcp', '--http', '0'], {
      cwd: ws.dir,
      env: mcpEnv({ SKEIN_MCP_TOKEN: TOKEN }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        err += chunk.toString();
        const m = /Streamable HTTP at (\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`skein mcp --http exited ${code}: ${err}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    c = await httpClient(url, TOKEN);
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    ws?.dispose();
  });

  acceptance(() => ({ c, dir: ws.dir }));

  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  };
  const post = (headers: Record<string, string>, body: unknown = initialize) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });

  it('refuses a request without the token, or with a wrong one, before any MCP handling', async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await post({ authorization: `Bearer ${TOKEN.slice(0, -1)}x` });
    expect(wrong.status).toBe(401);
    // A tool call smuggled without a session or token does nothing.
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'terminal_exec', arguments: { command: 'echo x > canary-http.txt' } },
    };
    expect((await post({}, call)).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}` }, call)).status).toBe(400);
    expect(existsSync(join(ws.dir, 'canary-http.txt'))).toBe(false);
  });

  it('refuses a foreign Host header (DNS rebinding) even with the token', async () => {
    // fetch does not let a page set Host; node's http does. The SDK's check answers 403.
    const { request } = await import('node:http');
    const u = new URL(url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          headers: {
            host: 'evil.example:80',
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(initialize));
    });
    expect(status).toBe(403);
  });

  // Last: it stops the server. A hangup (the window running it closed) ended it on the spot, its sessions' agents
  // not completed (security review, issue 15's session); it now stops as on SIGTERM.
  it('stops cleanly on a hangup, as on SIGTERM', async () => {
    await c.close();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGHUP');
    expect(await exited).toBe(0);
  });
});
