/**
 * @module
 * `skein mcp --http <port>`: the Streamable HTTP transport for remote MCP
 * clients. Every request needs `Authorization: Bearer <token>`; each MCP
 * session (an initialize request) gets its own transport, server and agent.
 * Binds to loopback unless told otherwise, and checks the Host header so a
 * web page cannot reach it by DNS rebinding. Each session is a child agent, so sessions are bounded: at most
 * `maxSessions` at once (past it, the least recently used idle one makes room: one without open terminals, else one
 * holding terminals idle for `idleMs`; else the initialize is refused), a session idle for `idleMs` (no request or
 * stream open, none made) without open terminals is closed, one holding terminals after `idleWithTerminalsMs`, and
 * an initialize the transport refuses leaves no agent behind (64 of them used up the root's children, and nothing
 * could spawn any more). A connected client keeps a stream open (the SDK's client its GET stream), so it is never
 * idle; the SDK's client ends a session without a DELETE, so a client that ran a command and went left a session
 * holding its terminal that nothing closed, and 32 of them refused every later client.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { allowedHostHeaders } from './allowed-hosts.ts';
import { createMcpServer } from './server.ts';
import { type AgentSession, openAgentSession, type RuntimeLink } from './session.ts';

/**
 * Largest request body accepted: a file's content the runtime takes (1 MiB of payload), escaped as JSON. A 16 MiB
 * body of nested arrays cost ~240 MB to parse.
 */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Sessions open at once, well below an agent's children limit (`domains.agents.maxChildren`, 64). */
export const MAX_SESSIONS = 32;
/** A session with no request open or made for this long is closed (its agent too). */
export const SESSION_IDLE_MS = 30 * 60_000;
/** The same for a session whose agent holds terminals (a dev server left running between calls). */
export const SESSION_WITH_TERMINALS_IDLE_MS = 8 * 60 * 60_000;
/** Request bodies read at once: each may hold MAX_BODY_BYTES, whose parse can cost ~50× its size in memory. */
const MAX_BODIES_READ = 4;
/**
 * How long a body may take to arrive (4 MiB at ~140 KB/s): four stalled ones held every read for node's 300 s
 * request timeout, refusing every other POST meanwhile.
 */
const BODY_READ_MS = 30_000;

export type HttpOptions = {
  port: number;
  host: string;
  /** Host header values answered to beyond the bound address and loopback (`--allowed-host`, checked). */
  allowedHosts?: readonly string[];
  token: string;
  agentId?: string;
  logger: Logger;
  maxSessions?: number;
  idleMs?: number;
  idleWithTerminalsMs?: number;
  /** How long a request body may take to arrive (default BODY_READ_MS). */
  bodyReadMs?: number;
};
type Session = { transport: StreamableHTTPServerTransport; agent: AgentSession; open: number; lastSeen: number };
export type HttpMcp = {
  url: string;
  /** The Host header values answered to; a request with another gets 403 naming it. */
  allowedHosts: readonly string[];
  server: Server;
  close(): Promise<void>;
};

