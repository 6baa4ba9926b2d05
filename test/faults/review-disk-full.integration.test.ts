/**
 * Review on a full data disk (`skein up --embedded`, its data dir an 8 MiB tmpfs, the workspace elsewhere): a
 * reject or undo-reject whose fact cannot be stored leaves the files as they were, so the disk and the log never
 * disagree. Both wrote the files first: a refused reject had restored a file the log still showed as changed
 * (reject then called it a conflict, accept took content no longer on disk as the base), and a refused
 * undo-reject put a rejected change back on disk where review no longer showed it (durability review, issue 15's
 * session). Skipped, with the reason printed, where a tmpfs cannot be mounted (CI runs as root and mounts it).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FileReview } from '../../schemas/review.ts';
import { call } from '../../infra/transport/client.ts';
import type { SocketBus } from '../../infra/transport/socket-bus.ts';
import { operatorSocket } from '../support/socket.ts';
import { mountTmpfs } from '../support/tmpfs.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

const disk = mountTmpfs(8 * 1024 * 1024);
const skip = typeof disk === 'string' ? disk : undefined;
if (skip) console.warn(`skipping the review disk-full tests: ${skip}`);
const dir = mkdtempSync(join(tmpdir(), 'skein-fault-review-'));
let host: HostProcess | undefined;
let bus: SocketBus | undefined;

afterAll(async () => {
  await bus?.close();
  await host?.stop();
  if (typeof disk !== 'string') disk.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const BASE = 'line1\nbase\nline3\n';
const AGENT = 'line1\nAGENT\nline3\n';

describe.skipIf(skip !== undefined)('review on a full data disk', () => {
  it('a reject or undo-reject the log cannot take changes no file; each works once space returns', async () => {
    if (typeof disk === 'string') return;
    const dataDir = join(disk.path, 'data');
    const file = join(dir, 'ws', 'a.txt');
    host = await startHost({ dir, mode: 'embedded', dataDir });
    bus = await operatorSocket(dataDir);
    const run = (type: string, data: unknown = {}) => call(bus!, 'main', type, data, { timeoutMs: 10_000 });
    const reviewed = async () => {
      const list = await run('review.list');
      expect(list.ok).toBe(true);
      return list.ok ? (list['files'] as FileReview[]).map((f) => f.path) : [];
    };
    /** Fills the disk, then the log's last page with small appends until one is refused. */
    const fillHard = async () => {
      disk.fill(0);
      for (let i = 0; i < 60; i++) {
        const spawned = await run('agent.spawn', { label: `slack-${i}` });
        if (spawned.ok) continue;
        expect(spawned.error.code, spawned.error.message).toBe('unavailable');
        return;
      }
      throw new Error('the log never refused an append on a full disk');
    };
    writeFileSync(file, BASE);
    expect((await run('file.write', { path: 'a.txt', content: AGENT })).ok).toBe(true);

    await fillHard();
    const reject = await run('review.reject');
    expect(reject.ok).toBe(false);
    if (!reject.ok) expect(reject.error.code).toBe('unavailable');
    expect(readFileSync(file, 'utf8')).toBe(AGENT);
    disk.free();
    expect(await reviewed()).toEqual([file]);
    expect((await run('review.reject')).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(BASE);
    expect(await reviewed()).toEqual([]);

    await fillHard();
    const undo = await run('review.undo-reject');
    expect(undo.ok).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(BASE);
    disk.free();
    expect(await reviewed()).toEqual([]);
    expect((await run('review.undo-reject')).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(AGENT);
    expect(await reviewed()).toEqual([file]);
    // No temporary file of a discarded write is left beside the file.
    expect(readFileSync(file, 'utf8')).toBe(AGENT);
    expect(host.alive()).toBe(true);
  }, 120_000);
});
