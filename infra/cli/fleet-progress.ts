/**
 * @module
 * Live progress of `skein fleet run`, one line per thing that happens, as it happens: each agent the run
 * spawned, each step starting and finishing (a failed step with the tail of its output), and the facts of
 * the fleet's agents that explain a wait or an end (a permission request and its answer, the agent completed,
 * failed or cancelled). One instance per run; it only formats and writes.
 */
import type { Fact } from '../../schemas/index.ts';
import type { StepOutcome } from '../agent/fleet.ts';

/** Lines of a failed step's output shown: enough for an error and its context, never a whole log. */
export const TAIL_LINES = 20;

export class FleetProgress {
  readonly #write: (line: string) => void;
  readonly #now: () => number;
  readonly #started: number;
  readonly #agents = new Map<string, string>();
  /** Agents outside the run whose asks are shown (`watch`): the plan's answers are not theirs. */
  readonly #watched = new Set<string>();

  constructor(write: (line: string) => void, now: () => number = () => performance.now()) {
    this.#write = write;
    this.#now = now;
    this.#started = now();
  }

  /** Whether an agent belongs to this run (its facts are shown). */
  has(agentId: string): boolean {
    return this.#agents.has(agentId);
  }

  /**
   * Shows the asks of an agent outside the run that the run waits on: the root's own, to spawn the plan's
   * agents (a person answers those; the run's wait was silent until 8 December).
   */
  watch(agentId: string, label: string): void {
    this.#agents.set(agentId, label);
    this.#watched.add(agentId);
  }

  agent(a: { agentId: string; label: string; parentId: string }): void {
    this.#agents.set(a.agentId, a.label);
    this.#line(a.agentId, `spawned "${a.label}" under ${a.parentId}`);
  }

  stepStarted(agentId: string, step: string): void {
    this.#line(agentId, `→ ${step}`);
  }

  stepDone(agentId: string, s: StepOutcome): void {
    this.#line(agentId, `${s.ok ? '✓' : '✗'} ${s.step}: ${s.summary} (${Math.round(s.ms)} ms)`);
    if (s.ok) return;
    for (const line of failureTail(s)) this.#write(`      │ ${line}`);
  }

  /** A fact of any agent: shown when it is about one of this run's agents and explains a wait or an end. */
  fact(fact: Fact): void {
    const d = fact.data as Record<string, unknown>;
    const agentId = typeof d['agentId'] === 'string' ? d['agentId'] : undefined;
    if (!agentId || !this.#agents.has(agentId)) return;
    switch (fact.type) {
      case 'permission.requested':
        this.#line(
          agentId,
          `asks ${d['requestId']}: ${d['tool']} ${JSON.stringify(String(d['input']).slice(0, 120))} ` +
            `(${this.#watched.has(agentId) ? '' : "the plan's answers, or "}` +
            `\`skein approve ${d['requestId']}\` / \`skein deny ${d['requestId']}\`)`,
        );
        return;
      case 'permission.granted':
      case 'permission.denied':
        if (d['by'] === 'rule' || d['by'] === 'builtin') return; // decided at once: the step's line says it
        this.#line(
          agentId,
          `${d['requestId']} ${fact.type === 'permission.granted' ? 'granted' : 'denied'} by ${d['by']}`,
        );
        return;
      case 'agent.completed':
        this.#line(agentId, `"${this.#agents.get(agentId)}" completed`);
        return;
      case 'agent.failed':
        this.#line(agentId, `"${this.#agents.get(agentId)}" failed: ${String(d['error']).split('\n')[0]}`);
        return;
      case 'agent.cancelled':
        this.#line(agentId, `"${this.#agents.get(agentId)}" cancelled: ${d['reason']}`);
        return;
    }
  }

  #line(agentId: string, text: string): void {
    const t = ((this.#now() - this.#started) / 1000).toFixed(1);
    this.#write(`[+${t}s] ${agentId} ${text}`);
  }
}

/**
 * The last lines of a failed step's output (an exec's reply). A refused step has none: its summary is the
 * error message.
 */
export function failureTail(s: StepOutcome): string[] {
  const reply = s.reply;
  if (!reply?.ok || typeof reply['output'] !== 'string' || reply['output'].trim() === '') return [];
  const lines = reply['output'].replace(/\s+$/, '').split('\n');
  const shown = lines.slice(-TAIL_LINES);
  const earlier = lines.length - shown.length;
  const omitted = typeof reply['omittedBytes'] === 'number' ? reply['omittedBytes'] : 0;
  const notShown = [
    ...(earlier > 0 ? [`${earlier} earlier lines`] : []),
    ...(omitted > 0 ? [`${omitted} bytes from the middle`] : []),
  ];
  return [...(notShown.length > 0 ? [`… (${notShown.join(', ')} not shown)`] : []), ...shown];
}
