/**
 * @module
 * What `skein up` prints once the runtime serves: the mode, where its data is, and commands that work as
 * printed (a `nats sub` on a broker with identities needs the operator's creds, else it is refused).
 */
import type { RuntimeInfo } from '../kernel/runtime.ts';

/** `operatorCreds`: the CLI's creds file in the data dir, when it exists (private broker, `skein auth init`). */
export function upBanner(info: RuntimeInfo, dataDir: string, operatorCreds: string | undefined): string {
  const mode =
    info.mode === 'embedded'
      ? `embedded (no broker): log ${dataDir}/events.jsonl, clients connect through ${info.socketPath}`
      : `${info.mode}, ${info.mode === 'private' ? 'private broker' : 'broker'} at ${info.natsUrl}`;
  const creds = operatorCreds ? ` --creds ${operatorCreds}` : '';
  return [
    `skein up: mode ${mode}`,
    info.host
      ? `host '${info.host}', workspace ${info.workspace}; root agent '${info.rootAgentId}' served by ` +
        `${info.rootHost === info.host ? 'this host' : `host '${info.rootHost}'`}`
      : `root agent '${info.rootAgentId}', workspace ${info.workspace}`,
    `data dir ${dataDir} (log, socket, runtime.json; owner-only; --data or SKEIN_DATA to move it)`,
    info.natsUrl
      ? `watch: nats sub --server ${info.natsUrl}${creds} 'skein.evt.>'   or: skein tail`
      : 'watch: skein tail',
    `try:   skein agents --tree; skein call agent.spawn '{"label":"helper"}' ` +
      `(tool calls ask first: skein approvals, skein approve <id>)`,
    'stop:  Ctrl-C',
    '',
  ].join('\n');
}
