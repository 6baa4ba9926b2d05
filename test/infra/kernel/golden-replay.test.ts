/**
 * @module
 * The golden demo log, recorded before the domain redesign (issue 9), replays
 * to the same digest: the whole state, and each aggregate kind on its own (so
 * a change that alters one kind's state shape names which kind it was).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StoredFact } from '../../../schemas/index.ts';
import { canonicalJson } from '../../../machines/kernel/projection.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replay } from '../../../infra/kernel/replay.ts';

const GOLDEN = fileURLToPath(new URL('../../fixtures/golden/demo-events.jsonl', import.meta.url));
// The agent context gained `finishedAt` (the worker-grace deadline counts from it), so the whole digest and
// the agent kind's moved; then a request the rules settled alone keeps no permission aggregate
// (`permissionAggregateDef.completeAtBirth`: 9 of the 10 decisions here), so the permission kind's moved;
// every other kind is unchanged.
const DIGEST = '05996a62a0e6c1cc2cf7e41b322e26ef23806196b5d9a319f8641cde7636b25e';

/** Per aggregate kind: sha256 of that kind's states in canonical form. */
const KIND_DIGESTS: Record<string, string> = {
  'action-log': '3f5ac2b79188559dc51deec6a3efd77c0439cf86a69045248e347d17d38bb38c',
  agent: 'af264a4c13630d976376328f69b885210d548d53de216db8c5763a54a388ea49',
  edit: '71cc3db01319c7efd928ee3ad826a72ecbd4c7691b4d76f2d11d10ea953da492',
  file: 'a86606b350547954415b2347ea9dd9fed67d48ac5933166c1525fd046e41a40e',
  permission: 'bae0093598d0876c03bf4869db75c0ee8b81be575529fb8842e85e158be1ece6',
  terminal: '363118cb4c6eb9a5ab77a4aa050f079e0e84807d8c851900e9c8486c82f77c4e',
};

function goldenFacts(): StoredFact[] {
  return readFileSync(GOLDEN, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const { seq, subject, fact } = JSON.parse(line) as { seq: number; subject: string; fact: StoredFact };
      return { ...fact, seq, subject };
    });
}

async function digestsByKind(): Promise<{ digest: string; kinds: Record<string, string>; facts: number }> {
  const result = await replay(
    (async function* () {
      yield* goldenFacts();
    })(),
    AGGREGATES,
  );
  const byKind = new Map<string, Record<string, unknown>>();
  for (const [key, state] of Object.entries(result.fold.states())) {
    const kind = byKind.get(state.aggregate) ?? {};
    kind[key] = state;
    byKind.set(state.aggregate, kind);
  }
  const kinds: Record<string, string> = {};
  for (const [kind, states] of [...byKind].sort(([a], [b]) => a.localeCompare(b))) {
    kinds[kind] = createHash('sha256').update(canonicalJson(states)).digest('hex');
  }
  return { digest: result.digest, kinds, facts: result.facts };
}

describe('golden demo log', () => {
  it('replays every fact to the digest recorded before the redesign', async () => {
    const { digest, facts } = await digestsByKind();
    expect(facts).toBe(47);
    expect(digest).toBe(DIGEST);
  });

  it('replays each aggregate kind to its recorded digest', async () => {
    const { kinds } = await digestsByKind();
    expect(kinds).toEqual(KIND_DIGESTS);
  });
});
