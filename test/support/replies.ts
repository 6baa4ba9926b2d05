/**
 * @module
 * Reply helpers for integration tests.
 */
/** The fields of an `{ ok: true }` reply; throws with the whole reply when it is a refusal. */
export function ok(reply: { ok: boolean }): Record<string, any> {
  if (!reply.ok) throw new Error(JSON.stringify(reply));
  return reply as unknown as Record<string, any>;
}

/** Something that sends a command as an agent (a test runtime's `call`). */
type Caller = { call(type: string, data?: unknown, options?: { agentId?: string }): Promise<{ ok: boolean }> };

/** The id of the first permission request pending for `agentId` (the root when missing), polled until there is one. */
export async function firstPending(rt: Caller, agentId?: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = ok(await rt.call('permission.pending', {}, agentId ? { agentId } : {}));
    const requestId = (pending['requests'] as Array<{ requestId: string }>)[0]?.requestId;
    if (requestId) return requestId;
    if (Date.now() > deadline) throw new Error(`no permission request pending for ${agentId ?? 'the root'}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
