/**
 * @module
 * Connecting a test to an embedded runtime's socket as the operator (the
 * token `skein up` writes in the data dir) or with a given token.
 */
import { join } from 'node:path';
import { requireSocketToken } from '../../infra/transport/auth/socket-tokens.ts';
import { SocketBus } from '../../infra/transport/socket-bus.ts';

/** The operator's connection to the embedded runtime of `dataDir`. */
export function operatorSocket(dataDir: string, socketPath = join(dataDir, 'skein.sock')): Promise<SocketBus> {
  return SocketBus.connect(socketPath, { token: requireSocketToken(dataDir, {}) });
}
