/**
 * `skein mcp --http --host 0.0.0.0`: clients on the network reach it by the machine's addresses or by a name the
 * user gave with `--allowed-host`; any other Host (a page that rebound its own name here) is refused with the token
 * too, and its canary command never runs. Before `--allowed-host` every Host but loopback was refused, so listening
 * beyond loopback served nobody.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKEIN_BIN } from '../../support/cli.ts';
import { mcpEnv, mcpWorkspace } from '../../support/mcp.ts';

const TOKEN = 'test-token-hosts-0123456789';
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
};
const exec = (file: string) => ({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'terminal_exec', arguments: { command: `echo ran > ${file}` } },
});

type Answer = { status: number; session: string | undefined; text: string };

describe('skein mcp --http beyond loopback', () => {
  let ws: ReturnType<typeof mcpWorkspace>;
  let child: ChildProcess;
  let port: number;
  let stderr = '';

  /** A POST to 127.0.0.1 with the Host header a client reaching it by `host` would send. */
  const post = (host: string, body: unknown, session?: string) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host,
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => {
            const sid = res.headers['mcp-session-id'];
            resolve({ status: res.statusCode ?? 0, session: typeof sid === 'string' ? sid : undefined, text });
          });
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });

  /** Initializes by `host`, then runs a command writing `file` in the same session. */
  const session = async (host: string, file: string) => {
    const init = await post(host, initialize);
    if (init.status !== 200 || !init.session) return init;
    await post(host, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
    return post(host, exec(file), init.session);
  };

  beforeAll(async () => {
    ws = mcpWorkspace();
    child = spawn(
      process.execPath,
      [SKEIN_BIN, 'mcp', '--http', '0', '--host', '0.0.0.0', '--allowed-host', 'MCP.example', 'proxy.example:443'],
      { cwd: ws.dir, env: mcpEnv({ SKEIN_MCP_TOKEN: TOKEN }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    port = await new Promise<number>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const m = /Streamable HTTP at http:\/\/0\.0\.0\.0:(\d+)\/mcp[\s\S]*Host headers answered: .*\n/.exec(stderr);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`skein mcp --http exited ${code}: ${stderr}`)));
    });
  }, 60_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    ws?.dispose();
  });

  it('serves a client that reaches it by a name given with --allowed-host, with or without the port', async () => {
    expect(stderr).toContain(`mcp.example:${port}`);
    const byName = await session(`mcp.example:${port}`, 'by-name.txt');
    expect(byName.status).toBe(200);
    expect(byName.text).toContain('"exitCode":0');
    expect(existsSync(join(ws.dir, 'by-name.txt'))).toBe(true);
    // Behind a reverse proxy the Host is the proxy's: the name alone, or with the port given.
    expect((await session('mcp.example', 'bare-name.txt')).status).toBe(200);
    expect((await session('proxy.example:443', 'proxied.txt')).status).toBe(200);
    expect(existsSync(join(ws.dir, 'proxied.txt'))).toBe(true);
  });

  it("serves a client that reaches it by one of this machine's addresses", async () => {
    const addresses = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .filter((i) => i.family === 'IPv4')
      .map((i) => i.address);
    expect(addresses.length).toBeGreaterThan(0);
    for (const [n, address] of addresses.entries()) {
      const answer = await session(`${address}:${port}`, `by-address-${n}.txt`);
      expect({ address, status: answer.status }).toEqual({ address, status: 200 });
      expect(existsSync(join(ws.dir, `by-address-${n}.txt`))).toBe(true);
    }
  });

  it('refuses any other Host even with the token, saying how to accept it; its command never runs', async () => {
    for (const host of [`evil.example:${port}`, 'evil.example', `mcp.example.evil.example:${port}`]) {
      const answer = await session(host, 'canary-host.txt');
      expect({ host, status: answer.status }).toEqual({ host, status: 403 });
      expect(answer.text).toContain(`--allowed-host ${host}`);
    }
    expect(existsSync(join(ws.dir, 'canary-host.txt'))).toBe(false);
  });

  it('refuses a bad --allowed-host before starting anything, naming it', () => {
    const run = (args: string[]) =>
      spawnSync(process.execPath, [SKEIN_BIN, 'mcp', ...args], { cwd: ws.dir, env: mcpEnv(), encoding: 'utf8' });
    const url = run(['--http', '0', '--allowed-host', 'http://mcp.example/']);
    expect(url.status).not.toBe(0);
    expect(url.stderr).toContain("--allowed-host 'http://mcp.example/' is a URL");
    const stdio = run(['--allowed-host', 'mcp.example']);
    expect(stdio.status).not.toBe(0);
    expect(stdio.stderr).toContain('--allowed-host is for --http');
  });
});
