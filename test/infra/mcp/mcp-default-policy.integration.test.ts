/**
 * `skein mcp` under the policy a new project has (everything `confirm`), as `claude mcp add skein -- npx skein
 * mcp` runs it. Until 8 December it answered no `initialize`: the session agent's spawn waited on an ask no one
 * could see (the MCP client was not connected yet), and the server failed at the ask's deadline. The person who
 * starts `skein mcp` spawns that agent: its own ask is answered, and only it; every tool call still asks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mcpWorkspace, stdioClient, type TestClient } from '../../support/mcp.ts';

type Text = { type: string; text: string };
const text = (r: unknown) => ((r as { content: Text[] }).content ?? []).map((c) => c.text).join('\n');

/** Fails after `ms` instead of waiting for the SDK's own timeout. */
function within<T>(ms: number, p: Promise<T>): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not in ${ms} ms`)), ms))]);
}

describe('skein mcp under the default policy', () => {
  let ws: ReturnType<typeof mcpWorkspace> | undefined;
  let c: TestClient | undefined;
  afterEach(async () => {
    await c?.close();
    ws?.dispose();
    c = undefined;
  });

  it('starts and answers; a command still asks the person, and runs once allowed', async () => {
    ws = mcpWorkspace({ default: 'confirm' });
    c = await within(20_000, stdioClient(ws.dir));
    c.answer.next = 'allow_once';
    const r = await c.client.callTool({ name: 'terminal_exec', arguments: { command: 'echo MCP-$((40+2))-OK' } });
    expect(r.isError, text(r)).toBeFalsy();
    expect((r.structuredContent as { output: string }).output).toContain('MCP-42-OK');
    // The command was shown to the person; the session's own spawn was not theirs to answer.
    expect(c.elicited.map((e) => e.message.split('\n')[0])).toEqual([expect.stringContaining('use terminal')]);
  }, 60_000);

  it('a policy that denies spawns still denies the session its agent: the server says so and stops', async () => {
    ws = mcpWorkspace({ default: 'confirm', tools: { spawn_agent: { default: 'deny' } } });
    const started = within(20_000, stdioClient(ws.dir));
    await expect(started).rejects.toThrow();
  }, 60_000);
});
