/**
 * `limits.maxRecordedBytesPerAgent`: what an agent and its sub-agents add to the events log is bounded. Before
 * it, one agent could grow the log on disk (which is never rotated) and the host's memory (replay keeps every
 * agent's task and result) without end: 1 MiB of `terminal.write` per call, 1 MiB tasks of sub-agents spawned
 * and finished in a loop, big files written over and over. Each attack writes as much as it can, by every
 * path; the canary is a marker sent only after the first refusal, which must never reach the log or the disk,
 * and the log's growth, which must stay within the limit plus the calls in flight when it was reached.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { LASTING_STATE_BYTES } from '../../machines/agent/recorded-bytes.ts';
import { dirBytes, recountJsonl } from '../support/recorded-recount.ts';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

const LIMIT = 256 * 1024;
/** One call's payload: big, well under the 1 MiB payload bound. */
const CHUNK = 48 * 1024;
/** What a tree may overshoot by: the call that crossed the limit (a write's facts carry ~2 chunks: its diff). */
const SLACK = 4 * CHUNK;

/** New file content shell tracking may store in the review, per run (domains.review.maxShellContentBytes). */
const CONTENT = 2 * 1024 * 1024;

let dir: string;
let rt: TestRuntime;
const sockets = agentSockets(() => rt);
const as = sockets.as;
const start = async () =>
  (rt = await startTestRuntime({
    mode: 'embedded',
    dir,
    // Input to a running program is allowed too (a default of allow still asks for it otherwise).
    policy: { default: 'allow', tools: { terminal_input: { default: 'allow' } } },
    flags: {
      limits: { maxRecordedBytesPerAgent: LIMIT },
      domains: { review: { maxShellContentBytes: CONTENT } },
    },
  }));
const eventsBytes = () => statSync(join(dir, 'data', 'events.jsonl')).size;
const filler = (tag: string, i: number) => `${tag} ${i} `.padEnd(CHUNK, 'x');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skein-recorded-'));
  await start();
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
  rmSync(dir, { recursive: true, force: true });
});
reportAttacks('recorded-budget');

/** Calls `send(i)` as `agentId` until one is refused; returns the refusal and how many calls went through. */
async function untilRefused(
  agentId: string,
  send: (i: number) => Promise<Reply>,
): Promise<{ refused: Reply; n: number }> {
  for (let i = 0; i < 200; i++) {
    const reply = await send(i);
    if (!reply.ok) return { refused: reply, n: i };
  }
  throw new Error(`${agentId} was never refused in 200 calls of ${CHUNK} bytes (limit ${LIMIT})`);
}

/** Spawns `agentId` under the operator and connects as it. */
async function newAgent(agentId: string): Promise<Parameters<typeof call>[0]> {
  ok(await rt.call('agent.spawn', { label: agentId, agentId }));
  return as(agentId);
}

/** `parentId` spawns `childId` (with `task`), which completes with `result` (through the host); the refusal if any. */
async function spawnAndComplete(
  bus: Parameters<typeof call>[0],
  parentId: string,
  childId: string,
  result: unknown,
  task?: string,
): Promise<Reply> {
  const spawned = await call(bus, parentId, 'agent.spawn', {
    label: childId,
    agentId: childId,
    ...(task ? { task } : {}),
  });
  return spawned.ok ? rt.call('agent.complete', { result }, { agentId: childId }) : spawned;
}

/** Waits until the terminal's shell runs a child named `name`. */
async function waitForChild(terminalId: string, name: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const list = ok(await rt.call('terminal.list', {}, { agentId: 'writer' }));
    const pid = (list['terminals'] as Array<{ terminalId: string; pid: number }>).find(
      (t) => t.terminalId === terminalId,
    )?.pid;
    if (pid !== undefined && children(pid).includes(name)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`terminal ${terminalId} never ran ${name}`);
}

