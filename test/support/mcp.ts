/**
 * @module
 * MCP test plumbing: a temporary workspace with a project policy, and the
 * official SDK client connected to `skein mcp` over stdio (the real
 * executable as a child process) or Streamable HTTP, answering elicitations
 * with a scripted choice and recording what it was shown.
 */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { cleanEnv, SKEIN_BIN } from './cli.ts';
import { tempDir } from './temp-dir.ts';

/**
 * Runtimes started by `skein mcp` keep their data dir under $XDG_STATE_HOME (outside the workspace): one
 * temporary state dir per test file, never the developer's ~/.local/state.
 */
export const MCP_STATE_HOME = realpathSync(mkdtempSync(join(tmpdir(), 'skein-mcp-state-')));

/** The environment every `skein mcp` (and inspector) child of these tests gets. */
export function mcpEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cleanEnv({ XDG_STATE_HOME: MCP_STATE_HOME, ...extra });
}

/** Allows everything except `touch` (asks) and `rm` (denied): enough to see each path of the gate. */
export const MCP_TEST_POLICY = {
  default: 'allow',
  tools: { terminal: { always_confirm: [{ pattern: '^touch\\b' }], always_deny: [{ pattern: '^rm\\b' }] } },
};

export function mcpWorkspace(policy: unknown = MCP_TEST_POLICY): { dir: string; dispose(): void } {
  const temp = tempDir('skein-mcp-');
  const dir = realpathSync(temp.path);
  mkdirSync(join(dir, '.skein'), { recursive: true });
  writeFileSync(join(dir, '.skein', 'policy.json'), JSON.stringify(policy));
  return { dir, dispose: temp.dispose };
}

export type Elicited = { message: string; schema: unknown };
export type TestClient = {
  client: Client;
  elicited: Elicited[];
  /** What the next elicitations answer: a decision value, or 'decline'. */
  answer: { next: string };
  stderr(): string;
  close(): Promise<void>;
};

function makeClient(elicitation: boolean): Omit<TestClient, 'stderr' | 'close'> {
  const client = new Client(
    { name: 'skein-test', version: '1.0.0' },
    { capabilities: elicitation ? { elicitation: { form: {} } } : {} },
  );
  const elicited: Elicited[] = [];
  const answer = { next: 'allow_once' };
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      elicited.push({ message: params.message, schema: params.requestedSchema });
      return answer.next === 'decline'
        ? { action: 'decline' }
        : { action: 'accept', content: { decision: answer.next } };
    });
  }
  return { client, elicited, answer };
}

export async function stdioClient(cwd: string, options: { elicitation?: boolean; args?: string[] } = {}) {
  const made = makeClient(options.elicitation ?? true);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SKEIN_BIN, 'mcp', ...(options.args ?? [])],
    cwd,
    env: mcpEnv() as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await made.client.connect(transport);
  return { ...made, stderr: () => stderr, close: () => made.client.close() } satisfies TestClient;
}

export async function httpClient(url: string, token: string, options: { elicitation?: boolean } = {}) {
  const made = makeClient(options.elicitation ?? true);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await made.client.connect(transport);
  return { ...made, stderr: () => '', close: () => made.client.close() } satisfies TestClient;
}
