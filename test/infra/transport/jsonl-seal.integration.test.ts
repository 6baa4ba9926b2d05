/**
 * The seal of the embedded audit log: a runtime restarted on a log that
 * holds a fact the host did not write, or that was altered, shortened or
 * removed while it was stopped, refuses to start and says what changed and
 * how to recover; a clean restart, and a torn tail left by a crash, start.
 */
import { appendFileSync, cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('the embedded log seal', () => {
  const temp = tempDir('skein-seal-');
  const original = join(temp.path, 'original');
  let copies = 0;

  /**
   * A copy of a stopped runtime's dir (`from`, the original by default), changed by `change(dataDir)`; resolves
   * to start's error or 'started'. `spawn` adds a fact before the stop.
   */
  async function restartAfter(
    change: (data: string, events: string) => void,
    options: { from?: string; spawn?: string } = {},
  ): Promise<string> {
    const dir = join(temp.path, `copy-${++copies}`);
    cpSync(options.from ?? original, dir, { recursive: true });
    change(join(dir, 'data'), join(dir, 'data', 'events.jsonl'));
    try {
      const rt = await startTestRuntime({ mode: 'embedded', dir });
      ok(await rt.call('agent.get', {}));
      if (options.spawn) ok(await rt.call('agent.spawn', { label: options.spawn, agentId: options.spawn }));
      await rt.stop();
      return 'started';
    } catch (err) {
      return (err as Error).message;
    }
  }

  const lines = (events: string) => readFileSync(events, 'utf8').trim().split('\n');
  const write = (events: string, all: string[]) => writeFileSync(events, `${all.join('\n')}\n`);
  /** `line` as another writer would put it: no seal, and its keys in another order. */
  const unsealedReordered = (line: string) => {
    const { seq, subject, fact } = JSON.parse(line) as { seq: number; subject: string; fact: unknown };
    return JSON.stringify({ subject, seq, fact });
  };
  /** What an older skein left: the same lines without `mac`, and no key or seal yet. */
  const unseal = (data: string, events: string) => {
    write(
      events,
      lines(events).map((l) => l.replace(/,"mac":"[0-9a-f]{64}"\}$/, '}')),
    );
    rmSync(join(data, 'auth', 'log.key'));
    rmSync(join(data, 'auth', 'log-seal.json'));
  };

  beforeAll(async () => {
    const rt = await startTestRuntime({ mode: 'embedded', dir: original });
    ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
    ok(await rt.call('agent.spawn', { label: 'b', agentId: 'b' }));
    await rt.stop();
  }, 60_000);
  afterAll(() => temp.dispose());

  it('seals every line, keeps the key owner-only, and restarts on an untouched log', async () => {
    const events = join(original, 'data', 'events.jsonl');
    expect(lines(events).every((l) => /,"mac":"[0-9a-f]{64}"\}$/.test(l))).toBe(true);
    expect(statSync(join(original, 'data', 'auth', 'log.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(original, 'data', 'auth', 'log-seal.json')).mode & 0o777).toBe(0o600);
    expect(await restartAfter(() => undefined)).toBe('started');
  });

  it('refuses facts appended by someone else, with or without a copied seal; cuts one as the last line', async () => {
    const forge = (events: string, withMac: boolean, count = 2) => {
      const last = JSON.parse(lines(events).at(-1)!) as { seq: number; mac: string; fact: { id: string } };
      for (let i = 1; i <= count; i++) {
        const forged = {
          seq: last.seq + i,
          subject: 'skein.evt.main.agent.a',
          fact: { id: `forged-${i}`, type: 'agent.completed', at: new Date().toISOString(), agentId: 'main' },
          ...(withMac ? { mac: last.mac } : {}),
        };
        appendFileSync(events, `${JSON.stringify(forged)}\n`);
      }
      return last.seq + 1;
    };
    let seq = 0;
    const plain = await restartAfter((_d, events) => void (seq = forge(events, false)));
    expect(plain).toContain(`(sequence ${seq}) has no seal: it was altered, moved, or written by someone other`);
    expect(plain).toMatch(/^the embedded audit log .*events\.jsonl is not the one this host sealed: line \d+/);
    expect(plain).toMatch(/Restore .* from a backup .*skein replay --from-file .* --export <file>/);
    const copied = await restartAfter((_d, events) => void forge(events, true));
    expect(copied).toContain('does not carry the seal the host wrote');
    // A last line past the seal that does not verify may be a power loss mid-batch: cut, never a fact.
    for (const withMac of [false, true]) {
      let before = '';
      const cut = await restartAfter((_d, events) => {
        before = readFileSync(events, 'utf8');
        forge(events, withMac, 1);
      });
      expect(cut).toBe('started');
      expect(readFileSync(join(temp.path, `copy-${copies}`, 'data', 'events.jsonl'), 'utf8')).toBe(before);
    }
  });

  it('`skein replay` warns when the log holds a fact the host did not write', async () => {
    const dir = join(temp.path, `copy-${++copies}`);
    cpSync(original, dir, { recursive: true });
    const events = join(dir, 'data', 'events.jsonl');
    const clean = await runCli(['replay', '--data', join(dir, 'data')]);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).not.toContain('seal');
    const last = JSON.parse(lines(events).at(-1)!) as { seq: number };
    const fact = { id: 'forged', type: 'agent.completed', at: new Date().toISOString(), agentId: 'main' };
    const forged = { seq: last.seq + 1, subject: 'skein.evt.main.agent.a', fact: { ...fact, data: { agentId: 'a' } } };
    appendFileSync(events, `${JSON.stringify(forged)}\n`);
    for (const args of [
      ['--data', join(dir, 'data')],
      ['--from-file', events],
    ]) {
      const replayed = await runCli(['replay', ...args]);
      expect(replayed.stderr).toContain(
        `warning: ${events} does not match its seal in ${join(dir, 'data', 'auth')}: line ${last.seq + 1} ` +
          `(sequence ${last.seq + 1}) has no seal`,
      );
    }
  });

  it('refuses a line altered in the middle', async () => {
    const message = await restartAfter((_d, events) => {
      const all = lines(events);
      all[2] = all[2]!.replace('"label":"a"', '"label":"z"');
      expect(all[2]).toContain('"label":"z"');
      writeFileSync(events, `${all.join('\n')}\n`);
    });
    expect(message).toMatch(/line 3 \(sequence 3\) does not carry the seal the host wrote/);
  });

  it('refuses a log whose last facts were cut off, or that is gone', async () => {
    let kept = 0;
    const shorter = await restartAfter((_d, events) => {
      const all = lines(events);
      kept = all.length - 1;
      writeFileSync(events, `${all.slice(0, -1).join('\n')}\n`);
    });
    expect(shorter).toContain(`shorter: last sequence ${kept} (sealed up to ${kept + 1})`);
    const gone = await restartAfter((_d, events) => rmSync(events));
    expect(gone).toMatch(/the log is gone \(it held facts up to sequence \d+\)/);
    const emptied = await restartAfter((_d, events) => writeFileSync(events, ''));
    expect(emptied).toMatch(/shorter: last sequence 0/);
  });

  it('refuses when the key or the seal was removed', async () => {
    const noKey = await restartAfter((data) => rmSync(join(data, 'auth', 'log.key')));
    expect(noKey).toMatch(/log\.key is missing but line 1 is sealed/);
    const neither = await restartAfter((data) => {
      rmSync(join(data, 'auth', 'log.key'));
      rmSync(join(data, 'auth', 'log-seal.json'));
    });
    expect(neither).toMatch(/is missing but line 1 is sealed/);
  });

  it('holds the last sequence once the runtime has stopped (the seal file is written off the loop)', () => {
    const seal = JSON.parse(readFileSync(join(original, 'data', 'auth', 'log-seal.json'), 'utf8'));
    const last = JSON.parse(lines(join(original, 'data', 'events.jsonl')).at(-1)!);
    expect(seal).toMatchObject({ lastSeq: last.seq, lastMac: last.mac });
  });

  it('starts when the seal file lags the log (a crash before it was written), still refusing a cut log', async () => {
    // The seal as it stood two facts back: its MAC is the one that line carries.
    const lagging = (data: string, events: string) => {
      const at = JSON.parse(lines(events).at(-3)!);
      const seal = JSON.parse(readFileSync(join(data, 'auth', 'log-seal.json'), 'utf8'));
      writeFileSync(join(data, 'auth', 'log-seal.json'), JSON.stringify({ ...seal, lastSeq: at.seq, lastMac: at.mac }));
      return at.seq as number;
    };
    expect(await restartAfter(lagging)).toBe('started');
    const cut = await restartAfter((data, events) => {
      const sealedUpTo = lagging(data, events);
      const kept = lines(events).filter((l) => JSON.parse(l).seq < sealedUpTo);
      writeFileSync(events, `${kept.join('\n')}\n`);
    });
    expect(cut).toMatch(/shorter/);
  });

  it('starts after a crash left a torn last line (never acknowledged), with or without its newline', async () => {
    const started = await restartAfter((_d, events) => appendFileSync(events, '{"seq":99,"subject":"skein.ev'));
    expect(started).toBe('started');
    const half = await restartAfter((_d, events) => appendFileSync(events, `${lines(events).at(-1)!.slice(0, 90)}\n`));
    expect(half).toBe('started');
  });

  it('refuses a forged fact inserted in the middle, unsealed, its keys reordered, naming its line', async () => {
    let at = 0;
    const message = await restartAfter((_d, events) => {
      const all = lines(events);
      at = all.length;
      const last = JSON.parse(all.at(-1)!) as { seq: number; subject: string; fact: Record<string, unknown> };
      const fact = {
        ...last.fact,
        id: 'forged-1',
        type: 'agent.completed',
        data: { agentId: 'main', result: 'FORGED' },
      };
      const forged = JSON.stringify({ subject: 'skein.evt.main.agent.main', seq: last.seq, fact });
      write(events, [...all.slice(0, -1), forged, all.at(-1)!]);
    });
    expect(message).toContain(
      `line ${at} (sequence ${at}) has no seal: it was altered, moved, or written by someone other than the host`,
    );
    expect(message).toMatch(/Restore .* from a backup .*skein replay --from-file .* --export <file>/);
  });

  it('names the line replaced in the middle by an unsealed one, not the line after it', async () => {
    const message = await restartAfter((_d, events) => {
      const all = lines(events);
      all[2] = unsealedReordered(all[2]!);
      write(events, all);
    });
    expect(message).toContain('line 3 (sequence 3) has no seal');
  });

  describe('a log whose first lines an older skein wrote (before logs were sealed)', () => {
    let legacy = '';
    let legacyLines = 0;

    beforeAll(async () => {
      legacyLines = lines(join(original, 'data', 'events.jsonl')).length;
      // Sealed from the next line on, then one more fact, then stopped: kept as the base of the cases below.
      expect(
        await restartAfter(
          (data, events) => {
            unseal(data, events);
            legacy = join(temp.path, `copy-${copies}`);
          },
          { spawn: 'c' },
        ),
      ).toBe('started');
    }, 60_000);

    it('opens, seals only the lines after them, and opens again', async () => {
      const all = lines(join(legacy, 'data', 'events.jsonl'));
      const sealed = all.map((l) => /,"mac":"[0-9a-f]{64}"\}$/.test(l));
      expect(sealed.indexOf(true)).toBe(legacyLines);
      expect(sealed.slice(legacyLines).every(Boolean)).toBe(true);
      expect(await restartAfter(() => undefined, { from: legacy })).toBe('started');
    });

    it('opens with a line glued after a torn one among them (an older skein could leave it)', async () => {
      const glued = await restartAfter(
        (_d, events) => {
          const all = lines(events);
          write(events, [all[0]!, `${all[1]!.slice(0, 40)}${all[1]!}`, ...all.slice(2)]);
        },
        { from: legacy },
      );
      expect(glued).toBe('started');
    });

    it('refuses to seal one whose lines are out of order', async () => {
      const message = await restartAfter((data, events) => {
        unseal(data, events);
        const all = lines(events);
        write(events, [all[0]!, all[2]!, all[1]!, ...all.slice(3)]);
      });
      expect(message).toMatch(
        /events\.jsonl cannot be sealed \(an older skein wrote it\): line 3 \(sequence 2\) does not follow sequence 3/,
      );
    });

    it('refuses an unsealed line after the first sealed one, even with a sequence from before the seal', async () => {
      const message = await restartAfter(
        (_d, events) => {
          const all = lines(events);
          write(events, [...all.slice(0, legacyLines + 1), unsealedReordered(all[1]!), ...all.slice(legacyLines + 1)]);
        },
        { from: legacy },
      );
      expect(message).toContain(`line ${legacyLines + 2} (sequence 2) has no seal`);
    });

    it('refuses a repeated or out-of-order sequence among them, naming the line', async () => {
      const repeated = await restartAfter(
        (_d, events) => {
          const all = lines(events);
          write(events, [all[0]!, all[1]!, all[1]!, ...all.slice(2)]);
        },
        { from: legacy },
      );
      expect(repeated).toContain('line 3 (sequence 2) does not follow sequence 2 (line 2)');
      expect(repeated).toMatch(/Restore .* from a backup .*skein replay --from-file .* --export <file>/);
      const swapped = await restartAfter(
        (_d, events) => {
          const all = lines(events);
          write(events, [all[0]!, all[2]!, all[1]!, ...all.slice(3)]);
        },
        { from: legacy },
      );
      expect(swapped).toContain('line 3 (sequence 2) does not follow sequence 3 (line 2)');
    });

    it('refuses a line among them that is not a fact or has sequence 0', async () => {
      const garbage = await restartAfter(
        (_d, events) => {
          const all = lines(events);
          write(events, [all[0]!, 'not a fact', ...all.slice(1)]);
        },
        { from: legacy },
      );
      expect(garbage).toMatch(/line 2 is not a fact \(.*\): it was altered, moved, or written by someone other/);
      const zero = await restartAfter(
        (_d, events) => {
          const all = lines(events);
          write(events, [all[0]!.replace('"seq":1,', '"seq":0,'), ...all.slice(1)]);
        },
        { from: legacy },
      );
      expect(zero).toMatch(/line 1 is not a fact \(sequence 0\)/);
    });
  });
});