export async function serveHttp(link: RuntimeLink, options: HttpOptions): Promise<HttpMcp> {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  const idleMs = options.idleMs ?? SESSION_IDLE_MS;
  const idleWithTerminalsMs = Math.max(idleMs, options.idleWithTerminalsMs ?? SESSION_WITH_TERMINALS_IDLE_MS);
  let reading = 0;
  /** Initializes in progress: they count against maxSessions until their transport says yes or no. */
  let opening = 0;
  const expected = Buffer.from(`Bearer ${options.token}`);
  const authorized = (req: IncomingMessage) => {
    const got = Buffer.from(req.headers.authorization ?? '');
    return got.length === expected.length && timingSafeEqual(got, expected);
  };
  let allowedHosts: string[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp')
      return plain(res, 404, 'not found: the MCP endpoint is /mcp');
    if (!authorized(req)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="skein"');
      return plain(res, 401, 'unauthorized: send Authorization: Bearer <token> (printed by skein mcp --http)');
    }
    const host = req.headers.host ?? '';
    if (!allowedHosts.includes(host)) {
      // As the SDK's own check (kept too) answers, with what to do; after the token, so only its holder learns it.
      return rpcError(
        res,
        403,
        -32000,
        `Host '${host.slice(0, 200)}' is not one this server answers to (a DNS rebinding guard): ` +
          `if it is yours, start skein mcp with --allowed-host ${/^[\w.:[\]-]{1,200}$/.test(host) ? host : '<name>'}`,
      );
    }
    if (req.method === 'POST' && reading >= MAX_BODIES_READ) {
      res.setHeader('Retry-After', '1');
      return rpcError(res, 503, -32000, `${reading} request bodies are being read at once, the most: retry shortly`);
    }
    // The session counts the request as open from now on: its body still coming, it is not idle (not let go).
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (known) {
      known.open += 1;
      res.once('close', () => {
        known.open -= 1;
        known.lastSeen = Date.now();
      });
    }
    let body: unknown;
    if (req.method === 'POST') {
      reading += 1;
      try {
        body = await readJson(req, options.bodyReadMs ?? BODY_READ_MS);
      } finally {
        reading -= 1;
      }
    }
    if (body instanceof Error) return rpcError(res, 400, -32700, body.message);
    if (known && sessions.has(String(sid))) return known.transport.handleRequest(req, res, body);
    if (sid !== undefined) return rpcError(res, 404, -32001, `unknown MCP session '${String(sid)}': initialize again`);
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return rpcError(
        res,
        400,
        -32000,
        'no MCP session: the first request must be initialize (without mcp-session-id)',
      );
    }
    // Full: the session least recently used with nothing open and no terminal of its own makes room, else one
    // holding terminals that nothing has used for idleMs (no stream open: its client is gone).
    if (sessions.size + opening >= maxSessions && !(await evictOne(0)) && !(await evictOne(idleMs, true))) {
      return rpcError(
        res,
        503,
        -32000,
        `${sessions.size + opening} MCP sessions are open or opening, the most this server keeps (${maxSessions}), ` +
          `and each is busy, or holds terminals and was used in the last ${Math.round(idleMs / 1000)} s: end one ` +
          "(DELETE /mcp with its mcp-session-id), close a session's terminals so it can be let go, or retry later",
      );
    }
    opening += 1;
    try {
      await openSession(req, res, body);
    } finally {
      opening -= 1;
    }
  };

  const openSession = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const agent = await openAgentSession(link, {
      agentId: options.agentId,
      label: 'mcp http session',
      logger: options.logger,
    });
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      if (transport.sessionId) sessions.delete(transport.sessionId);
      agent.close().catch((err: unknown) => options.logger.warn({ err }, 'closing an MCP session failed'));
    };
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, agent, open: 0, lastSeen: Date.now() });
      },
      enableDnsRebindingProtection: true,
      allowedHosts,
    });
    transport.onclose = close;
    try {
      await createMcpServer(agent).connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      // Refused by the transport (a bad Accept, Host or content type): no session, so no agent either.
      if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) {
        await transport.close().catch(() => undefined);
        close();
      }
    }
  };

  /**
   * Closes the least recently used session idle for over `minIdleMs` (no request open) whose agent has no open
   * terminal (closing it would end them: a dev server left running between calls), or any such session with
   * `terminalsToo`; true if one was.
   */
  const evictOne = async (minIdleMs: number, terminalsToo = false): Promise<boolean> => {
    const now = Date.now();
    const idle = [...sessions.values()]
      .filter((s) => s.open === 0 && now - s.lastSeen >= minIdleMs)
      .sort((a, b) => a.lastSeen - b.lastSeen);
    for (const s of idle) {
      const me = s.agent.client.agent(s.agent.agentId);
      const terminals = terminalsToo
        ? 0
        : await me.terminal.list({}).then(
            (r) => r.terminals.length,
            () => 1,
          );
      if (terminals > 0 || s.open > 0 || !sessions.has(s.transport.sessionId ?? '')) continue;
      await s.transport.close().catch(() => undefined);
      return true;
    }
    return false;
  };
  let sweeping = false;
  const sweep = setInterval(
    () => {
      if (sweeping) return;
      sweeping = true;
      void (async () => {
        while (await evictOne(idleMs));
        while (await evictOne(idleWithTerminalsMs, true));
      })().finally(() => (sweeping = false));
    },
    Math.min(60_000, Math.max(50, idleMs / 4)),
  ).unref();

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.logger.error({ err }, 'MCP HTTP request failed');
      if (!res.headersSent) rpcError(res, 500, -32603, err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const hostName = options.host.includes(':') ? `[${options.host}]` : options.host;
  allowedHosts = allowedHostHeaders(options.host, port, options.allowedHosts ?? [], networkInterfaces());
  return {
    url: `http://${hostName}:${port}/mcp`,
    allowedHosts,
    server,
    async close() {
      clearInterval(sweep);
      for (const { transport } of [...sessions.values()]) await transport.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' }).end(`${text}\n`);
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readJson(req: IncomingMessage, withinMs: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Not all there in time: the request is cut (its connection too; the client learns it from that).
  const late = setTimeout(() => req.destroy(new Error(`request body not received within ${withinMs} ms`)), withinMs);
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return new Error(`request body over ${MAX_BODY_BYTES} bytes: send less at once`);
      chunks.push(chunk);
    }
  } catch (err) {
    return new Error(`request body not read: ${(err as Error).message}`);
  } finally {
    clearTimeout(late);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    return new Error(`request body is not JSON: ${(err as Error).message}`);
  }
}
