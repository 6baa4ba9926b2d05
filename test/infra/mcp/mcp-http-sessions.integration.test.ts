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
const IDLE_WITH_TERMINALS_MS = 7_000;
const BODY_READ_MS = 1_500;

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
      idleWithTerminalsMs: IDLE_WITH_TERMINALS_MS,
      bodyReadMs: BODY_READ_MS,
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

  // Security review (issue 15's session): a session holding a terminal was never let go, and the SDK's client ends a
  // session without a DELETE, so 32 clients that ran a command and went refused every later one until a restart.
  it(`past ${MAX} sessions one nobody uses makes room; terminals keep a session only while it is used`, async () => {
    const before = await children();
    // Each keeps a terminal open (a dev server left running between calls).
    const sids: string[] = [];
    const terminals: string[] = [];
    for (let i = 0; i < MAX; i++) {
      sids.push(await session());
      terminals.push(String((await tool(sids[i]!, 'terminal_open', {}))['terminalId']));
    }
    expect(await children()).toBe(before + MAX);
    // The first one's client stays connected: its GET stream is open (the SDK's client keeps one).
    const connected = new AbortController();
    const stream = await fetch(http.url, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream', 'mcp-session-id': sids[0]! },
      signal: connected.signal,
    });
    expect(stream.status).toBe(200);
    // All used just now: none makes room.
    const over = await post(initialize);
    expect(over.status).toBe(503);
    expect(await over.text()).toContain(`${MAX} MCP sessions are open or opening, the most this server keeps`);
    // Unused for IDLE_MS, they still hold their terminals (not closed by the sweep) ...
    await new Promise((done) => setTimeout(done, IDLE_MS + 500));
    expect(await children()).toBe(before + MAX);
    // ... and the least recently used one whose client holds no stream makes room, with its agent: not the first.
    const next = await session();
    const gone = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sids[1]! });
    expect(gone.status).toBe(404);
    await gone.text();
    await expect.poll(children, { timeout: 5_000 }).toBe(before + MAX);
    // Unused for IDLE_WITH_TERMINALS_MS: the third is closed with its terminal, the new one (no terminal) after
    // IDLE_MS; the connected one stays and answers.
    await expect.poll(children, { timeout: 15_000, interval: 250 }).toBe(before + 1);
    const still = await tool(sids[0]!, 'terminal_screen', { terminalId: terminals[0] });
    expect(still['terminalId']).toBe(terminals[0]);
    connected.abort();
    await tool(sids[0]!, 'terminal_close', { terminalId: terminals[0] });
    // Idle and without terminals: all closed.
    await expect.poll(children, { timeout: 10_000 }).toBe(before);
    void next;
  });

  it('reads at most a few request bodies at once: the next is refused at once, the others go on', async () => {
    // Four bodies being sent slowly hold the four reads; a fifth request is told to retry, not read.
    const slow = Array.from({ length: 4 }, () => {
      let push: (chunk: string) => void = () => undefined;
      let end: () => void = () => undefined;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (chunk) => controller.enqueue(new TextEncoder().encode(chunk));
          end = () => controller.close();
        },
      });
      const reply = fetch(http.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
        duplex: 'half',
      } as RequestInit);
      push('{"jsonrpc":"2.0",');
      return { reply, finish: () => (push('"id":9,"method":"tools/list"}'), end()) };
    });
    await new Promise((done) => setTimeout(done, 300));
    const refused = await post(initialize);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.text()).toContain('request bodies are being read at once');
    for (const s of slow) s.finish();
    // Read whole, each is answered (no session: a clear refusal, not a dropped request).
    for (const s of slow) {
      const r = await s.reply;
      expect(r.status).toBe(400);
      expect(await r.text()).toContain('the first request must be initialize');
    }
    // The reads are free again.
    const sid = await session();
    expect(sid).toMatch(/^[\w-]+$/);
  });

  // Review: four bodies that stall held the four reads for node's 300 s request timeout, every POST refused.
  it('a body that stalls is cut after bodyReadMs, and the reads it held go to others', async () => {
    const stalled = Array.from({ length: 4 }, () =>
      fetch(http.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: new ReadableStream<Uint8Array>({
          start: (controller) => controller.enqueue(new TextEncoder().encode('{"jsonrpc":')),
        }),
        duplex: 'half',
      } as RequestInit).then(
        () => 'answered',
        () => 'cut',
      ),
    );
    await new Promise((done) => setTimeout(done, 300));
    expect((await post(initialize)).status).toBe(503);
    // Cut, each of them, once their time is up; then a new session is served.
    expect(await Promise.all(stalled)).toEqual(['cut', 'cut', 'cut', 'cut']);
    const sid = await session();
    expect(sid).toMatch(/^[\w-]+$/);
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
