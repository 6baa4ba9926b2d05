/**
 * @module
 * `skein mcp --http <port>`: the Streamable HTTP transport for remote MCP
 * clients. Every request needs `Authorization: Bearer <token>`; each MCP
 * session (an initialize request) gets its own transport, server and agent.
 * Binds to loopback unless told otherwise, and checks the Host header so a
 * web page cannot reach it by DNS rebinding.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { createMcpServer } from './server.ts';
import { type AgentSession, openAgentSession, type RuntimeLink } from './session.ts';

/** Largest request body accepted; a tool call carrying a file's content fits well within it. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export type HttpOptions = { port: number; host: string; token: string; agentId?: string; logger: Logger };
export type HttpMcp = { url: string; server: Server; close(): Promise<void> };

export async function serveHttp(link: RuntimeLink, options: HttpOptions): Promise<HttpMcp> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; agent: AgentSession }>();
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
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (body instanceof Error) return rpcError(res, 400, -32700, body.message);
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (known) return known.transport.handleRequest(req, res, body);
    if (sid !== undefined) return rpcError(res, 404, -32001, `unknown MCP session '${String(sid)}': initialize again`);
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return rpcError(
        res,
        400,
        -32000,
        'no MCP session: the first request must be initialize (without mcp-session-id)',
      );
    }
    const agent = await openAgentSession(link, {
      agentId: options.agentId,
      label: 'mcp http session',
      logger: options.logger,
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, agent });
      },
      enableDnsRebindingProtection: true,
      allowedHosts,
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      agent.close().catch((err: unknown) => options.logger.warn({ err }, 'closing an MCP session failed'));
    };
    await createMcpServer(agent).connect(transport);
    await transport.handleRequest(req, res, body);
  };

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
  allowedHosts.push(`${hostName}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`);
  allowedHosts = [...new Set(allowedHosts)];
  return {
    url: `http://${hostName}:${port}/mcp`,
    server,
    async close() {
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

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return new Error(`request body over ${MAX_BODY_BYTES} bytes: send less at once`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    return new Error(`request body is not JSON: ${(err as Error).message}`);
  }
}
