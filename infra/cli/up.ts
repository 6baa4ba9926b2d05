/**
 * @module
 * `skein up`: run the runtime until Ctrl-C (SIGINT), SIGTERM or a hangup, then drain and exit 0
 * (stop-signals.ts).
 */
import { resolve } from 'node:path';
import { loadConfig } from '../kernel/config.ts';
import { createLogger } from '../kernel/log.ts';
import { startRuntime } from '../kernel/runtime.ts';
import type { ConsoleServer } from '../ui/server.ts';
import { action, UsageError } from './output.ts';
import { listenForStop } from './stop-signals.ts';
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
    const where =
      info.mode === 'embedded'
        ? `embedded (no broker): log ${config.dataDir}/events.jsonl, clients connect through ${info.socketPath}`
        : `${info.mode === 'private' ? 'private broker' : 'networked'} at ${info.natsUrl}`;
    process.stdout.write(
      [
        `skein up: mode ${info.mode}, ${where}`,
        info.host
          ? `host '${info.host}', workspace ${info.workspace}; root agent '${info.rootAgentId}' served by ` +
            `${info.rootHost === info.host ? 'this host' : `host '${info.rootHost}'`}`
          : `root agent '${info.rootAgentId}', workspace ${info.workspace}`,
        `data dir ${config.dataDir} (log, socket, runtime.json; owner-only; --data or SKEIN_DATA to move it)`,
        info.natsUrl ? `watch: nats sub --server ${info.natsUrl} 'skein.evt.>'   or: skein tail` : 'watch: skein tail',
        `try:   skein agents --tree; skein call agent.spawn '{"label":"helper"}' ` +
          `(tool calls ask first: skein approvals, skein approve <id>)`,
        'stop:  Ctrl-C',
        '',
      ].join('\n'),
    );
    let consoleServer: ConsoleServer | undefined;
    if (opts.ui) {
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
