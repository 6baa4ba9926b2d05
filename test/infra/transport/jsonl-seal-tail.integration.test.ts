/**
 * The sealed embedded log's last line, damaged by a power loss mid-batch (only some pages of an unsynced
 * write reach the disk) but ending with a newline: it was never acknowledged, so open cuts and reports it
 * instead of refusing to start; a line at or before the seal's last sequence is still refused, and a last line
 * that is whole JSON without the host's seal is cut, never taken for a fact.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredFact } from '../../../schemas/index.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { newChildFact } from '../../support/agent-facts.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';

const fact = newChildFact;

const CUT = 'unsealed last line of the event log cut off (never acknowledged: a crash mid-write, or not the host)';

describe('sealed jsonl log: a damaged last line that ends with a newline', () => {
  const dirs: Array<ReturnType<typeof tempDir>> = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.dispose();
  });

  /** A stopped sealed log of three facts; `events` is its file, `next` the line a fourth fact would be. */
  async function sealedLog() {
    const dir = tempDir('skein-seal-tail-');
    dirs.push(dir);
    const options = { dir: dir.path, sealDir: join(dir.path, 'auth') };
    const log = await JsonlLog.open(options);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const f = fact();
      ids.push(f.id);
      await log.append({ stream: 'events', subject: `skein.evt.main.agent.${f.id}`, fact: f });
    }
    await log.close();
    const events = join(dir.path, 'events.jsonl');
    const all = readFileSync(events, 'utf8').trim().split('\n');
    // The fourth line stands for the unacknowledged one; the seal is set back to the third (as if it lagged).
    writeFileSync(events, `${all.slice(0, 3).join('\n')}\n`);
    const third = JSON.parse(all[2]!) as { seq: number; mac: string };
    const sealPath = join(dir.path, 'auth', 'log-seal.json');
    const seal = JSON.parse(readFileSync(sealPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(sealPath, JSON.stringify({ ...seal, lastSeq: third.seq, lastMac: third.mac }));
    return { options, events, next: all[3]!, ids: ids.slice(0, 3), sealPath };
  }

  async function reopen(options: { dir: string; sealDir: string }) {
    const { logger, lines } = memoryLogger('warn');
    const log = await JsonlLog.open({ ...options, log: logger });
    const facts: StoredFact[] = [];
    for await (const f of log.read()) facts.push(f);
    await log.close();
    return { ids: facts.map((f) => f.id), messages: lines.map((l) => l.msg) };
  }

  it.each([
    ['half a line', (next: string) => `${next.slice(0, 120)}\n`],
    ['a run of NULs, then the end of the line', (next: string) => `${'\0'.repeat(200)}${next.slice(-90)}\n`],
    ['a whole line whose mac is cut off', (next: string) => `${next.slice(0, -20)}\n`],
    ['a whole line, valid JSON, without its mac', (next: string) => `${next.replace(/,"mac":"[0-9a-f]+"\}$/, '}')}\n`],
    [
      'a whole line, valid JSON, with a wrong mac',
      (next: string) => `${next.replace(/[0-9a-f]{64}"\}$/, `${'0'.repeat(64)}"}`)}\n`,
    ],
  ])('cuts and reports %s, keeps every sealed fact, and opens again', async (_name, damage) => {
    const { options, events, next, ids } = await sealedLog();
    const sealed = readFileSync(events, 'utf8');
    appendFileSync(events, damage(next));
    const first = await reopen(options);
    expect(first).toEqual({ ids, messages: [CUT] });
    expect(readFileSync(events, 'utf8')).toBe(sealed);
    expect(await reopen(options)).toEqual({ ids, messages: [] });
  });

  it('still refuses a damaged line at or before the sealed sequence, or one followed by another line', async () => {
    const { options, events, next } = await sealedLog();
    const all = readFileSync(events, 'utf8').trim().split('\n');
    writeFileSync(events, `${[...all.slice(0, 2), all[2]!.slice(0, 120)].join('\n')}\n`);
    await expect(JsonlLog.open(options)).rejects.toThrow(
      /events\.jsonl is not the one this host sealed: line 3 is not a fact \(.*\): it was altered/,
    );
    writeFileSync(events, `${[...all.slice(0, 2), all[2]!.replace('"label":"a', '"label":"z')].join('\n')}\n`);
    await expect(JsonlLog.open(options)).rejects.toThrow(/line 3 \(sequence 3\) does not carry the seal/);
    writeFileSync(events, `${[...all.slice(0, 2), all[2]!.slice(0, 100), next].join('\n')}\n`);
    await expect(JsonlLog.open(options)).rejects.toThrow(/line 3 is not a fact/);
  });
});
