/**
 * @module
 * `skein approvals` (pending permission requests, then live ones; `--watch` answers them as they come,
 * approvals-watch.ts),
 * `skein approve <requestId> [--always]`, `skein deny <requestId> [--always]`.
 * The human answers as the root agent (or --agent, an ancestor of the requester).
 */
import { reveal } from '../../machines/common/reveal.ts';
import { subjectPatterns } from '../../schemas/index.ts';
import type { PermissionRequestedData } from '../../schemas/permission.ts';
import { call } from '../transport/client.ts';
import { decodeFact } from '../transport/codec.ts';
import { askDetail, watchApprovals } from './approvals-watch.ts';
import { action, EXIT } from './output.ts';
import { callAndPrint, withClient, type RemoteOptions } from './remote.ts';

/** One ask: who asks for what and why, then its detail as `--watch` shows it (what is approved is read first). */
function line(r: PermissionRequestedData): string {
  // As a JSON list: joined with ` | ` they read like a pipeline (and a sub-command may be one).
  const subs = r.subCommands && r.subCommands.length > 1 ? ` ${JSON.stringify(r.subCommands)}` : '';
  return [
    `${r.requestId}  ${r.agentId}  ${r.tool}: ${r.input}${subs}`,
    `    ${r.reason}`,
    ...askDetail(r, '    '),
  ].join('\n');
}

export async function approvals(opts: RemoteOptions & { once?: boolean; watch?: boolean }): Promise<void> {
  if (opts.watch && opts.once) {
    process.stderr.write(
      'skein approvals: --watch answers requests as they come and --once lists and exits; pick one\n',
    );
    process.exitCode = EXIT.usage;
    return;
  }
  await action(() =>
    withClient(opts, async (client, agentId) => {
      if (opts.watch) {
        const root = client.info?.rootAgentId ?? agentId;
        return watchApprovals(client, agentId, agentId === root);
      }
      const reply = await call(client.bus, agentId, 'permission.pending', {}, { timeoutMs: 10_000 });
      if (!reply.ok) {
        process.stderr.write(`skein: ${reply.error.message}\n`);
        return EXIT.failed;
      }
      const requests = reply['requests'] as PermissionRequestedData[];
      if (opts.json) process.stdout.write(`${JSON.stringify(requests, null, 2)}\n`);
      else
        process.stdout.write(
          requests.length ? `${reveal(requests.map(line).join('\n'), { controls: true })}\n` : 'no pending requests\n',
        );
      if (opts.once) return EXIT.ok;
      process.stderr.write(
        'watching for new requests (Ctrl-C to stop); answer with skein approve|deny <requestId>, ' +
          'or answer each as it comes with skein approvals --watch\n',
      );
      client.bus.subscribe(subjectPatterns.allEvents, (msg) => {
        try {
          const fact = decodeFact(msg.subject, msg.data);
          if (fact.type === 'permission.requested')
            process.stdout.write(`${reveal(line(fact.data as PermissionRequestedData), { controls: true })}\n`);
          if (fact.type === 'permission.granted' || fact.type === 'permission.denied') {
            const d = fact.data as { requestId: string; by: string };
            process.stdout.write(
              `${d.requestId}  ${fact.type === 'permission.granted' ? 'granted' : 'denied'} by ${d.by}\n`,
            );
          }
        } catch {
          // not a fact we can read
        }
      });
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      return EXIT.ok;
    }),
  );
}

export async function answer(
  requestId: string,
  allow: boolean,
  opts: RemoteOptions & { always?: boolean; pattern?: string },
): Promise<void> {
  const decision = `${allow ? 'allow' : 'deny'}_${opts.always ? 'always' : 'once'}`;
  await action(() =>
    callAndPrint(
      opts,
      'permission.decide',
      { requestId, decision, ...(opts.pattern ? { pattern: opts.pattern } : {}) },
      (r) => `${r['requestId']}: ${r['outcome']} by ${r['by']}${r['alreadyDecided'] ? ' (already decided)' : ''}`,
    ),
  );
}
