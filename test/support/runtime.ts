/**
 * @module
 * Starts a real runtime in-process for integration tests, in embedded mode or
 * against a private nats-server, with a temporary data dir and workspace.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigInput } from '../../schemas/index.ts';
import { loadConfig } from '../../infra/kernel/config.ts';
import { startRuntime, type Runtime, type RuntimeSeams } from '../../infra/kernel/runtime.ts';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { memoryLogger } from './log-sink.ts';
import { tempDir } from './temp-dir.ts';
import { startTestNats } from './nats-server.ts';

export type TestRuntime = Runtime & {
  dir: string;
  workspace: string;
  /** The runtime's log lines at `logLevel` (none at the default, silent). */
  logs: Array<Record<string, unknown>>;
  call(type: string, data?: unknown, options?: { agentId?: string; id?: string; timeoutMs?: number }): Promise<Reply>;
  dispose(): Promise<void>;
};

/**
 * The project policy tests get unless they give one: tools allowed, so that tests of other domains do not wait for a
 * human.
 */
export const ALLOW_ALL_POLICY = { default: 'allow' };

export async function startTestRuntime(
  options: {
    mode: 'embedded' | 'networked' | 'private';
    natsUrl?: string;
    flags?: Partial<ConfigInput>;
    dir?: string;
    /** Written to <workspace>/.skein/policy.json; null writes none (the built-in default, confirm, applies). */
    policy?: unknown;
    /**
     * `domains.terminal.sandbox` unless `flags` set it: tests of other domains run unsandboxed (said explicitly,
     * since the runtime sandboxes by default when bwrap is installed); 'auto' leaves the runtime's default.
     */
    sandbox?: boolean | 'auto';
    /** The host's JSON thread worker script (a dying one, for the tests of its death). */
    jsonWorker?: URL;
    /** The event log as the host sees it (`RuntimeSeams.wrapLog`). */
    wrapLog?: RuntimeSeams['wrapLog'];
    /** Level of the lines kept in `logs`. */
    logLevel?: 'debug' | 'info' | 'warn' | 'silent';
  } = { mode: 'embedded' },
): Promise<TestRuntime> {
  const temp = options.dir ? undefined : tempDir('skein-rt-');
  const dir = options.dir ?? temp!.path;
  const workspace = join(dir, 'ws');
  mkdirSync(join(workspace, '.skein'), { recursive: true });
  const policy = options.policy === undefined ? ALLOW_ALL_POLICY : options.policy;
  if (policy !== null) writeFileSync(join(workspace, '.skein', 'policy.json'), JSON.stringify(policy));
  const config = loadConfig({
    cwd: dir,
    env: {},
    flags: {
      mode: options.mode,
      dataDir: join(dir, 'data'),
      workspace,
      logLevel: 'silent',
      ...(options.natsUrl ? { natsUrl: options.natsUrl } : {}),
      ...options.flags,
      // Never the developer's ~/.config/skein/policy.json.
      domains: {
        ...(options.flags?.domains ?? {}),
        terminal: {
          ...(options.sandbox === 'auto' ? {} : { sandbox: options.sandbox ?? false }),
          ...((options.flags?.domains as Record<string, object> | undefined)?.['terminal'] ?? {}),
        },
        permission: {
          globalPolicy: join(dir, 'no-global-policy.json'),
          ...((options.flags?.domains as Record<string, object> | undefined)?.['permission'] ?? {}),
        },
      },
    },
  });
  const { logger, lines } = memoryLogger(options.logLevel ?? 'silent');
  const runtime = await startRuntime(config, logger, { jsonWorker: options.jsonWorker, wrapLog: options.wrapLog });
  return {
    ...runtime,
    dir,
    workspace: realpathSync(workspace),
    logs: lines,
    call: (type, data = {}, o = {}) =>
      call(runtime.bus, o.agentId ?? 'main', type, data, {
        timeoutMs: o.timeoutMs ?? 15_000,
        ...(o.id ? { id: o.id } : {}),
      }),
    async dispose() {
      await runtime.stop();
      temp?.dispose();
    },
  };
}

/** A private nats-server and a networked runtime on it; `dispose` stops both. */
export async function startNetworkedRuntime(
  options: Omit<Parameters<typeof startTestRuntime>[0], 'mode' | 'natsUrl'> = {},
): Promise<TestRuntime> {
  const nats = await startTestNats();
  try {
    const rt = await startTestRuntime({ ...options, mode: 'networked', natsUrl: nats.url });
    return {
      ...rt,
      async dispose() {
        await rt.dispose();
        await nats.dispose();
      },
    };
  } catch (err) {
    await nats.dispose();
    throw err;
  }
}
