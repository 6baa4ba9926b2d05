/**
 * A full disk under a real `skein up --embedded` process (`--unhandled-rejections=strict`) whose data dir
 * is an 8 MiB tmpfs: writes are refused with a retryable `unavailable` naming the data dir, the host does
 * not crash, the log is not corrupted (a restart starts and replays to the live digest), files changed
 * while the log was full reach review once space returns, and the runtime recovers by itself. Skipped,
 * with the reason printed, where a tmpfs cannot be mounted (CI runs as root and mounts it).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { FileReview } from '../../schemas/review.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replay } from '../../infra/kernel/replay.ts';
import { call, callAllPages } from '../../infra/transport/client.ts';
import { readJsonlFile } from '../../infra/transport/jsonl-log.ts';
import type { SocketBus } from '../../infra/transport/socket-bus.ts';
import { operatorSocket } from '../support/socket.ts';
import { mountTmpfs } from '../support/tmpfs.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

const disk = mountTmpfs(8 * 1024 * 1024);
const skip = typeof disk === 'string' ? disk : undefined;
if (skip) console.warn(`skipping the disk-full fault tests: ${skip}`);
const dir = mkdtempSync(join(tmpdir(), 'skein-fault-disk-'));
let host: HostProcess | undefined;
let bus: SocketBus | undefined;

afterAll(async () => {
  await bus?.close();
  await host?.stop();
  if (typeof disk !== 'string') disk.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip !== undefined)('disk full, embedded log on an 8 MiB tmpfs', () => {
  it('refuses writes as unavailable, never crashes or corrupts, and recovers when space returns', async () => {
    if (typeof disk === 'string') return;
    const dataDir = join(disk.path, 'data');
    host = await startHost({ dir, mode: 'embedded', dataDir });
    bus = await operatorSocket(dataDir);
    const write = (path: string, content: string) =>
      call(bus!, 'main', 'file.write', { path, content }, { timeoutMs: 10_000 });
    for (let i = 0; i < 5; i++) expect((await write(`ok-${i}.txt`, `ok ${i}\n`)).ok).toBe(true);

    disk.fill(2_000);
    const refused: string[] = [];
    for (let i = 0; i < 6; i++) {
      const reply = await write(`full-${i}.txt`, `${'data '.repeat(2_000)}${i}\n`);
      expect(host.alive(), host.output().slice(-3000)).toBe(true);
      if (!reply.ok) {
        expect(reply.error.code, reply.error.message).toBe('unavailable');
        expect(reply.error.message).toContain(dataDir);
        // The reply says what the disk holds: nothing written (retry it), or written and not yet recorded.
        // A blob store too full for the new bytes failed after the write, saying nothing was acknowledged.
        const written = reply.error.message.includes(`full-${i}.txt was written, but the edit could not be recorded`);
        expect(existsSync(join(dir, 'ws', `full-${i}.txt`)), reply.error.message).toBe(written);
        expect(reply.error.retryable).toBe(!written);
        refused.push(`full-${i}.txt`);
      }
    }
    expect(refused.length).toBeGreaterThan(0);
    const onDisk = () => refused.filter((p) => existsSync(join(dir, 'ws', p)));
    // Pings need no append: the host still answers while the disk is full.
    expect((await call(bus, 'main', 'runtime.ping', {}, { timeoutMs: 5_000 })).ok).toBe(true);

    disk.free();
    // Recovers by itself: the next write succeeds, and the refused writes' files reach review.
    let recovered = false;
    for (let i = 0; i < 40 && !recovered; i++) {
      recovered = (await write('after.txt', 'after\n')).ok;
      if (!recovered) await sleep(250);
    }
    expect(recovered).toBe(true);
    let reviewed: string[] = [];
    for (let i = 0; i < 60; i++) {
      const review = await callAllPages(bus, 'main', 'review.list', {}, { timeoutMs: 10_000 });
      expect(review.ok).toBe(true);
      if (!review.ok) return;
      reviewed = (review['files'] as FileReview[]).map((f) => f.path.split('/').at(-1)!);
      if (onDisk().every((p) => reviewed.includes(p))) break;
      await sleep(500);
    }
    // A refused write either left nothing on disk, or its file is in review (so it can be rejected).
    console.log(`disk full: refused ${refused.length}, of which on disk ${onDisk().length}; reviewed ${reviewed}`);
    for (const path of onDisk()) expect(reviewed).toContain(path);
    const messages = host.logLines().map((l) => String(l.msg));
    expect(messages.filter((m) => m.startsWith('event log write failed')).length).toBeGreaterThanOrEqual(1);
    expect(messages).toContain('event log writable again');

    // No corruption: a restart starts, and its state equals a replay of the file.
    await bus.close();
    await host.stop();
    host = await startHost({ dir, mode: 'embedded', dataDir });
    bus = await operatorSocket(dataDir);
    const status = await call(bus, 'main', 'runtime.status', {}, { timeoutMs: 10_000 });
    expect(status.ok).toBe(true);
    const replayed = await replay(readJsonlFile(join(dataDir, 'events.jsonl')), AGGREGATES);
    expect(replayed.digest).toBe(status.ok ? status['digest'] : undefined);
    expect(
      host
        .logLines()
        .map((l) => String(l.msg))
        .filter((m) => m.includes('damaged')),
    ).toEqual([]);
  }, 120_000);
});
