/**
 * @module
 * The policy layers a decision merges: the global file, the project file (`.skein/policy.json`) and each
 * agent's layer given at spawn or by `policy.set`. An agent's chain is its own stack (global → project →
 * every ancestor's layer → its own) and, for escalation, each ancestor's stack. Writing the global or project
 * layer rewrites its file atomically.
 */
import { Policy, type PolicyLayerName } from '../../schemas/policy.ts';
import type { LearnedRules } from '../../schemas/permission.ts';
import type { PolicyChain } from '../../machines/permission/permission.ts';
import { addRules, mergePolicies, type MergedPolicy, type PolicyLayer } from '../../machines/permission/policy.ts';
import { globalPolicyPath, projectPolicyPath, writePolicyFile } from './policy-files.ts';

/** Chains kept at most (one per live agent and lineage); past it the cache starts again. */
const MAX_CHAINS = 4_096;

export class PolicyLayers {
  #global: Policy | undefined;
  #project: Policy | undefined;
  readonly #agents = new Map<string, Policy>();
  /**
   * Chains built since the last change of any layer, by agent and lineage: a decision reads its chain on every
   * tool call, and a chain built again is a new object, so every pattern of it was compiled again
   * (`compilePolicy` caches by identity): ~2% of an exec's CPU with 8 agents at once. Layers are replaced,
   * never changed in place, so a change of any of them is seen here.
   */
  readonly #chains = new Map<string, PolicyChain>();

  constructor(files: PolicyLayer[]) {
    for (const l of files) {
      if (l.name === 'global') this.#global = l.policy as Policy;
      if (l.name === 'project') this.#project = l.policy as Policy;
    }
  }

  /** Sets an agent's layer (narrows only: decisions also take every ancestor's). */
  setAgent(agentId: string, policy: Policy): void {
    this.#agents.set(agentId, policy);
    this.#chains.clear();
  }

  /** An agent's own layer, if it has one. */
  agent(agentId: string): Policy | undefined {
    return this.#agents.get(agentId);
  }

  /** The chain for an agent, given its ancestors (parent first, root last). */
  chainFor(agentId: string, ancestors: readonly string[]): PolicyChain {
    const key = `${agentId}/${ancestors.join('/')}`;
    const known = this.#chains.get(key);
    if (known) return known;
    const lineage = [...ancestors].reverse(); // root first
    const stack = (upTo: string[]): MergedPolicy =>
      mergePolicies([
        ...(this.#global ? [{ name: 'global', policy: this.#global }] : []),
        ...(this.#project ? [{ name: 'project', policy: this.#project }] : []),
        ...upTo.flatMap((id) => {
          const p = this.#agents.get(id);
          return p ? [{ name: `agent:${id}`, policy: p }] : [];
        }),
      ]);
    const chain = ancestors.map((_, i) => stack(lineage.slice(0, lineage.length - i)));
    const built = { own: stack([...lineage, agentId]), ancestors: chain };
    if (this.#chains.size >= MAX_CHAINS) this.#chains.clear();
    this.#chains.set(key, built);
    return built;
  }

  /**
   * Takes what a policy file now holds (undefined: the file is gone) as its layer; returns the layer as
   * `policy.changed` records it, or undefined when that is what the layer already was (e.g. skein's own write).
   */
  applyFile(layer: Exclude<PolicyLayerName, 'agent'>, policy: Policy | undefined): Policy | undefined {
    const current = layer === 'global' ? this.#global : this.#project;
    const next = policy ?? Policy.parse({});
    if (JSON.stringify(current ?? Policy.parse({})) === JSON.stringify(next)) return undefined;
    if (layer === 'global') this.#global = policy;
    else this.#project = policy;
    this.#chains.clear();
    return next;
  }

  /** Takes `policy` as the project layer (after learned rules were written to its file). */
  setProject(policy: Policy): void {
    this.#project = policy;
    this.#chains.clear();
  }

  /** Rewrites the global or project file with `policy` and takes it as the layer; returns the file's path. */
  async writeFileLayer(
    layer: Exclude<PolicyLayerName, 'agent'>,
    policy: Policy,
    where: { workspace: string; globalPath?: string | undefined },
  ): Promise<string> {
    const path = layer === 'global' ? (where.globalPath ?? globalPolicyPath()) : projectPolicyPath(where.workspace);
    // The normalized policy back in the file's JSON shape (no undefined defaults).
    const written = await writePolicyFile(
      path,
      JSON.parse(JSON.stringify(policy)),
      layer === 'project' ? where.workspace : undefined,
    );
    if (layer === 'global') this.#global = written;
    else this.#project = written;
    this.#chains.clear();
    return path;
  }
}

/** How many rules a policy holds, over every tool. */
export function ruleCount(policy: Policy): number {
  return Object.values(policy.tools).reduce(
    (n, t) => n + (t ? t.always_allow.length + t.always_deny.length + t.always_confirm.length : 0),
    0,
  );
}

/** `policy` with `learned`'s patterns added to its list (a new layer: layers are never changed in place). */
export function withLearned(policy: Policy | undefined, learned: LearnedRules): Policy {
  return addRules(policy ?? { default: undefined, tools: {} }, learned.tool, learned.list, learned.patterns);
}
