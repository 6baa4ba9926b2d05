/**
 * The random-kill fault run, one test file per mode (`random-kill-{embedded,private}.integration.test.ts`,
 * so the two can run at once). SIGKILL of a real `skein up` (`--unhandled-rejections=strict`) at random
 * points of a mixed workload (file.write, streaming edits, terminal exec, spawns with and without a worker),
 * `KILLS` times per mode (embedded, private broker), then one more start. Checks, over every round:
 * - 0 acknowledged commands lost: each ok reply's facts are in the log, and the live digest equals a replay;
 * - disk == log after reconciliation: each file's bytes are those of its last edit.applied / edit.abandoned,
 *   and no temp file of an atomic write is left;
 * - every file the agent changed is in review;
 * - a retried command id gets its original reply (rebuilt from the log), and an in-flight one gets a reply or
 *   `in_doubt`, never `conflict`; a retried terminal.open never opens a second terminal.
 * The kill points come from the file's seed (printed; `FC_SEED=<n>` replays them). `SKEIN_FAULT_KILLS`
 * sets the rounds per mode (default 20, as issue 13 asks). The default was 4 while a private-broker round
 * cost ~7 s, mostly waiting out the 4 s timeouts of requests the dead host had received; the client is now
 * closed after a short grace instead. Measured on 2 shared cores (load ~5): 20 kills per mode take ~150 s
 * (embedded ~73 s, private ~73 s; before: 210 s, private 139 s); 4 kills ~38 s (before: ~47 s). The host
 * runs as shipped (the bundle, when fresh): forcing tsx made each start 2.4-4.3 s at load 11, and the two
 * modes 386 s (150 s with the bundle).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { StoredFact } from '../../schemas/index.ts';
import { connect, type SkeinClient } from '../../infra/client/index.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replay } from '../../infra/kernel/replay.ts';
import { readExportFile } from '../../infra/transport/export-file.ts';
import { call, callAllPages } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { runCli } from '../support/cli.ts';
import { seeded } from '../support/edit-random.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

export const KILLS = Number(process.env['SKEIN_FAULT_KILLS'] ?? 20);
/** After a kill: how long replies already sent may take to arrive before the client is closed. */
const REPLY_GRACE_MS = 300;
const dirs: string[] = [];
let host: HostProcess | undefined;
let client: SkeinClient | undefined;

