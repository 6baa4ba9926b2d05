/**
 * @module
 * `skein up`: run the runtime until Ctrl-C (SIGINT), SIGTERM or a hangup, then drain and exit 0
 * (stop-signals.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig } from '../kernel/config.ts';
import { createLogger } from '../kernel/log.ts';
import { startRuntime } from '../kernel/runtime.ts';
import type { ConsoleServer } from '../ui/server.ts';
import { action, UsageError } from './output.ts';
import { listenForStop } from './stop-signals.ts';
import { upBanner } from './up-banner.ts';
import { needsBroker, serveConsole } from './ui.ts';

type UpOptions = {
  nats?: string;
  creds?: string;
  signingKey?: string;
  embedded?: boolean;
  private?: boolean;
  data?: string;
  workspace?: string;
  root?: string;
  host?: string;
  ui?: boolean;
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
};

export async function up(opts: UpOptions): Promise<void> {
  await action(async () => {
    if ([opts.embedded, opts.private, opts.nats !== undefined].filter(Boolean).length > 1) {
      throw new UsageError('choose one of --embedded, --private and --nats <url>');
    }
    if (opts.host !== undefined && !opts.nats && !process.env['SKEIN_NATS_URL']) {
      throw new UsageError(
        '--host joins a runtime shared over NATS: add --nats <url> (a cluster: URLs comma-separated)',
      );
    }
    if ((opts.creds || opts.signingKey) && !opts.nats) {
      throw new UsageError('--creds and --signing-key are for networked mode: add --nats <url>');
    }
    if (opts.ui && (opts.embedded || opts.nats !== undefined)) {
      throw new UsageError(
        `--ui serves the web console through the private broker, not with ${opts.embedded ? '--embedded' : '--nats'}` +
          ': run `skein up --private --ui` (nats-server must be installed), or drop --ui',
      );
    }
    const mode = opts.embedded ? 'embedded' : opts.private ? 'private' : opts.nats ? 'networked' : undefined;
    const config = loadConfig({
      flags: {
        natsUrl: opts.nats,
        ...(opts.creds ? { natsCreds: resolve(opts.creds) } : {}),
        ...(opts.signingKey ? { signingKey: resolve(opts.signingKey) } : {}),
        dataDir: opts.data,
        workspace: opts.workspace,
        rootAgentId: opts.root as never,
        host: opts.host,
        logLevel: opts.logLevel,
        mode,
      },
    });
    checkDataDir(config.dataDir);
    const logger = createLogger({ level: config.logLevel });
    const signals = listenForStop((signal) => {
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    });
    let started = false;
    void signals.requested.then((signal) => {
      if (!started) logger.info({ signal }, 'stop asked while starting: draining once started (again: exit at once)');
    });
    const runtime = await startRuntime(config, logger);
    started = true;
    const { info } = runtime;
    const creds = join(config.dataDir, 'auth', 'operator.creds');
    process.stdout.write(upBanner(info, config.dataDir, info.natsUrl && existsSync(creds) ? creds : undefined));
    let consoleServer: ConsoleServer | undefined;
    if (opts.ui) {
      // Only a mode found at start (no nats-server on PATH) gets here: --embedded and --nats were refused above.
      if (runtime.auth && info.websocketUrl) consoleServer = await serveConsole(info, runtime.auth.authority, logger);
      else process.stderr.write(`skein up --ui: ${needsBroker(info)}\n`);
    }
    const signal = await signals.requested;
    logger.info({ signal }, 'draining');
    try {
      // The console first: it revokes its browser credentials on the broker that the runtime then stops.
      await consoleServer?.close();
      await runtime.stop();
      logger.info('stopped');
    } catch (err) {
      logger.error({ err }, 'stop failed');
      process.exitCode = 1;
    }
    return 0;
  });
  // Anything left (a socket linger, a timer) must not keep a stopped runtime alive.
  process.exit(process.exitCode ?? 0);
}

/** The data dir, or the nearest part of its path that exists, must be a directory: else name the file in the way. */
function checkDataDir(dataDir: string): void {
  for (let path = resolve(dataDir); ; path = dirname(path)) {
    const stat = statOrNothing(path);
    if (stat === undefined) {
      if (dirname(path) === path) return;
      continue;
    }
    if (stat.isDirectory()) return;
    throw new UsageError(
      path === resolve(dataDir)
        ? `data dir '${dataDir}' is a file, not a directory: pass --data <dir> (created if missing), ` +
            'or move the file away'
        : `data dir '${dataDir}' cannot be created: '${path}' is a file, not a directory; pass --data <dir> elsewhere`,
    );
  }
}

/** A path's stat, or undefined when it (or a parent, ENOTDIR) is missing. */
function statOrNothing(path: string): ReturnType<typeof statSync> {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}
