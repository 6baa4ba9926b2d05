/**
 * @module
 * Reply helpers for integration tests.
 */
/** The fields of an `{ ok: true }` reply; throws with the whole reply when it is a refusal. */
export function ok(reply: { ok: boolean }): Record<string, any> {
  if (!reply.ok) throw new Error(JSON.stringify(reply));
  return reply as unknown as Record<string, any>;
}