/** Stops what a failed run left running and removes its directories (each test file's afterAll). */
export async function cleanupRandomKills(): Promise<void> {
  await client?.close().catch(() => undefined);
  await host?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

const sha = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

type Sent = { id: string; type: string; data: unknown; reply?: Reply };

/** Every fact in the runtime's log, exported by `skein replay --export` (either mode; its output lines left out). */
async function readLog(dataDir: string, file: string): Promise<StoredFact[]> {
  const exp = await runCli(['replay', '--export', file, '--data', dataDir]);
  expect(exp.code, exp.stderr).toBe(0);
  const out: StoredFact[] = [];
  for await (const f of readExportFile(file)) out.push(f);
  return out;
}

export async function runMode(mode: 'embedded' | 'private', seed: number): Promise<void> {
  const rand = seeded(seed);
  const dir = mkdtempSync(join(tmpdir(), `skein-fault-kill-${mode}-`));
  dirs.push(dir);
  const dataDir = join(dir, 'data');
  const ws = join(dir, 'ws');
  const sent: Sent[] = [];
  let n = 0;
  for (let round = 0; round <= KILLS; round++) {
    host = await startHost({ dir, mode, dataDir });
    client = await connect({ dataDir, cwd: dir, name: 'fault-kill' });
    if (round === KILLS) break;
    const bus = client.bus;
    const send = (type: string, data: unknown, agentId = 'main') => {
      const s: Sent = { id: `k${round}-${n++}`, type, data };
      sent.push(s);
      return call(bus, agentId, type, data, { id: s.id, timeoutMs: 4_000 }).then(
        (reply) => ((s.reply = reply), reply),
        () => undefined,
      );
    };
    const terminal = await send('terminal.open', {});
    const terminalId = terminal?.ok ? String(terminal['terminalId']) : undefined;
    const killAt = Date.now() + 300 + Math.floor(rand() * 1_500);
    const inFlight: Array<Promise<unknown>> = [];
    while (Date.now() < killAt) {
      const pick = rand();
      const file = `f-${Math.floor(rand() * 6)}.txt`;
      const content = `${round}:${n}:${'x'.repeat(Math.floor(rand() * 3_000))}\n`;
      if (pick < 0.45) inFlight.push(send('file.write', { path: file, content }));
      else if (pick < 0.6) {
        inFlight.push(
          (async () => {
            const begun = await send('edit.begin', { path: `s-${Math.floor(rand() * 3)}.txt`, mode: 'write' });
            if (!begun?.ok) return;
            const editId = String(begun['editId']);
            const body = JSON.stringify({ path: begun['path'] ?? '', content });
            await send('edit.input', { editId, chunk: body.slice(0, body.length >> 1) });
            await send('edit.input', { editId, chunk: body.slice(body.length >> 1) });
            await send('edit.finish', { editId });
          })(),
        );
      } else if (pick < 0.8 && terminalId) inFlight.push(send('terminal.exec', { terminalId, command: `echo ${n}` }));
      else if (pick < 0.92) inFlight.push(send('agent.spawn', { label: `a${n}` }));
      else inFlight.push(send('agent.spawn', { label: `w${n}`, worker: { command: 'sleep', args: ['30'] } }));
      await sleep(Math.floor(rand() * 40));
    }
    host.child.kill('SIGKILL');
    await host.exited;
    // Replies the host sent before it died arrive within a moment; the rest never come. Waiting for their
    // 4 s timeouts cost each private-broker round ~4 s (the broker outlives the host, so a request it
    // delivered stays pending; embedded clients fail at once): close the client instead, which ends them.
    const settled = Promise.allSettled(inFlight);
    await Promise.race([settled, sleep(REPLY_GRACE_MS)]);
    await client.close().catch(() => undefined);
    await settled;
  }

  const bus = client!.bus;
  const status = await call(bus, 'main', 'runtime.status', {}, { timeoutMs: 15_000 });
  expect(status.ok).toBe(true);
  const facts = await readLog(dataDir, join(dir, 'export.jsonl'));
  const acked = sent.filter((s) => s.reply?.ok);
  console.info(`${mode}: ${KILLS} kills, ${sent.length} commands sent, ${acked.length} acknowledged`);

  {
    // 0 acknowledged facts lost: every command that caused facts and was acked has them in the log.
    const caused = new Set(facts.filter((f) => f.causationId).map((f) => f.causationId));
    const writes = acked.filter((s) => s.type === 'file.write' || s.type === 'edit.finish' || s.type === 'agent.spawn');
    expect(writes.filter((s) => !caused.has(s.id)).map((s) => s.id)).toEqual([]);
    const replayed = await replay(
      (async function* () {
        yield* facts;
      })(),
      AGGREGATES,
    );
    expect(replayed.digest).toBe(status.ok ? status['digest'] : undefined);

    // disk == log: each file holds the bytes of its last outcome in the log.
    const last = new Map<string, string | null>();
    for (const f of facts) {
      const d = f.data as { path?: string; resultHash?: string; disk?: string; diskHash?: string | null };
      if (f.type === 'edit.applied' && d.path) last.set(d.path, d.resultHash!);
      if (f.type === 'edit.abandoned' && d.path && (d.disk === 'written' || d.disk === 'changed'))
        last.set(d.path, d.diskHash ?? null);
    }
    for (const [path, hash] of last) {
      const onDisk = existsSync(path) ? sha(readFileSync(path)) : null;
      expect({ path, hash: onDisk }).toEqual({ path, hash });
    }
  }
  expect(readdirSync(ws).filter((name) => name.endsWith('.tmp'))).toEqual([]);

  // Every file the agent changed is in review.
  const review = await callAllPages(bus, 'main', 'review.list', {}, { timeoutMs: 15_000 });
  expect(review.ok).toBe(true);
  const reviewed = new Set(((review.ok ? review['files'] : []) as Array<{ path: string }>).map((f) => f.path));
  const changed = readdirSync(ws).filter((name) => /^[fs]-\d\.txt$/.test(name));
  expect(changed.filter((name) => !reviewed.has(join(ws, name)))).toEqual([]);

  // Retries: an acked write gets its reply again; an unanswered command gets a reply or in_doubt.
  for (const s of sent.filter((x) => x.type === 'file.write' || x.type === 'edit.finish')) {
    const again = await call(bus, 'main', s.type, s.data, { id: s.id, timeoutMs: 15_000 });
    if (s.reply?.ok) {
      expect({ ...again, message: undefined }).toEqual({ ...s.reply, message: undefined });
    } else if (!again.ok && again.error.code === 'conflict') {
      // A conflict only as the command's own outcome (two streamed writes creating one file at once: the later
      // one is refused, never put over the other), given again or rebuilt from the log; never one a retry met
      // in its own first try's write.
      const own = s.reply?.ok === false || again.error.message.includes('rebuilt from the log');
      expect(own, JSON.stringify({ sent: s.type, again })).toBe(true);
    }
  }
  // Nothing the previous hosts ran is left open.
  const terminals = await call(bus, 'main', 'terminal.list', {}, { timeoutMs: 15_000 });
  expect(terminals.ok ? terminals['terminals'] : undefined).toEqual([]);
  // A terminal.open retried after the kills never opens a second terminal for its id: an acked one gets
  // in_doubt naming its (lost) terminal; one whose reply never came gets that, or opens the only one.
  for (const s of sent.filter((x) => x.type === 'terminal.open')) {
    const again = await call(bus, 'main', s.type, s.data, { id: s.id, timeoutMs: 15_000 });
    if (s.reply?.ok) {
      expect(again).toMatchObject({
        ok: false,
        error: { code: 'in_doubt', details: { terminalId: s.reply['terminalId'] } },
      });
    } else if (again.ok) {
      await call(bus, 'main', 'terminal.close', { terminalId: again['terminalId'] }, { timeoutMs: 15_000 });
    } else expect(again.error.code).toBe('in_doubt');
  }
  const openedBy = new Map<string, number>();
  // (A worker's terminal is opened by its spawn, with no terminal.open id.)
  for (const f of await readLog(dataDir, join(dir, 'export-2.jsonl'))) {
    if (f.type !== 'terminal.opened' || !f.causationId) continue;
    openedBy.set(f.causationId, (openedBy.get(f.causationId) ?? 0) + 1);
  }
  expect(openedBy.size).toBeGreaterThan(0);
  expect([...openedBy].filter(([, count]) => count > 1)).toEqual([]);
  const tree = await call(bus, 'main', 'agent.tree', {}, { timeoutMs: 15_000 });
  const workers = ((tree.ok ? tree['agents'] : []) as Array<{ label: string; status: string }>).filter((a) =>
    a.label.startsWith('w'),
  );
  expect(workers.filter((a) => a.status === 'running' || a.status === 'spawning')).toEqual([]);
  expect(host!.alive()).toBe(true);
  await client!.close();
  client = undefined;
  await host!.stop();
  host = undefined;
}
