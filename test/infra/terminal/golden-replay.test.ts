/**
 * The golden demo log replays to the digest it had before the terminal
 * machine became the live one: the terminal aggregate's state shape (and every
 * other aggregate kind's) is unchanged for logs written before (their
 * `terminal.command.started` facts carry no `timeoutMs`).
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replayLog } from '../../../infra/kernel/replay.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { tempDir } from '../../support/temp-dir.ts';

// Moved only by the agent context's `finishedAt` (the worker-grace deadline) and by rule-settled requests keeping
// no permission aggregate; test/infra/kernel/golden-replay.test.ts pins each kind's digest, the terminal kind's
// unchanged.
const GOLDEN_DIGEST = '05996a62a0e6c1cc2cf7e41b322e26ef23806196b5d9a319f8641cde7636b25e';

it('replays the golden demo log to its recorded digest, terminals closed', async () => {
  const dir = tempDir('skein-golden-');
  try {
    copyFileSync(join(import.meta.dirname, '../../fixtures/golden/demo-events.jsonl'), join(dir.path, 'events.jsonl'));
    const log = await JsonlLog.open({ dir: dir.path });
    const result = await replayLog(log, AGGREGATES);
    await log.close();
    expect(result.facts).toBe(47);
    expect(result.digest).toBe(GOLDEN_DIGEST);
    const terminals = Object.values(result.fold.states()).filter((s) => s.aggregate === 'terminal');
    expect(terminals.map((t) => t.value)).toEqual(['closed', 'closed']);
  } finally {
    dir.dispose();
  }
});
