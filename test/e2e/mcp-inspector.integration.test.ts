/**
 * The MCP inspector's CLI (`@modelcontextprotocol/inspector --cli`, a
 * devDependency, offline) scripted against `skein mcp`: over stdio it lists
 * the tools and calls terminal_exec; over HTTP it lists the tools with the
 * bearer token and is refused without it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKEIN_BIN } from '../support/cli.ts';
import { mcpEnv, mcpWorkspace } from '../support/mcp.ts';
import { EXPECTED_TOOLS } from '../infra/mcp/acceptance.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSPECTOR = join(ROOT, 'node_modules', '.bin', 'mcp-inspector');
const TOKEN = 'inspector-token-0123456789';

function inspect(cwd: string, args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(INSPECTOR, ['--cli', ...args], { cwd, env: mcpEnv(), timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('the MCP inspector CLI against skein mcp', () => {
  let ws: ReturnType<typeof mcpWorkspace>;
  let http: ChildProcess | undefined;
  beforeAll(() => {
    ws = mcpWorkspace();
  });
  afterAll(async () => {
    if (http && http.exitCode === null) {
      const exited = new Promise((resolve) => http!.once('exit', resolve));
      http.kill('SIGTERM');
      await exited;
    }
    ws?.dispose();
  });

  it('lists the tools over stdio', async () => {
    const r = await inspect(ws.dir, [process.execPath, SKEIN_BIN, 'mcp', '--method', 'tools/list']);
    expect(r.code, r.stderr).toBe(0);
    const { tools } = JSON.parse(r.stdout) as { tools: Array<{ name: string }> };
    expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
  });

  it('calls terminal_exec over stdio and gets structuredContent', async () => {
    const r = await inspect(ws.dir, [
      process.execPath,
      SKEIN_BIN,
      'mcp',
      '--method',
      'tools/call',
      '--tool-name',
      'terminal_exec',
      '--tool-arg',
      'command=echo from-inspector',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { structuredContent: { output: string; exitCode: number } };
    expect(result.structuredContent).toMatchObject({ exitCode: 0, output: 'from-inspector\n' });
  });

  it('lists the tools over HTTP with the token, and is refused without it', async () => {
    http = spawn(process.execPath, [SKEIN_BIN, 'mcp', '--http', '0'], {
      cwd: ws.dir,
      env: mcpEnv({ SKEIN_MCP_TOKEN: TOKEN }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      http!.stderr!.on('data', (chunk: Buffer) => {
        err += chunk.toString();
        const m = /Streamable HTTP at (\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      http!.once('exit', (code) => reject(new Error(`skein mcp --http exited ${code}: ${err}`)));
    });
    const ok = await inspect(ws.dir, [
      url,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${TOKEN}`,
      '--method',
      'tools/list',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as { tools: unknown[] }).tools).toHaveLength(EXPECTED_TOOLS.length);
    const refused = await inspect(ws.dir, [url, '--transport', 'http', '--method', 'tools/list']);
    expect(refused.code).not.toBe(0);
  });
});
