/**
 * @module
 * Which token a socket client presents to an embedded runtime, read from its file: the light half of
 * `socket-tokens.ts` (which mints and verifies), so a client finds its token without the broker's key code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The operator's token for the CLI on this machine: `<data>/auth/operator.token` (0600). */
export function operatorTokenPath(dataDir: string): string {
  return join(dataDir, 'auth', 'operator.token');
}

/** Which token a socket client presents: SKEIN_SOCKET_TOKEN (a file: a worker's own), else the operator's. */
export function clientSocketToken(dataDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = env.SKEIN_SOCKET_TOKEN || operatorTokenPath(dataDir);
  if (!existsSync(path)) {
    if (env.SKEIN_SOCKET_TOKEN) {
      throw new Error(`SKEIN_SOCKET_TOKEN names ${path}, which does not exist; check the path`);
    }
    return undefined;
  }
  return readFileSync(path, 'utf8').trim();
}

/** Like `clientSocketToken`, but says what to do when there is none. */
export function requireSocketToken(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const token = clientSocketToken(dataDir, env);
  if (token === undefined) {
    throw new Error(
      `no token for the embedded runtime of ${dataDir}: the operator's is ${operatorTokenPath(dataDir)} ` +
        '(readable by the user who ran `skein up`); an agent uses its own (SKEIN_SOCKET_TOKEN, skein creds <agentId>)',
    );
  }
  return token;
}
