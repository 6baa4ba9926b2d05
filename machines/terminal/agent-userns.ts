/**
 * @module
 * Where a sandboxed terminal's user namespace goes (pure: the chain and the holder's script). The kernel counts
 * inotify instances and watches per user, charging a namespace's count to every namespace above it, each against
 * its own maximum (`user.max_inotify_*`). bubblewrap's namespace of a terminal starts below its agent's, each
 * agent's below its parent's (as the agent tree nests), and every agent's below one for all agents: an agent with
 * its sub-agents holds at most its share (`domains.terminal.sandboxInotifyShare`) however many terminals they
 * open, and all agents together at most theirs (`sandboxInotifyShareAllAgents`), which leaves the rest to the
 * runtime's own watchers and the user's programs. The operator's root agent gets one for its own terminals, beside
 * its sub-agents', as in the cgroups (agent-cgroups.ts).
 */
import type { SandboxKernelLimits } from './sandbox-sysctls.ts';

/** The key of the namespace of all agents (an agent id is [A-Za-z0-9_-] only). */
export const ALL_AGENTS = '*all';

/**
 * Agents' namespaces nest at most this deep; deeper sub-agents share the namespace of their ancestor at this
 * depth, whose bound then holds them together (stricter, never looser). The kernel allows 32 user namespaces in a
 * chain, and the runtime's own, all agents' and bubblewrap's two take some.
 */
export const MAX_AGENT_DEPTH = 8;

/**
 * The keys of the namespaces from the top (all agents) down to the one a sandbox of the last agent of `lineage`
 * (root first) starts below. The root agent's own terminals: its own namespace, not above its sub-agents'.
 */
export function usernsChain(lineage: readonly string[], rootAgentId: string, maxDepth = MAX_AGENT_DEPTH): string[] {
  const last = lineage.at(-1);
  if (last === undefined) throw new Error('a lineage names at least the agent itself');
  if (last === rootAgentId) return [ALL_AGENTS, rootAgentId];
  return [ALL_AGENTS, ...lineage.filter((agentId) => agentId !== rootAgentId).slice(0, maxDepth)];
}

/** What a holder prints once its namespace's maxima are set. */
export const HOLDER_READY = 'ready';

/**
 * The POSIX sh script a holder runs as root of its new user namespace (`unshare --map-root-user`): it writes the
 * namespace's inotify maxima, says `HOLDER_READY`, then waits for its standard input to end (`cat`), which the
 * runtime holds open: the holder goes with the runtime, even a SIGKILLed one.
 */
export function holderScript(limits: SandboxKernelLimits): string {
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${key} must be a whole number ≥ 1, got ${value}`);
  }
  return (
    `echo ${limits.inotifyInstances} > /proc/sys/user/max_inotify_instances && ` +
    `echo ${limits.inotifyWatches} > /proc/sys/user/max_inotify_watches && ` +
    `echo ${HOLDER_READY} && exec cat > /dev/null`
  );
}
