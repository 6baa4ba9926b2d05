/**
 * The private broker's store on a disk something else fills (`skein up --private`, its data dir a 40 MiB tmpfs
 * filled by another file): nats-server 2.9 stops answering JetStream, and everything else on its connections,
 * and went on not answering after the space came back, so every command got no reply until someone restarted
 * it by hand (durability review, issue 15's session). The runtime now sees it, says so in its log, and restarts
 * its broker once the disk has room; commands are answered again, and no acknowledged fact is lost: the live
 * digest equals a replay of the log. Skipped, with the reason printed, where a tmpfs cannot be mounted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SkeinClient } from '../../infra/client/index.ts';
import { call } from '../../infra/transport/client.ts';
import { runCli } from '../support/cli.ts';
import { mountTmpfs } from '../support/tmpfs.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

const disk = mountTmpfs(40 * 1024 * 1024);
const skip = typeof disk === 'string' ? disk : undefined;
if (skip) console.warn(`skipping the private broker full-disk test: ${skip}`);
const dir = mkdtempSync(join(tmpdir(), 'skein-fault-pbdisk-'));
let host: HostProcess | undefined;
let client: SkeinClient | undefined;

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await host?.stop();
  if (typeof disk !== 'string') disk.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip !== undefined)('the private broker when its disk fills', () => {
  it('is restarted once the disk has room again; commands are answered and nothing acked is lost', async () => {
    if (typeof disk === 'string') return;
    const dataDir = join(disk.path, 'data');
    host = await startHost({ dir, mode: 'private', dataDir });
    client = await connect({ dataDir, cwd: dir, name: 'fault-client' });
    const spawn = (label: string, timeoutMs = 8_000) =>
      call(client!.bus, 'main', 'agent.spawn', { label }, { timeoutMs }).then(
        (r) => r.ok,
        () => false,
      );
    const logged = (text: string) => host!.logLines().some((l) => String(l.msg).includes(text));
    expect(await spawn('before', 30_000)).toBe(true);

    disk.fill(0);
    // Appends go on until the store itself hits the full disk; then JetStream is found stuck.
    for (let i = 0; i < 30 && !logged('stopped answering'); i++) await spawn(`full-${i}`, 3_000);
    expect(logged('stopped answering'), host.output().slice(-3000)).toBe(true);
    expect(host.alive()).toBe(true);

    disk.free();
    let recovered = false;
    for (let i = 0; i < 40 && !recovered; i++) {
      recovered = await spawn(`after-${i}`);
      if (!recovered) await sleep(500);
    }
    expect(recovered, host.output().slice(-3000)).toBe(true);
    expect(logged('restarting the private broker')).toBe(true);
    expect(logged('answers again')).toBe(true);

    // Nothing acknowledged was lost or contradicted: the live state is a replay of the log.
    const status = await call(client.bus, 'main', 'runtime.status', {}, { timeoutMs: 10_000 });
    expect(status.ok).toBe(true);
    const replayed = await runCli(['replay', '--digest', '--data', dataDir], { cwd: dir });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout.trim()).toContain(status.ok ? String(status['digest']) : 'no digest');
  }, 180_000);
});
