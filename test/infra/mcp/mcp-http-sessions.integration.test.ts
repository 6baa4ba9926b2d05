/**
 * `skein mcp --http` keeps its sessions bounded, against a live runtime in this process: each session is a child
 * agent of the root, and a client that opened 64 of them (or sent 64 initializes the transport refused, which left
 * an agent each with no session to end it) used up the root's children, so nothing could spawn an agent any more.
 * And a client that cancels a call withdraws the permission request it raised: approved later in
 * `skein approvals`, it ran with nobody waiting.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOn } from '../../../infra/client/index.ts';
import { createLogger } from '../../../infra/kernel/log.ts';
import { mcpCommandId } from '../../../infra/mcp/call-scope.ts';
import { type HttpMcp, serveHttp } from '../../../infra/mcp/http.ts';
import { firstPending, ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

const TOKEN = 'sessions-token-0123456789';
const MAX = 3;
/** Long enough that a session is not idle between its initialize and its first call on a loaded machine. */
const IDLE_MS = 3_000;

describe('skein mcp --http: sessions bounded, cancels withdraw their asks', () => {
  let rt: TestRuntime;
  let http: HttpMcp;

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^touch' }] } } },
    });
    const link = {
      // As linkRuntime makes it: each command a tool call sends names the call (call-scope.ts).
      client: clientOn(rt.bus, { info: rt.info, commandId: mcpCommandId }),
      workspace: rt.workspace,
      rootAgentId: rt.info.rootAgentId,
      owned: false,
      close: async () => {},
    };
    const logger = createLogger({ level: 'silent' });
    http = await serveHttp(link, {
      port: 0,
      host: '127.0.0.1',
      token: TOKEN,
      logger,
      maxSessions: MAX,
      idleMs: IDLE_MS,
    });
  }, 60_000);
  afterAll(async () => {
    await http?.close();
    await rt?.dispose();
  });

  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(http.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
  /** Live agents under the root (every MCP session is one). */
  const children = async () =>
    (ok(await rt.call('agent.tree', {}))['agents'] as Array<{ status: string; parentId: string | null }>).filter(
      (a) => a.parentId === rt.info.rootAgentId && a.status === 'running',
    ).length;
  /** Opens a session: its id, after the initialized notification. */
  async function session(): Promise<string> {
    const r = await post(initialize);
    expect(r.status).toBe(200);
    await r.text();
    const sid = r.headers.get('mcp-session-id')!;
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid })).text();
    return sid;
  }

  it('an initialize the transport refuses leaves no agent behind', async () => {
    const before = await children();
    for (let i = 0; i < 2 * MAX; i++) {
      const refused = await post(initialize, { accept: 'application/json' });
      expect(refused.status).toBe(406);
      await refused.text();
    }
    // Canary: an agent per refused initialize, none of which anything could end.
    await expect.poll(children, { timeout: 5_000 }).toBe(before);
  });

  /** Calls `tool` in session `sid`; its result's structured content. */
  async function tool(sid: string, name: string, args: Record<string, unknown>) {
    const r = await post(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } },
      { 'mcp-session-id': sid },
    );
    const text = await r.text();
    // The reply is the message with this request's id (a stream may carry notifications before it).
    const messages = text.startsWith('{') ? [text] : text.split('\n').filter((l) => l.startsWith('data: '));
    const reply = messages.map((m) => JSON.parse(m.replace(/^data: /, ''))).find((m) => m.id === 3);
    if (!reply?.result || reply.result.isError) throw new Error(`${name} in ${sid}: ${r.status} ${text.slice(0, 500)}`);
    return reply.result.structuredContent as Record<string, unknown>;
  }

  it(`past ${MAX} sessions the least recently used idle one without terminals makes room, else a refusal`, async () => {
    const before = await children();
    // Each keeps a terminal open (a dev server left running between calls): none is let go, not even when idle.
    const sids: string[] = [];
    const terminals: string[] = [];
    for (let i = 0; i < MAX; i++) {
      sids.push(await session());
      terminals.push(String((await tool(sids[i]!, 'terminal_open', {}))['terminalId']));
    }
    expect(await children()).toBe(before + MAX);
    await new Promise((done) => setTimeout(done, 2 * IDLE_MS));
    expect(await children()).toBe(before + MAX);
    const over = await post(initialize);
    expect(over.status).toBe(503);
    expect(await over.text()).toContain(`${MAX} MCP sessions are open or opening, the most this server keeps`);
    // The first closes its terminal: it is the one let go (idle, or to make room), with its agent.
    await tool(sids[0]!, 'terminal_close', { terminalId: terminals[0] });
    await expect.poll(children, { timeout: 10_000 }).toBe(before + MAX - 1);
    const gone = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sids[0]! });
    expect(gone.status).toBe(404);
    await gone.text();
    const next = await session();
    for (const [i, sid] of sids.slice(1).entries()) await tool(sid, 'terminal_close', { terminalId: terminals[i + 1] });
    // Idle and without terminals: all closed.
    await expect.poll(children, { timeout: 10_000 }).toBe(before);
    void next;
  });

  it('a cancelled call withdraws its permission request: approving it later runs nothing', async () => {
    const sid = await session();
    const canary = join(rt.workspace, 'CANCELLED-BUT-RAN');
    const call = { name: 'terminal_exec', arguments: { command: `touch ${canary}` } };
    const pending = post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: call }, { 'mcp-session-id': sid });
    const requestId = await firstPending(rt);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'user' } };
    await (await post(cancel, { 'mcp-session-id': sid })).text();
    // Withdrawn: no longer pending, and an answer now is refused.
    await expect
      .poll(async () => (ok(await rt.call('permission.pending'))['requests'] as unknown[]).length, { timeout: 5_000 })
      .toBe(0);
    const late = ok(await rt.call('permission.decide', { requestId, decision: 'allow_once' }));
    // Recorded as what happened: withdrawn by its caller, not denied by a person.
    expect(late).toMatchObject({ outcome: 'denied', by: 'cancelled', alreadyDecided: true });
    // The call's stream gets no reply (a cancelled request is not answered): leave it.
    void pending.then((r) => r.body?.cancel()).catch(() => undefined);
    await new Promise((done) => setTimeout(done, 500));
    expect(existsSync(canary)).toBe(false);
  });

  it("a cancel withdraws its own call's requests only: another call's, before or after it, still waits", async () => {
    const sid = await session();
    const pendingIds = async () =>
      (ok(await rt.call('permission.pending'))['requests'] as Array<{ requestId: string; input: string }>).map(
        (r) => [r.requestId, r.input] as const,
      );
    const call = (id: number, name: string) =>
      post(
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'terminal_exec', arguments: { command: `touch ${join(rt.workspace, name)}` } },
        },
        { 'mcp-session-id': sid },
      );
    const first = call(11, 'kept-before');
    await expect.poll(async () => (await pendingIds()).length, { timeout: 10_000 }).toBe(1);
    const cancelled = call(12, 'cancelled');
    await expect.poll(async () => (await pendingIds()).length, { timeout: 10_000 }).toBe(2);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12, reason: 'user' } };
    await (await post(cancel, { 'mcp-session-id': sid })).text();
    const after = call(13, 'kept-after');
    await expect
      .poll(async () => (await pendingIds()).map(([, input]) => input.split('/').pop()).sort(), { timeout: 10_000 })
      .toEqual(['kept-after', 'kept-before']);
    for (const [requestId] of await pendingIds()) {
      ok(await rt.call('permission.decide', { requestId, decision: 'allow_once' }));
    }
    for (const reply of [first, after]) expect((await reply).status).toBe(200);
    await expect.poll(() => existsSync(join(rt.workspace, 'kept-after')), { timeout: 10_000 }).toBe(true);
    expect(existsSync(join(rt.workspace, 'kept-before'))).toBe(true);
    expect(existsSync(join(rt.workspace, 'cancelled'))).toBe(false);
    void cancelled.then((r) => r.body?.cancel()).catch(() => undefined);
  });
});
