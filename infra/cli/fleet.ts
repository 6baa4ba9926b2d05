/**
 * @module
 * `skein fleet run <plan.json|yaml>`: runs a plan's scripted sub-agents in
 * parallel under the root of a running runtime (or, with --embedded, of a
 * fresh in-process embedded runtime in a temporary data dir), waits, prints
 * each agent's result and the root's review.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { FleetPlan, type FleetPlan as Plan } from '../../schemas/index.ts';
import type { FileReview } from '../../schemas/review.ts';
import { callAllPages } from '../transport/client.ts';
import { formatIssues } from '../transport/codec.ts';
import { formatFleet, runFleet } from '../agent/fleet.ts';
import { action, EXIT, UsageError } from './output.ts';
import { withClient, type RemoteOptions } from './remote.ts';

export function loadPlan(path: string): Plan {
  if (!existsSync(path)) throw new UsageError(`plan '${path}' does not exist`);
  const text = readFileSync(path, 'utf8');
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `plan '${path}' is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'}: ${(err as Error).message}`,
    );
  }
  const parsed = FleetPlan.safeParse(raw);
  if (!parsed.success) throw new UsageError(`plan '${path}' is not a fleet plan: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

export async function fleetRun(planPath: string, opts: RemoteOptions & { diff?: boolean }): Promise<void> {
  await action(async () => {
    const plan = loadPlan(planPath);
    return withClient(opts, async (client, root) => {
      const outcome = await runFleet(plan, { bus: client.bus, root });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(outcome, null, 2)}\n`);
      } else {
        process.stdout.write(`${formatFleet(outcome)}\n`);
        const review = await callAllPages(client.bus, root, 'review.list', {}, { timeoutMs: 30_000 });
        if (review.ok) {
          const files = review['files'] as FileReview[];
          process.stdout.write(`\nreview of ${root} (${files.length} file(s)):\n`);
          for (const f of files) {
            process.stdout.write(`  ${f.status.padEnd(8)} ${f.path} by ${f.agents.join(', ')}\n`);
            if (opts.diff) process.stdout.write(`${f.diff}\n`);
          }
        }
      }
      const failed = outcome.agents.some(function bad(a): boolean {
        return a.status !== 'completed' || a.children.some(bad);
      });
      return failed ? EXIT.failed : EXIT.ok;
    });
  });
}
