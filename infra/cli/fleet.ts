/**
 * @module
 * `skein fleet run <plan.json|yaml>`: runs a plan's scripted sub-agents in
 * parallel under the root of a running runtime, printing progress on stderr
 * as it happens (agents, steps, failed steps' output tails, asks and their
 * answers, the facts of the fleet's agents), then each agent's result and the
 * root's review.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { FLEET_STEP_KINDS } from '../../schemas/fleet.ts';
import { FleetPlan, type FleetPlan as Plan } from '../../schemas/index.ts';
import type { FileReview } from '../../schemas/review.ts';
import { subjectPatterns } from '../../schemas/subjects.ts';
import { callAllPages } from '../transport/client.ts';
import { decodeFact, formatIssues } from '../transport/codec.ts';
import { formatFleet, runFleet } from '../agent/fleet.ts';
import { FleetProgress } from './fleet-progress.ts';
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
  if (!parsed.success) {
    // A step matches none of the union's shapes: zod's message alone does not say which shapes exist.
    const badStep = parsed.error.issues.some((i) => i.path.includes('steps'));
    const kinds = badStep
      ? `. A step is one object with one of: ${FLEET_STEP_KINDS.join(', ')} (e.g. \`- exec: npm test\`, ` +
        '`- write: { path: a.txt, content: "hi" }`); see README "Sub-agents, workers and fleets"'
      : '';
    throw new UsageError(`plan '${path}' is not a fleet plan: ${formatIssues(parsed.error)}${kinds}`);
  }
  return parsed.data;
}

/** `--timeout <ms>`: a positive whole number of milliseconds, or a usage error naming the flag and the value. */
export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(ms) || ms < 1) {
    throw new UsageError(`--timeout '${value}' is not a positive whole number of milliseconds; e.g. --timeout 600000`);
  }
  return ms;
}

/** `work`, or a failure once `ms` have passed (the fleet's agents keep running; only the CLI stops waiting). */
async function within<T>(ms: number | undefined, work: Promise<T>): Promise<T> {
  if (ms === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `fleet run did not finish within ${ms} ms (--timeout); its agents may still be running: ` +
              'see `skein agents`, or raise --timeout',
          ),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function fleetRun(
  planPath: string,
  opts: RemoteOptions & { diff?: boolean; timeout?: string },
): Promise<void> {
  await action(async () => {
    const timeoutMs = parseTimeout(opts.timeout);
    const plan = loadPlan(planPath);
    return withClient(opts, async (client, root) => {
      // Progress goes to stderr: stdout stays the report (or --json) that scripts read.
      const progress = new FleetProgress((line) => process.stderr.write(`${line}\n`));
      progress.watch(root, 'root');
      const facts = client.bus.subscribe(subjectPatterns.allEvents, (msg) => {
        try {
          progress.fact(decodeFact(msg.subject, msg.data));
        } catch {
          // Not a fact this CLI's catalogue knows: progress is best effort.
        }
      });
      const outcome = await within(
        timeoutMs,
        runFleet(plan, {
          bus: client.bus,
          root,
          // No call waits past the run's own limit: an ask still open then is withdrawn, never run later.
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          onAgent: (a) => progress.agent(a),
          onStepStart: (agentId, step) => progress.stepStarted(agentId, step),
          onStep: (agentId, s) => progress.stepDone(agentId, s),
        }),
      ).finally(() => facts.unsubscribe());
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
