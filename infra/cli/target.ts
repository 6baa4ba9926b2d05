/**
 * @module
 * Where a client command finds its runtime: --nats, SKEIN_NATS_URL, or the
 * data dir's runtime.json (config file and env apply, as for `skein up`).
 * With no data dir or workspace set anywhere, the nearest directory at or
 * above the current one that a runtime serves is the workspace, so commands
 * work from a subdirectory of the project.
 */
import { loadConfig, type LoadedConfig } from '../kernel/config.ts';
import { findServedWorkspace } from '../kernel/data-dir.ts';
import type { ClientTarget } from '../transport/client.ts';

export function clientTarget(opts: { nats?: string; data?: string }): ClientTarget & { config: LoadedConfig } {
  let config = loadConfig({ flags: { natsUrl: opts.nats, dataDir: opts.data } });
  if (config.explicit.dataDir === false && config.explicit.workspace === false) {
    const served = findServedWorkspace(process.cwd());
    if (served !== undefined && served !== config.workspace) {
      config = loadConfig({ cwd: served, flags: { natsUrl: opts.nats, workspace: served } });
    }
  }
  return { natsUrl: config.natsUrl, dataDir: config.dataDir, config };
}
