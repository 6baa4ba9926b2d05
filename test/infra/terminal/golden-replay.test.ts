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

const GOLDEN_DIGEST = '84da63c8867cd4a450e73bcd867f6295011bce1cd9f0285a0e0843f0e2ce2c2f';

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
