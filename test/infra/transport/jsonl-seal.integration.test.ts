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

  /** A copy of the stopped runtime's dir, changed by `change(dataDir)`; resolves to start's error or 'started'. */
  async function restartAfter(change: (data: string, events: string) => void): Promise<string> {
    const dir = join(temp.path, `copy-${++copies}`);
    cpSync(original, dir, { recursive: true });
    change(join(dir, 'data'), join(dir, 'data', 'events.jsonl'));
    try {
      const rt = await startTestRuntime({ mode: 'embedded', dir });
      ok(await rt.call('agent.get', {}));
      await rt.stop();
      return 'started';
    } catch (err) {
      return (err as Error).message;
    }
  }

  const lines = (events: string) => readFileSync(events, 'utf8').trim().split('\n');

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

  it('refuses a fact appended by someone else, with or without a copied seal', async () => {
    const forge = (events: string, withMac: boolean) => {
      const last = JSON.parse(lines(events).at(-1)!) as { seq: number; mac: string; fact: { id: string } };
      const forged = {
        seq: last.seq + 1,
        subject: 'skein.evt.main.agent.a',
        fact: { id: 'forged', type: 'agent.completed', at: new Date().toISOString(), agentId: 'main' },
        ...(withMac ? { mac: last.mac } : {}),
      };
      appendFileSync(events, `${JSON.stringify(forged)}\n`);
      return last.seq + 1;
    };
    let seq = 0;
    const plain = await restartAfter((_d, events) => void (seq = forge(events, false)));
    expect(plain).toContain(`(sequence ${seq}) has no seal: it was altered, moved, or written by someone other`);
    expect(plain).toMatch(/^the embedded audit log .*events\.jsonl is not the one this host sealed: line \d+/);
    expect(plain).toMatch(/Restore .* from a backup .*skein replay --from-file .* --export <file>/);
    const copied = await restartAfter((_d, events) => void forge(events, true));
    expect(copied).toContain('does not carry the seal the host wrote');
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

  it('starts after a crash left a torn last line (never acknowledged)', async () => {
    const started = await restartAfter((_d, events) => appendFileSync(events, '{"seq":99,"subject":"skein.ev'));
    expect(started).toBe('started');
  });
});
