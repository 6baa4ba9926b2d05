/**
 * @module
 * The tests' own recount of `limits.maxRecordedBytesPerAgent`, written from the rule, not from the code: each
 * stored fact's bytes, plus the contents it made the review keep (`contentBytes`) and the fixed memory of a new
 * agent or edit, charged to its agent (for shell records and other logs' updates, the `by` agent) and every
 * ancestor of it below the root, the parents read from the agent.spawned facts.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LASTING_STATE_BYTES } from '../../machines/agent/recorded-bytes.ts';

type RawFact = { type: string; agentId: string; data: Record<string, unknown> };

export class Recount {
  readonly #parent = new Map<string, string | null>();
  readonly #used = new Map<string, number>();

  /** Charges one stored fact that takes `bytes` in its log. */
  add(fact: RawFact, bytes: number): void {
    if (fact.type === 'agent.spawned') {
      this.#parent.set(String(fact.data['agentId']), fact.data['parentId'] as string | null);
    }
    const kept = Number(fact.data['contentBytes'] ?? 0) + (LASTING_STATE_BYTES[fact.type] ?? 0);
    const byPays = fact.type === 'action-log.shell.recorded' || fact.type === 'action-log.files.updated';
    const payer = byPays ? String(fact.data['by'] ?? fact.agentId) : fact.agentId;
    for (let a: string | null | undefined = payer; a && this.#parent.get(a); a = this.#parent.get(a)) {
      this.#used.set(a, (this.#used.get(a) ?? 0) + bytes + kept);
    }
  }

  /** What each of `agents` was charged (0 for the root and unknown agents). */
  of(agents: readonly string[]): Record<string, number> {
    return Object.fromEntries(agents.map((id) => [id, this.#used.get(id) ?? 0]));
  }
}

/** The recount of an embedded log file: each line's UTF-8 bytes and its newline. */
export function recountJsonl(path: string, agents: readonly string[]): Record<string, number> {
  const recount = new Recount();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line) recount.add((JSON.parse(line) as { fact: RawFact }).fact, Buffer.byteLength(line) + 1);
  }
  return recount.of(agents);
}

/** Bytes of the files under `path`, recursively (0 when it does not exist). */
export function dirBytes(path: string): number {
  if (!existsSync(path)) return 0;
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  return total;
}
