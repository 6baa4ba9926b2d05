/**
 * @module
 * The built-in deterministic driver: runs a fleet plan's scripted sub-agents
 * in parallel under one root, as their own agents (each command on the
 * agent's own subjects), answers their permission requests as the root per
 * the plan, and collects results and latencies. Used by `skein fleet run`,
 * `skein demo`, tests and the fleet benchmark.
 */
import { compileGuardedRegex } from '../../machines/permission/regex-backtracking.ts';
import { subjectPatterns, type FleetAgent, type FleetPlan, type FleetStep } from '../../schemas/index.ts';
import type { Bus } from '../transport/bus.ts';
import { call } from '../transport/client.ts';
import { decodeFact, type Reply } from '../transport/codec.ts';

export type StepOutcome = { step: string; ok: boolean; summary: string; ms: number; reply?: Reply };
export type AgentOutcome = {
  agentId: string;
  label: string;
  parentId: string;
  status: string;
  steps: StepOutcome[];
  children: AgentOutcome[];
};
export type FleetOutcome = {
  root: string;
  agents: AgentOutcome[];
  answered: Array<{ requestId: string; agentId: string; input: string; decision: string }>;
  /** Every call's round trip, in the order they ended. */
  latenciesMs: number[];
  /** The same round trips by command type (`terminal.exec`, `file.edit`, `agent.spawn`, …). */
  latenciesByType: Record<string, number[]>;
};

export type FleetOptions = {
  bus: Bus;
  root: string;
  /** Called for each finished step, for live progress. */
  onStep?: (agent: string, outcome: StepOutcome) => void;
  /** Called when a step starts (its name as in StepOutcome.step), for live progress. */
  onStepStart?: (agent: string, step: string) => void;
  /** Called for each agent this run spawned, as soon as it exists (facts of it can be followed from then on). */
  onAgent?: (agent: { agentId: string; label: string; parentId: string }) => void;
  timeoutMs?: number;
};

