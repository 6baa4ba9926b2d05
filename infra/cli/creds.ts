/**
 * @module
 * `skein creds <agentId> [--out file]`: a standard NATS `.creds` file for one
 * agent, so an external brain (another language, an MCP bridge, a script)
 * can act as exactly that agent and no more. Operator only: it needs the
 * bus keys in the data dir (0600, readable by whoever runs skein). For an
 * embedded runtime it writes the agent's socket token instead (a client
 * presents it when SKEIN_SOCKET_TOKEN names the file).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { AgentId } from '../../schemas/index.ts';
import { Authority, writePrivate } from '../transport/auth/authority.ts';
import { mintSocketToken, socketKey } from '../transport/auth/socket-tokens.ts';
import { call, connectClient } from '../transport/client.ts';
import { action, UsageError } from './output.ts';
import { clientTarget } from './target.ts';

export async function credsCommand(agentId: string, opts: { out?: string; data?: string }): Promise<void> {
  await action(async () => {
    if (!AgentId.safeParse(agentId).success) {
      throw new UsageError(`agent id '${agentId}' is not valid: use 1-64 characters from [A-Za-z0-9_-]`);
    }
    if (opts.out !== undefined) checkOutDir(opts.out);
    const target = clientTarget(opts);
    const authority = Authority.open(join(target.dataDir, 'auth'));
    const embedded = !authority && existsSync(join(target.dataDir, 'auth', 'socket.key'));
    if (!authority && !embedded) {
      throw new UsageError(
        `no bus identities in ${target.dataDir}: they exist once \`skein up\` ran with a private broker ` +
          '(or after `skein auth init`); pass the --data of that runtime',
      );
    }
    // Only for an agent the runtime knows: a typo would otherwise mint creds nobody revokes.
    const client = await connectClient(target);
    try {
      const reply = await call(client.bus, agentId, 'agent.get', {}, { timeoutMs: 10_000 });
      if (!reply.ok) throw new UsageError(`agent '${agentId}': ${reply.error.message}`);
      if (['completed', 'failed', 'cancelled'].includes(String(reply['status']))) {
        throw new UsageError(`agent '${agentId}' has ${reply['status']}: its credentials are revoked`);
      }
    } finally {
      await client.close();
    }
    // Embedded mode: a socket token (SKEIN_SOCKET_TOKEN names a file holding it); else NATS creds.
    const text = authority
      ? (await authority.mintAgent(agentId)).creds
      : `${mintSocketToken(socketKey(target.dataDir), { kind: 'agent', agentId })}\n`;
    if (opts.out) {
      try {
        writePrivate(opts.out, text);
      } catch (err) {
        throw new Error(`cannot write --out '${opts.out}': ${(err as Error).message}; choose another path`, {
          cause: err,
        });
      }
      process.stderr.write(`wrote ${opts.out} (0600) for agent ${agentId}; revoked when the agent finishes\n`);
    } else {
      process.stdout.write(text);
    }
    return undefined;
  });
}

/** Before anything is minted: the directory of --out must exist (a missing one was an ENOENT on `<out>.tmp`). */
function checkOutDir(out: string): void {
  const dir = dirname(resolve(out));
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(dir, { throwIfNoEntry: false });
  } catch {
    stat = undefined; // ENOTDIR: a file on the way
  }
  if (stat?.isDirectory()) return;
  throw new UsageError(
    `--out '${out}': the directory '${dirname(out)}' ${stat ? 'is not a directory' : 'does not exist'}; ` +
      'create it first or choose another path',
  );
}
