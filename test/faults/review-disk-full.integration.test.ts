/**
 * Review on a full data disk (`skein up --embedded`, its data dir an 8 MiB tmpfs, the workspace elsewhere): a
 * reject or undo-reject whose fact cannot be stored leaves the files as they were, so the disk and the log never
 * disagree. Both wrote the files first: a refused reject had restored a file the log still showed as changed
 * (reject then called it a conflict, accept took content no longer on disk as the base), and a refused
 * undo-reject put a rejected change back on disk where review no longer showed it (durability review, issue 15's
 * session). Skipped, with the reason printed, where a tmpfs cannot be mounted (CI runs as root and mounts it).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
    // Ten files with long names: the reject's fact is then bigger than a page, so it cannot fit in the room
    // a refused append of the filler leaves on the log's last page (a one-file reject sometimes did).
    const names = Array.from({ length: 10 }, (_, i) => `${'long-name-'.repeat(8)}${i}.txt`);
    const files = names.map((n) => join(dir, 'ws', n));
    const file = files[0]!;
    const onDisk = () => files.map((f) => readFileSync(f, 'utf8'));
    const all = (content: string) => files.map(() => content);
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
    for (const [i, name] of names.entries()) {
      writeFileSync(files[i]!, BASE);
      expect((await run('file.write', { path: name, content: AGENT })).ok).toBe(true);
    }

    await fillHard();
    const reject = await run('review.reject');
    expect(reject.ok).toBe(false);
    if (!reject.ok) expect(reject.error.code).toBe('unavailable');
    expect(onDisk()).toEqual(all(AGENT));
    disk.free();
    expect(await reviewed()).toEqual([...files].sort());
    expect((await run('review.reject')).ok).toBe(true);
    expect(onDisk()).toEqual(all(BASE));
    expect(await reviewed()).toEqual([]);

    await fillHard();
    const undo = await run('review.undo-reject');
    expect(undo.ok).toBe(false);
    expect(onDisk()).toEqual(all(BASE));
    disk.free();
    expect(await reviewed()).toEqual([]);
    expect((await run('review.undo-reject')).ok).toBe(true);
    expect(onDisk()).toEqual(all(AGENT));
    expect(await reviewed()).toEqual([...files].sort());
    // No temporary file of a discarded write is left beside the files.
    expect(readdirSync(dirname(file)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(host.alive()).toBe(true);
  }, 120_000);
});
