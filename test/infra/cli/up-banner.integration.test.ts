/**
 * The `skein up` banner (README walk-through): in private-broker mode its `watch: nats sub …` line was refused
 * (Authorization Violation: the broker needs the operator's creds), and embedded mode read
 * `mode embedded, embedded (no broker)`. The watch line now carries `--creds`, and works as printed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCliRuntime, type EmbeddedRun } from '../../support/cli.ts';
import { rawSubscribe } from '../../support/raw-nats.ts';

describe('skein up banner', { timeout: 90_000 }, () => {
  let run: EmbeddedRun | undefined;
  afterEach(async () => {
    await run?.dispose();
    run = undefined;
  });

  it('private broker: the watch line names the operator creds, and a subscriber using them sees facts', async () => {
    run = await startCliRuntime({ mode: 'private', policy: { default: 'allow' } });
    const creds = join(run.data, 'auth', 'operator.creds');
    const [, url, credsPath] = await run.up.waitFor(/watch: nats sub --server (\S+) --creds (\S+) 'skein\.evt\.>'/);
    expect(url).toBe(run.url);
    expect(credsPath).toBe(creds);
    const sub = await rawSubscribe(url!, 'skein.evt.>', readFileSync(credsPath!, 'utf8'));
    try {
      const spawned = await runCli(['call', 'agent.spawn', '{"label":"watched"}', '--data', run.data]);
      expect(spawned.code, spawned.stderr).toBe(0);
      await expect.poll(() => sub.messages.some((m) => m.payload.includes('"watched"'))).toBe(true);
    } finally {
      sub.close();
    }
  });

  it('embedded: says the mode once, and only skein tail to watch', async () => {
    run = await startCliRuntime({ mode: 'embedded', policy: { default: 'allow' } });
    await run.up.waitFor(/watch: skein tail/);
    expect(run.up.stdout()).toMatch(/^skein up: mode embedded \(no broker\): log /);
    expect(run.up.stdout()).not.toContain('nats sub');
  });
});