function children(pid: number): string[] {
  try {
    return execFileSync('ps', ['-o', 'comm=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n');
  } catch {
    return [];
  }
}

/** Whether `marker` is anywhere in the events log file, or in a file of the workspace it names. */
function leaked(marker: string): boolean {
  return readFileSync(join(dir, 'data', 'events.jsonl'), 'utf8').includes(marker);
}

describe('hostile: an agent grows the events log without bound', { timeout: 120_000 }, () => {
  attack('recorded-bytes', 'terminal.write of big inputs, then every other path, after the refusal', async () => {
    const bus = await newAgent('writer');
    const open = ok(await call(bus, 'writer', 'terminal.open', {}, { timeoutMs: 30_000 }));
    const terminalId = String(open['terminalId']);
    ok(await call(bus, 'writer', 'terminal.exec', { terminalId, command: 'cat > /dev/null', yieldMs: 0 }));
    // Input goes to cat, not to the prompt (where it would be judged as a command line).
    await waitForChild(terminalId, 'cat');
    const before = eventsBytes();
    const { refused, n } = await untilRefused('writer', (i) =>
      call(bus, 'writer', 'terminal.write', { terminalId, data: `${filler('input', i)}\n` }),
    );
    const message = refused.ok ? '' : refused.error.message;
    expect(n, message).toBeGreaterThan(2);
    expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    expect(message).toContain(`limits.maxRecordedBytesPerAgent = ${LIMIT}`);
    expect(message).toContain("Agent 'writer' and its sub-agents");
    expect(rt.host.recordedBytes('writer')).toBeGreaterThanOrEqual(LIMIT);
    expect(eventsBytes() - before).toBeLessThan(LIMIT + SLACK);

    // Canary: after the refusal nothing it sends is recorded, by any path that records.
    const marker = `AFTERLIMIT${process.pid}x${Date.now()}`;
    const attempts: Array<[string, unknown]> = [
      ['terminal.write', { terminalId, data: `${marker}\n` }],
      ['terminal.exec', { terminalId, command: `echo ${marker}` }],
      ['file.write', { path: `${marker}.txt`, content: marker }],
      ['edit.begin', { path: `${marker}-2.txt`, mode: 'write' }],
      ['agent.spawn', { label: marker, task: marker }],
      ['terminal.open', {}],
    ];
    for (const [type, data] of attempts) {
      const reply = await call(bus, 'writer', type, data);
      expect(reply, type).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    }
    expect(leaked(marker), 'marker in the events log').toBe(false);
    expect(existsSync(join(rt.workspace, `${marker}.txt`))).toBe(false);

    // Nor by a command it may still send, in a loop (a signal records a fact each time) or with a big payload.
    const signal = await call(bus, 'writer', 'terminal.signal', { terminalId, signal: 'SIGWINCH' });
    expect(signal).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    const big = await call(bus, 'writer', 'agent.complete', { result: `${marker}${'r'.repeat(8_000)}` });
    expect(big).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    expect(leaked(marker), 'marker in the events log').toBe(false);
    // It may still stop its program, close its terminal and finish with a short result.
    ok(await call(bus, 'writer', 'terminal.close', { terminalId, graceMs: 0 }));
    // (Through the host: the agent's own connection is revoked as it finishes, a race with the reply.)
    ok(await rt.call('agent.complete', { result: 'stopped at the limit' }, { agentId: 'writer' }));
  });

  attack(
    'recorded-bytes',
    'sub-agents with big tasks spawned and finished in a loop spend the parent’s budget',
    async () => {
      const bus = await newAgent('spawner');
      const before = eventsBytes();
      // Each child answers with a big result of its own: charged to its tree, which is the spawner's.
      const { refused, n } = await untilRefused('spawner', (i) =>
        spawnAndComplete(bus, 'spawner', `spawner-c${i}`, filler('result', i), filler('task', i)),
      );
      expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
      expect(n).toBeLessThan(LIMIT / CHUNK);
      expect(eventsBytes() - before).toBeLessThan(LIMIT + SLACK);
      expect(rt.host.recordedBytes('spawner')).toBeGreaterThanOrEqual(LIMIT);
    },
  );

  attack(
    'recorded-bytes',
    'tiny sub-agents spawned and finished in a loop: each costs the memory it keeps',
    async () => {
      // ~1.2 KiB of log each, but ~11.5 KiB of the host's memory for its life: the bound counts the memory.
      const bus = await newAgent('tiny');
      const { refused, n } = await untilRefused('tiny', (i) => spawnAndComplete(bus, 'tiny', `tiny-${i}`, 1));
      expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
      // Canary: more agents alive in the host's memory than the bound's worth.
      expect(n).toBeLessThanOrEqual(Math.ceil(LIMIT / LASTING_STATE_BYTES['agent.spawned']!));
    },
  );

  attack('recorded-bytes', 'text of 3-byte characters is charged by its bytes, not its length', async () => {
    const bus = await newAgent('utf');
    const before = eventsBytes();
    const { refused } = await untilRefused('utf', (i) =>
      call(bus, 'utf', 'file.write', { path: `utf-${i}.txt`, content: `${i}`.padEnd(CHUNK / 3, '界') }),
    );
    expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    expect(eventsBytes() - before).toBeLessThan(LIMIT + SLACK);
  });

  attack('recorded-bytes', 'a child started before the limit is refused once its parent’s tree is over', async () => {
    ok(await rt.call('agent.spawn', { label: 'parent', agentId: 'tree' }));
    const parent = await as('tree');
    ok(await call(parent, 'tree', 'agent.spawn', { label: 'child', agentId: 'tree-c' }));
    const child = await as('tree-c');
    // The child writes files until its tree is full; then the parent is refused as well.
    const { refused } = await untilRefused('tree-c', (i) =>
      call(child, 'tree-c', 'file.write', { path: `tree-c-${i}.txt`, content: filler('file', i) }),
    );
    expect(refused.ok ? '' : refused.error.message).toContain("Agent 'tree-c' and its sub-agents");
    const parentWrite = await call(parent, 'tree', 'file.write', { path: 'tree-parent.txt', content: 'small' });
    expect(parentWrite).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    expect(rt.host.recordedBytes('tree')).toBeGreaterThanOrEqual(rt.host.recordedBytes('tree-c'));
    // A sibling tree and the operator are not touched.
    ok(await rt.call('agent.spawn', { label: 'other', agentId: 'other' }));
    ok(await call(await as('other'), 'other', 'file.write', { path: 'other.txt', content: 'fine' }));
    ok(await rt.call('file.write', { path: 'operator.txt', content: filler('operator', 0) }));
  });

  attack(
    'recorded-bytes',
    'files written while a sibling’s command runs are charged to the writer, not the root',
    async () => {
      // Two children of the root with commands open at once: their changes are recorded for their common
      // ancestor, the root, which is never charged. The command that recorded them pays.
      const sib = await newAgent('sib');
      const sibTerminal = String(ok(await call(sib, 'sib', 'terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
      ok(await call(sib, 'sib', 'terminal.exec', { terminalId: sibTerminal, command: 'sleep 30', yieldMs: 0 }));
      const bus = await newAgent('h2');
      const terminalId = String(ok(await call(bus, 'h2', 'terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
      const { refused, n } = await untilRefused('h2', (i) =>
        call(bus, 'h2', 'terminal.exec', {
          terminalId,
          command: `head -c ${CHUNK} /dev/zero | tr '\\0' q | sed 's/^/${i} /' > h2-${i}.txt`,
        }),
      );
      expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
      expect(n).toBeLessThanOrEqual(LIMIT / CHUNK + 1);
      expect(rt.host.recordedBytes('sib')).toBeLessThan(16 * 1024);
      ok(await call(sib, 'sib', 'terminal.close', { terminalId: sibTerminal, graceMs: 0 }));
      ok(await call(bus, 'h2', 'terminal.close', { terminalId, graceMs: 0 }));
    },
  );

  attack('recorded-bytes', 'shell commands writing big new files: the contents the review keeps count', async () => {
    const bus = await newAgent('shell');
    const open = ok(await call(bus, 'shell', 'terminal.open', {}, { timeoutMs: 30_000 }));
    const terminalId = String(open['terminalId']);
    const blobsBefore = dirBytes(join(dir, 'data', 'blobs'));
    // Each command's fact is small (hashes); what grows is the blob store, one new content per file.
    const { refused, n } = await untilRefused('shell', (i) =>
      call(bus, 'shell', 'terminal.exec', {
        terminalId,
        command: `head -c ${CHUNK} /dev/zero | tr '\\0' 'y' | sed 's/^/${i} /' > shell-${i}.txt`,
      }),
    );
    expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    expect(n).toBeGreaterThan(2);
    expect(n).toBeLessThanOrEqual(LIMIT / CHUNK + 1);
    expect(dirBytes(join(dir, 'data', 'blobs')) - blobsBefore).toBeLessThan(LIMIT + SLACK);
    // Recorded in its own log: no command of another agent was still open (the sibling's ended with its
    // terminal's close in the attack before).
    const owners = new Set<string>();
    await rt.log.scan({}, (f) => {
      const d = f.data as { by?: string; agentId?: string };
      if (f.type === 'action-log.shell.recorded' && d.by === 'shell') owners.add(String(d.agentId));
    });
    expect([...owners]).toEqual(['shell']);
    ok(await call(bus, 'shell', 'terminal.close', { terminalId, graceMs: 0 }));
  });

  attack('recorded-bytes', 'a background job keeps writing: what shell tracking stores is bounded', async () => {
    // Its files change between commands (nobody's) or while commands of others run, one of them held open by
    // the attacker itself (`sleep`): either way nobody is charged for all the versions each refresh stores.
    const bus = await newAgent('bg');
    const hold = String(ok(await call(bus, 'bg', 'terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
    ok(await call(bus, 'bg', 'terminal.exec', { terminalId: hold, command: 'sleep 60', yieldMs: 0 }));
    const terminalId = String(ok(await call(bus, 'bg', 'terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
    const blobsBefore = dirBytes(join(dir, 'data', 'blobs'));
    const job =
      "for r in 1 2 3 4; do for i in $(seq 12); do head -c 60000 /dev/zero | tr '\\0' z | " +
      'sed "s/^/$r $i /" > bg-$i.txt; done; sleep 0.4; done; touch bg-done';
    const script = `(sleep 0.3; ${job}) >/dev/null 2>&1 </dev/null &\n`;
    ok(await call(bus, 'bg', 'file.write', { path: 'bg.sh', content: script }));
    ok(await call(bus, 'bg', 'terminal.exec', { terminalId, command: 'sh bg.sh' }));
    // The operator's commands refresh the workspace while the job runs, each storing what changed (the
    // operator is never charged: the changes its commands record are its own or the root's).
    const mine = String(ok(await rt.call('terminal.open', {}))['terminalId']);
    for (let i = 0; i < 200 && !existsSync(join(rt.workspace, 'bg-done')); i++)
      ok(await rt.call('terminal.exec', { terminalId: mine, command: 'sleep 0.05' }));
    for (let i = 0; i < 3; i++) ok(await rt.call('terminal.exec', { terminalId: mine, command: 'true' }));
    const grown = dirBytes(join(dir, 'data', 'blobs')) - blobsBefore;
    expect(grown, 'blob store growth').toBeLessThanOrEqual(CONTENT + 64 * 1024);
    ok(await rt.call('terminal.close', { terminalId: mine, graceMs: 0 }));
    for (const t of [hold, terminalId]) ok(await call(bus, 'bg', 'terminal.close', { terminalId: t, graceMs: 0 }));
  });

  attack('recorded-bytes', 'a sub-workspace’s first scan stores only within the run’s budget', async () => {
    // 6 MB of new files, more than the whole shell-content budget (2 MiB, partly spent above): the operator's
    // command leaves most of them by hash only. A child given a workspace over them must not store them whole at
    // its first scan.
    const mine = String(ok(await rt.call('terminal.open', {}))['terminalId']);
    ok(await rt.call('terminal.exec', { terminalId: mine, command: 'mkdir -p nest && true' }));
    const gen =
      'for i in $(seq 12); do { echo $i; head -c 500000 /dev/zero | tr ' +
      "'\\0' n | fold -w 100; } > nest/n-$i.txt; done";
    ok(await rt.call('file.write', { path: 'gen.sh', content: `${gen}\n` }));
    ok(await rt.call('terminal.exec', { terminalId: mine, command: 'sh gen.sh' }));
    const blobsBefore = dirBytes(join(dir, 'data', 'blobs'));
    ok(await rt.call('agent.spawn', { label: 'nest', agentId: 'nest', workspace: 'nest' }));
    const bus = await as('nest');
    const terminalId = String(ok(await call(bus, 'nest', 'terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
    ok(await call(bus, 'nest', 'terminal.exec', { terminalId, command: 'true' }));
    expect(dirBytes(join(dir, 'data', 'blobs')) - blobsBefore).toBeLessThan(1_000_000);
    ok(await call(bus, 'nest', 'terminal.close', { terminalId, graceMs: 0 }));
    ok(await rt.call('terminal.close', { terminalId: mine, graceMs: 0 }));
  });

  attack('recorded-bytes', 'small edits of a big file: each whole version the review keeps counts', async () => {
    // The operator's file; each one-line edit stores both versions whole (blobs), with a diff of a line.
    const big = Array.from({ length: 2_000 }, (_, i) => `line ${i} `.padEnd(50, '.')).join('\n');
    ok(await rt.call('file.write', { path: 'huge.txt', content: `MARK0\n${big}\n` }));
    const bus = await newAgent('fe');
    const blobsBefore = dirBytes(join(dir, 'data', 'blobs'));
    const { refused, n } = await untilRefused('fe', (i) =>
      call(bus, 'fe', 'file.edit', {
        path: 'huge.txt',
        edits: [{ oldText: `MARK${i}\n`, newText: `MARK${i + 1}\n` }],
      }),
    );
    expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    // ~100 KB a version: before, each edit was charged its ~3 KB of facts and ~80 went through.
    expect(n).toBeLessThanOrEqual(Math.ceil(LIMIT / (2 * big.length)) + 1);
    expect(dirBytes(join(dir, 'data', 'blobs')) - blobsBefore).toBeLessThan(LIMIT + 4 * big.length);
  });

  attack('recorded-bytes', 'reject and undo in a loop: the contents each keeps count', async () => {
    // A file over shell tracking's size limit (kept by hash only) changed by a command, then rejected and
    // the reject undone: each round stores the file whole, twice, to undo it.
    ok(await rt.call('file.write', { path: 'rj.txt', content: 'one\nmiddle\nthree\n' }));
    const bus = await newAgent('rj');
    ok(await call(bus, 'rj', 'file.edit', { path: 'rj.txt', edits: [{ oldText: 'middle', newText: 'MIDDLE' }] }));
    const terminalId = String(ok(await call(bus, 'rj', 'terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
    const blobsBefore = dirBytes(join(dir, 'data', 'blobs'));
    const { refused, n } = await untilRefused('rj', async (i) => {
      const grow = await call(bus, 'rj', 'terminal.exec', {
        terminalId,
        command:
          `{ cat rj.txt; head -c 3000000 /dev/zero | tr '\\0' r | fold -w 100; echo ${i}; } > rj.new ` +
          '&& cat rj.new > rj.txt',
      });
      if (!grow.ok) return grow;
      const rejected = await call(bus, 'rj', 'review.reject', {});
      return rejected.ok ? call(bus, 'rj', 'review.undo-reject', {}) : rejected;
    });
    expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    // Before, each round was charged ~3 KB of facts for ~6 MB of blobs: 75 rounds, 600 MB.
    expect(n).toBeLessThanOrEqual(1);
    expect(dirBytes(join(dir, 'data', 'blobs')) - blobsBefore).toBeLessThan(16 * 1024 * 1024);
    ok(await call(bus, 'rj', 'terminal.close', { terminalId, graceMs: 0 }));
  });

  attack('recorded-bytes', 'the count is the log’s bytes per tree, and a restart reads it back', async () => {
    const agents = [
      'writer',
      'spawner',
      'tiny',
      'utf',
      'tree',
      'tree-c',
      'other',
      'sib',
      'h2',
      'shell',
      'bg',
      'fe',
      'rj',
      'main',
    ];
    const counted = () => Object.fromEntries(agents.map((id) => [id, rt.host.recordedBytes(id)]));
    expect(counted()).toEqual(recountJsonl(join(dir, 'data', 'events.jsonl'), agents));
    await sockets.closeAll();
    await rt.dispose();
    await start();
    expect(counted()).toEqual(recountJsonl(join(dir, 'data', 'events.jsonl'), agents));
    expect(rt.host.recordedBytes('tree')).toBeGreaterThanOrEqual(LIMIT);
    const child = await as('tree-c');
    const again = await call(child, 'tree-c', 'file.write', { path: 'after-restart.txt', content: 'x' });
    expect(again).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    ok(await call(await as('other'), 'other', 'file.write', { path: 'other-2.txt', content: 'still fine' }));
  });
});
