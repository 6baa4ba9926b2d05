/**
 * @module
 * Keeps a private-mode nats-server alive: when it dies (killed, crashed) it is
 * started again on the same port with the same JetStream store, with a capped
 * backoff, and every change is logged. The host's connection reconnects to it
 * by itself, so an outage ends without restarting skein.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { startNatsServer, type NatsServerHandle } from './nats-server.ts';

export type NatsSupervisor = {
  /** The server running now (its pid changes after a restart). */
  current(): NatsServerHandle;
  stop(): Promise<void>;
};

export function superviseNatsServer(
  first: NatsServerHandle,
  options: { bin?: string | undefined; logger: Logger; onRestart?: (server: NatsServerHandle) => void },
): NatsSupervisor {
  const log = options.logger.child({ actor: 'nats-server', port: first.port });
  let server = first;
  let stopping = false;
  const watch = async (): Promise<void> => {
    let attempt = 0;
    while (!stopping) {
      await server.exited;
      if (stopping) return;
      if (attempt === 0) log.error({ pid: server.pid }, 'private nats-server exited; starting it again');
      await sleep(Math.min(2_000, 100 * 2 ** attempt));
      if (stopping) return;
      try {
        server = await startNatsServer({ storeDir: first.storeDir, port: first.port, bin: options.bin });
        log.info({ pid: server.pid, attempts: attempt + 1 }, 'private nats-server running again');
        attempt = 0;
        options.onRestart?.(server);
      } catch (err) {
        attempt++;
        log.warn({ err: (err as Error).message, attempt }, 'private nats-server did not start; retrying');
      }
    }
  };
  const watching = watch().catch((err) => log.error({ err }, 'nats-server supervision failed'));
  return {
    current: () => server,
    async stop() {
      stopping = true;
      await server.stop();
      await watching;
    },
  };
}
