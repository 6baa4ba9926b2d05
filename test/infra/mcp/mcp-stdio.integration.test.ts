/**
 * `skein mcp` over stdio, driven by the official SDK client as Claude Code
 * would run it: the acceptance set, then progress, cancellation, resources,
 * review, the fallback for clients without elicitation, and the runtime the
 * server started going away with the session.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../../infra/client/index.ts';
import { defaultDataDir } from '../../../infra/kernel/data-dir.ts';
import { mcpEnv, mcpWorkspace, stdioClient, type TestClient } from '../../support/mcp.ts';
import { acceptance } from './acceptance.ts';

type Text = { type: string; text: string };
const text = (r: unknown) => ((r as { content: Text[] }).content ?? []).map((c) => c.text).join('\n');

describe('skein mcp over stdio', () => {
  let ws: ReturnType<typeof mcpWorkspace>;
  let c: TestClient;

  beforeAll(async () => {
    ws = mcpWorkspace();
    c = await stdioClient(ws.dir);
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    ws?.dispose();
  });

  acceptance(() => ({ c, dir: ws.dir }));

  it('streams the output tail as progress while a command runs', async () => {
    const messages: string[] = [];
    const r = await c.client.callTool(
      { name: 'terminal_exec', arguments: { command: 'echo tick1; sleep 0.8; echo tick2; sleep 0.8; echo tick3' } },
      undefined,
      { onprogress: (p) => messages.push(String(p.message ?? '')), timeout: 60_000 },
    );
    expect(r.isError, text(r)).toBeFalsy();
    expect((r.structuredContent as { output: string }).output).toContain('tick3');
    // Progress is best effort (the SDK may drop the last one); at least one tail arrives mid-run.
    expect(messages.some((m) => m.includes('tick1'))).toBe(true);
  });

  it('interrupts the command when the client cancels the call', async () => {
    const controller = new AbortController();
    const call = c.client.callTool(
      { name: 'terminal_exec', arguments: { command: 'sleep 30; touch canary-cancelled.txt' } },
      undefined,
      { signal: controller.signal, timeout: 60_000 },
    );
    setTimeout(() => controller.abort(), 1_000);
    await expect(call).rejects.toThrow();
    // The terminal is free again at once: the next command does not queue behind a 30 s sleep.
    const started = Date.now();
    const r = await c.client.callTool({ name: 'terminal_exec', arguments: { command: 'echo after' } });
    expect((r.structuredContent as { output: string }).output).toContain('after');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(existsSync(join(ws.dir, 'canary-cancelled.txt'))).toBe(false);
  });

  it('serves the terminal screen, its output log and the review diff as resources', async () => {
    await c.client.callTool({ name: 'terminal_exec', arguments: { command: 'echo resource-marker' } });
    const { resources } = await c.client.listResources();
    const screen = resources.find((r) => r.uri.endsWith('/screen'));
    expect(screen, JSON.stringify(resources)).toBeDefined();
    const read = await c.client.readResource({ uri: screen!.uri });
    expect((read.contents[0] as { text: string }).text).toContain('resource-marker');
    const output = await c.client.readResource({ uri: screen!.uri.replace(/screen$/, 'output') });
    expect((output.contents[0] as { text: string }).text).toContain('resource-marker');
    const diff = await c.client.readResource({ uri: 'skein://review/diff' });
    expect((diff.contents[0] as { text: string }).text).toContain('greet.py');
    await expect(c.client.readResource({ uri: 'skein://terminal/t-nosuch/screen' })).rejects.toThrow();
  });

  it('lists the changes for review and rejects them on disk', async () => {
    const list = await c.client.callTool({ name: 'review_list', arguments: {} });
    const files = (list.structuredContent as { files: Array<{ path: string }> }).files.map((f) => f.path);
    expect(files).toContain(join(ws.dir, 'greet.py'));
    const r = await c.client.callTool({ name: 'review_reject', arguments: { paths: [join(ws.dir, 'greet.py')] } });
    expect(r.isError, text(r)).toBeFalsy();
    expect(readFileSync(join(ws.dir, 'greet.py'), 'utf8')).toContain('"hello " + name');
  });

  it('review_accept with seen keeps only what was listed: a file changed since is refused', async () => {
    const path = join(ws.dir, 'seen-by-mcp.txt');
    const write = (content: string) => c.client.callTool({ name: 'write_file', arguments: { path, content } });
    expect((await write('first\n')).isError).toBeFalsy();
    const list = await c.client.callTool({ name: 'review_list', arguments: {} });
    type Listed = { files: Array<{ path: string; currentHash: string | null }> };
    const shown = (list.structuredContent as Listed).files.find((f) => f.path === path)!;
    expect((await write('first\nCANARY-mcp slipped\n')).isError).toBeFalsy();
    // seen alone: the tool's schema keeps it (a copy of the schema without it turned this into accept-all).
    const r = await c.client.callTool({ name: 'review_accept', arguments: { seen: { [path]: shown.currentHash } } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('changed since it was listed');
    const after = await c.client.callTool({ name: 'review_list', arguments: {} });
    const still = (after.structuredContent as Listed).files.map((f) => f.path);
    // Every file listed before is still to review: the refusal accepted none of them.
    expect(still).toEqual((list.structuredContent as Listed).files.map((f) => f.path));
  });

  it('without elicitation, waits for skein approvals and runs once approved elsewhere', async () => {
    const plain = await stdioClient(ws.dir, { elicitation: false });
    try {
      const skein = await connect({ dataDir: defaultDataDir(ws.dir, mcpEnv()) });
      try {
        const answered = new Promise<string>((resolve) => {
          skein.on('permission.requested', (fact) => {
            if (fact.data.input === 'touch approved-elsewhere.txt') resolve(fact.data.requestId);
          });
        });
        const call = plain.client.callTool(
          { name: 'terminal_exec', arguments: { command: 'touch approved-elsewhere.txt' } },
          undefined,
          { timeout: 120_000 },
        );
        const requestId = await answered;
        expect(existsSync(join(ws.dir, 'approved-elsewhere.txt'))).toBe(false);
        await skein.agent('main').permission.decide({ requestId: requestId as never, decision: 'allow_once' });
        const r = await call;
        expect(r.isError, text(r)).toBeFalsy();
        expect(existsSync(join(ws.dir, 'approved-elsewhere.txt'))).toBe(true);
      } finally {
        await skein.close();
      }
    } finally {
      await plain.close();
    }
  });
});

describe('skein mcp when nobody answers', () => {
  it('returns a permission timeout as a tool error that says nobody answered', async () => {
    const ws = mcpWorkspace();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      join(ws.dir, '.skein', 'config.json'),
      JSON.stringify({ domains: { permission: { timeoutMs: 1500 } } }),
    );
    const c = await stdioClient(ws.dir, { elicitation: false });
    try {
      const r = await c.client.callTool(
        { name: 'terminal_exec', arguments: { command: 'touch canary-timeout.txt' } },
        undefined,
        { timeout: 60_000 },
      );
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/permission denied: .*nobody answered before/);
      expect(existsSync(join(ws.dir, 'canary-timeout.txt'))).toBe(false);
    } finally {
      await c.close();
      ws.dispose();
    }
  }, 60_000);
});

describe('skein mcp lifecycle', () => {
  it('starts a runtime when none runs, finds it from a subdirectory, and stops it with the session', async () => {
    const ws = mcpWorkspace();
    try {
      const first = await stdioClient(ws.dir);
      // The data dir is outside the workspace, where every client looks for it.
      const dataDir = defaultDataDir(ws.dir, mcpEnv());
      expect(existsSync(join(ws.dir, '.skein', 'data'))).toBe(false);
      const info = JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as {
        pid: number;
        mode: string;
      };
      expect(info.mode).toBe('embedded');
      // A second session from a subdirectory joins the same runtime instead of starting another.
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(ws.dir, 'src', 'deep'), { recursive: true });
      const second = await stdioClient(join(ws.dir, 'src', 'deep'));
      const r = await second.client.callTool({ name: 'terminal_exec', arguments: { command: 'pwd' } });
      expect((r.structuredContent as { output: string }).output.trim()).toBe(ws.dir);
      // A client that starts servers outside the project (Claude Desktop) names it with --workspace.
      const { tmpdir } = await import('node:os');
      const third = await stdioClient(tmpdir(), { args: ['--workspace', ws.dir] });
      const r3 = await third.client.callTool({ name: 'terminal_exec', arguments: { command: 'pwd' } });
      expect((r3.structuredContent as { output: string }).output.trim()).toBe(ws.dir);
      await third.close();
      await second.close();
      await first.close();
      await expect
        .poll(
          () => {
            try {
              process.kill(info.pid, 0);
              return true;
            } catch {
              return false;
            }
          },
          { timeout: 15_000 },
        )
        .toBe(false);
    } finally {
      ws.dispose();
    }
  }, 90_000);
});
