/**
 * @module
 * Where a client command finds its runtime: --nats, SKEIN_NATS_URL, or the
 * data dir's runtime.json (config file and env apply, as for `skein up`).
 */
import { loadConfig, type LoadedConfig } from '../kernel/config.ts';
import type { ClientTarget } from '../transport/client.ts';

export function clientTarget(opts: { nats?: string; data?: string }): ClientTarget & { config: LoadedConfig } {
  const config = loadConfig({ flags: { natsUrl: opts.nats, dataDir: opts.data } });
  return { natsUrl: config.natsUrl, dataDir: config.dataDir, config };
}