export async function runFleet(plan: FleetPlan, options: FleetOptions): Promise<FleetOutcome> {
  const { bus, root } = options;
  const latenciesMs: number[] = [];
  const latenciesByType: Record<string, number[]> = {};
  const answered: FleetOutcome['answered'] = [];
  const answers = plan.answers.map((a, i) => {
    // Matched against what sub-agents ask: a pattern that backtracks would let one of them stall the run.
    const re = compileGuardedRegex(a.match, 'i');
    if (typeof re === 'string') throw new Error(`answers[${i}].match ${JSON.stringify(a.match)}: ${re}`);
    return { re, decision: a.decision };
  });
  const seen = new Set<string>();
  /** Only requests of agents this run spawned are answered: the plan speaks for them, not for others. */
  const mine = new Set<string>();
  // The requests of the root's subtree that wait for an answer are copied to its ask subject: only those are read,
  // not every fact of the run (decoding each one took ~50 ms of the fleet bench's ~1.3 s of main-thread CPU).
  const sub = bus.subscribe(subjectPatterns.agentAsks(root), (msg) => {
    let fact: ReturnType<typeof decodeFact>;
    try {
      fact = decodeFact(msg.subject, msg.data);
    } catch {
      return;
    }
    if (fact.type !== 'permission.requested') return;
    const d = fact.data as { requestId: string; agentId: string; input: string };
    if (seen.has(d.requestId) || !mine.has(d.agentId)) return;
    const answer = answers.find((a) => a.re.test(d.input));
    if (!answer) return;
    seen.add(d.requestId);
    answered.push({ requestId: d.requestId, agentId: d.agentId, input: d.input, decision: answer.decision });
    void call(
      bus,
      root,
      'permission.decide',
      { requestId: d.requestId, decision: answer.decision },
      { timeoutMs: 10_000 },
    ).catch(() => undefined);
  });
  await bus.flush();
  const timeoutMs = options.timeoutMs ?? 120_000;

  const send = async (agentId: string, type: string, data: unknown): Promise<Reply> => {
    const t0 = performance.now();
    try {
      return await call(bus, agentId, type, data, { timeoutMs });
    } finally {
      const ms = performance.now() - t0;
      latenciesMs.push(ms);
      (latenciesByType[type] ??= []).push(ms);
    }
  };

  const runAgent = async (parentId: string, spec: FleetAgent): Promise<AgentOutcome> => {
    const spawned = await send(parentId, 'agent.spawn', {
      label: spec.label,
      ...(spec.agentId ? { agentId: spec.agentId } : {}),
      ...(spec.policy !== undefined ? { policy: spec.policy } : {}),
      ...(spec.workspace ? { workspace: spec.workspace } : {}),
    });
    if (!spawned.ok) {
      return {
        agentId: spec.agentId ?? '?',
        label: spec.label,
        parentId,
        status: 'not spawned',
        steps: [{ step: 'spawn', ok: false, summary: spawned.error.message, ms: 0 }],
        children: [],
      };
    }
    const agentId = String(spawned['agentId']);
    mine.add(agentId);
    options.onAgent?.({ agentId, label: spec.label, parentId });
    const outcome: AgentOutcome = { agentId, label: spec.label, parentId, status: 'running', steps: [], children: [] };
    let terminalId: string | undefined;
    let failed: string | undefined;
    for (const step of spec.steps) {
      options.onStepStart?.(agentId, stepName(step));
      const t0 = performance.now();
      const record = (name: string, ok: boolean, summary: string, reply?: Reply) => {
        const s: StepOutcome = { step: name, ok, summary, ms: performance.now() - t0, ...(reply ? { reply } : {}) };
        outcome.steps.push(s);
        options.onStep?.(agentId, s);
        if (!ok) failed ??= `${name}: ${summary}`;
      };
      if ('spawn' in step) {
        const child = await runAgent(agentId, step.spawn);
        outcome.children.push(child);
        record(stepName(step), child.status === 'completed', `${child.agentId} ${child.status}`);
        continue;
      }
      if ('exec' in step) {
        if (!terminalId) {
          const opened = await send(agentId, 'terminal.open', {});
          if (!opened.ok) {
            record(stepName(step), false, opened.error.message, opened);
            break;
          }
          terminalId = String(opened['terminalId']);
        }
        const r = await send(agentId, 'terminal.exec', {
          terminalId,
          command: step.exec,
          ...(step.timeoutMs ? { timeoutMs: step.timeoutMs } : {}),
        });
        // A command that fails fails its step (and the agent), unless the plan expects that exit code.
        const ok = r.ok && r['status'] === 'exited' && r['exitCode'] === (step.expectExit ?? 0);
        record(stepName(step), ok, r.ok ? `${r['status']} exit=${r['exitCode']}` : r.error.message, r);
        continue;
      }
      const [name, type, data] = describeFileStep(step);
      const r = await send(agentId, type, data);
      record(
        name,
        r.ok,
        r.ok ? String(r['message'] ?? `${r['totalLines'] ?? ''} lines`).split('\n')[0]! : r.error.message,
        r,
      );
    }
    if (terminalId) await send(agentId, 'terminal.close', { terminalId });
    const end = failed
      ? await send(agentId, 'agent.fail', { error: failed })
      : await send(agentId, 'agent.complete', { result: { steps: outcome.steps.length } });
    outcome.status = end.ok ? String(end['status']) : 'unknown';
    return outcome;
  };

  try {
    const agents = await Promise.all(plan.agents.map((a) => runAgent(root, a)));
    return { root, agents, answered, latenciesMs, latenciesByType };
  } finally {
    sub.unsubscribe();
  }
}

/** A step as progress and the report name it: `exec npm test`, `write a.txt`, `spawn api`. */
export function stepName(step: FleetStep): string {
  if ('spawn' in step) return `spawn ${step.spawn.label}`;
  if ('exec' in step) return `exec ${step.exec}`;
  return describeFileStep(step)[0];
}

function describeFileStep(
  step: Exclude<FleetStep, { exec: string } | { spawn: FleetAgent }>,
): [string, string, unknown] {
  if ('write' in step) return [`write ${step.write.path}`, 'file.write', step.write];
  if ('edit' in step) return [`edit ${step.edit.path}`, 'file.edit', step.edit];
  return [`read ${step.read.path}`, 'file.read', step.read];
}

/** A readable report: one line per step, indented per agent depth. */
export function formatFleet(outcome: FleetOutcome): string {
  const lines: string[] = [];
  const visit = (a: AgentOutcome, depth: number) => {
    const pad = '  '.repeat(depth);
    lines.push(`${pad}${a.agentId} "${a.label}" → ${a.status}`);
    for (const s of a.steps) lines.push(`${pad}  ${s.ok ? '✓' : '✗'} ${s.step}: ${s.summary}`);
    for (const c of a.children) visit(c, depth + 1);
  };
  for (const a of outcome.agents) visit(a, 0);
  for (const q of outcome.answered) lines.push(`root answered ${q.decision} to ${q.agentId}: ${q.input}`);
  return lines.join('\n');
}
