/**
 * Terminals through the host over real NATS with real PTYs: exec and its
 * facts, output in its own stream, a sub-agent's exec confirmed by its
 * parent, shell side effects reviewable and rejectable, cancel of a subtree
 * killing its processes, worker exit paths, readable tail lines, replay.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { terminalEvents } from '../../../schemas/terminal.ts';
import { factLine } from '../../../infra/cli/fact-line.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replay } from '../../../infra/kernel/replay.ts';
import { SKEIN_BIN } from '../../support/cli.ts';
import { startNetworkedRuntime, type TestRuntime } from '../../support/runtime.ts';
import { ok } from '../../support/replies.ts';

/** Live processes of a session (the shell's pid is the session id). */
function sessionProcesses(sid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[3]) === sid && fields[0] !== 'Z') out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** The ids of the terminals `agentId` has open. */
async function openTerminals(rt: TestRuntime, agentId: string): Promise<string[]> {
  const terminals = ok(await rt.call('terminal.list', {}, { agentId }))['terminals'] as Array<{ terminalId: string }>;
  return terminals.map((t) => t.terminalId);
}

describe('terminals through the host (networked)', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startNetworkedRuntime({
      policy: { default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^make\\b' }] } } },
    });
    writeFileSync(join(rt.workspace, 'base.txt'), 'keep me\n');
  });
  afterAll(async () => rt?.dispose());

  it('runs a command and records its facts; output goes to the output stream', async () => {
    const { terminalId } = ok(await rt.call('terminal.open', {}));
    const r = ok(await rt.call('terminal.exec', { terminalId, command: 'echo hello-skein; (exit 3)' }));
    expect(r).toMatchObject({ status: 'exited', exitCode: 3, truncated: false });
    expect(r['output']).toContain('hello-skein');
    const types: string[] = [];
    for await (const f of rt.log.read()) if (f.type.startsWith('terminal.')) types.push(f.type);
    expect(types).toEqual(
      expect.arrayContaining(['terminal.opened', 'terminal.command.started', 'terminal.command.finished']),
    );
    let text = '';
    for await (const f of rt.log.read({ stream: 'output', subject: `skein.out.main.${terminalId}` }))
      text += (f.data as { data: string }).data;
    expect(text).toContain('hello-skein');
    ok(await rt.call('terminal.close', { terminalId }));
  });

  it("asks before a sub-agent's confirmed command; the parent allows it and it runs", async () => {
    ok(await rt.call('agent.spawn', { label: 'builder', agentId: 'builder' }));
    const { terminalId } = ok(await rt.call('terminal.open', {}, { agentId: 'builder' }));
    const exec = rt.call(
      'terminal.exec',
      { terminalId, command: 'make --version >/dev/null 2>&1; echo ran' },
      { agentId: 'builder' },
    );
    let requestId = '';
    await expect
      .poll(
        async () => {
          const p = ok(await rt.call('permission.pending', {}));
          requestId = (p['requests'] as Array<{ requestId: string }>)[0]?.requestId ?? '';
          return requestId;
        },
        { timeout: 10_000 },
      )
      .not.toBe('');
    ok(await rt.call('permission.decide', { requestId, decision: 'allow_once' }));
    expect(ok(await exec)).toMatchObject({ status: 'exited', exitCode: 0, output: expect.stringContaining('ran') });
  });

  it("records a command's file changes in the action log, tagged with the command, and rejects them", async () => {
    const { terminalId } = ok(await rt.call('terminal.open', {}, { agentId: 'builder' }));
    ok(
      await rt.call(
        'terminal.exec',
        { terminalId, command: 'echo made > made.txt && rm base.txt' },
        { agentId: 'builder' },
      ),
    );
    const list = ok(await rt.call('review.list', {}, { agentId: 'builder' }));
    const files = (list['files'] as Array<{ path: string; status: string }>).map((f) => [
      f.path.replace(`${rt.workspace}/`, ''),
      f.status,
    ]);
    expect(files).toEqual([
      ['base.txt', 'deleted'],
      ['made.txt', 'created'],
    ]);
    // Both files' records (builder's log and main's) in one append: no separate record on its own.
    const stored: Array<{ type: string; data: any }> = [];
    for await (const f of rt.log.read()) if (f.type.startsWith('action-log.')) stored.push(f);
    expect(stored.map((f) => [f.type, f.data.files, f.data.records.length])).toEqual([
      ['action-log.shell.recorded', 2, 4],
    ]);
    for (const r of stored[0]!.data.records)
      expect(r.data.source).toMatchObject({
        kind: 'shell',
        command: 'echo made > made.txt && rm base.txt',
        terminalId,
      });
    ok(await rt.call('review.reject', {}));
    expect(readFileSync(join(rt.workspace, 'base.txt'), 'utf8')).toBe('keep me\n');
    expect(existsSync(join(rt.workspace, 'made.txt'))).toBe(false);
  });

  it("cancels a middle agent: its subtree's processes are gone, a sibling's terminal still works", async () => {
    ok(await rt.call('agent.spawn', { label: 'mid', agentId: 'mid' }));
    ok(await rt.call('agent.spawn', { label: 'leaf', agentId: 'leaf' }, { agentId: 'mid' }));
    const leafTerm = ok(await rt.call('terminal.open', {}, { agentId: 'leaf' }));
    const running = ok(
      await rt.call(
        'terminal.exec',
        { terminalId: leafTerm['terminalId'], command: 'sleep 300', yieldMs: 200 },
        { agentId: 'leaf' },
      ),
    );
    expect(running['status']).toBe('running');
    const shellPid = leafTerm['pid'] as number;
    expect(sessionProcesses(shellPid).length).toBeGreaterThanOrEqual(2);
    const sibling = ok(await rt.call('terminal.open', {}, { agentId: 'builder' }));

    const cancelled = ok(await rt.call('agent.cancel', { agentId: 'mid' }));
    expect(cancelled['cancelled']).toEqual(['leaf', 'mid']);
    await expect.poll(() => sessionProcesses(shellPid).length, { timeout: 10_000 }).toBe(0);
    expect(
      ok(
        await rt.call(
          'terminal.exec',
          { terminalId: sibling['terminalId'], command: 'echo alive' },
          { agentId: 'builder' },
        ),
      )['output'],
    ).toContain('alive');
    expect(
      await rt.call('terminal.exec', { terminalId: leafTerm['terminalId'], command: 'true' }, { agentId: 'leaf' }),
    ).toMatchObject({ ok: false });
  });

  it('fails an agent whose worker exits without completing, with its exit code', async () => {
    ok(
      await rt.call('agent.spawn', {
        label: 'crashy',
        agentId: 'crashy',
        worker: { command: 'sh', args: ['-c', 'echo starting; exit 7'] },
      }),
    );
    const waited = ok(await rt.call('agent.wait', { agentId: 'crashy', timeoutMs: 15_000 }));
    expect(waited).toMatchObject({ status: 'failed', done: true, error: expect.stringMatching(/exited with code 7/) });
  });

  it('completes an agent whose worker reports through skein call with the environment it was given', async () => {
    const script =
      `node ${SKEIN_BIN} call agent.complete '{"result":{"task":"'"$SKEIN_TASK"'"}}' ` +
      `--agent "$SKEIN_AGENT_ID" --nats "$SKEIN_NATS_URL"`;
    ok(
      await rt.call('agent.spawn', {
        label: 'good',
        agentId: 'good',
        task: 'count',
        worker: { command: 'sh', args: ['-c', script] },
      }),
    );
    const waited = ok(await rt.call('agent.wait', { agentId: 'good', timeoutMs: 20_000 }));
    expect(waited).toMatchObject({ status: 'completed', result: { task: 'count' } });
  });

  it('closes a worker lingering after its agent completed once the grace is over; agent stays completed', async () => {
    // The worker completes its agent, then tries to keep running past the grace (2 s) and write a canary. Its
    // sleep carries a tag to be found by: gone once the terminal closed, however slow the close.
    const canary = join(rt.workspace, 'linger-canary.txt');
    const tag = `${Math.floor(Math.random() * 1e6)}`;
    const script =
      `node ${SKEIN_BIN} call agent.complete '{"result":"done"}' --agent "$SKEIN_AGENT_ID" --nats "$SKEIN_NATS_URL"; ` +
      `sleep 30.${tag}; echo LINGER-CANARY > ${canary}`;
    ok(
      await rt.call('agent.spawn', {
        label: 'lingerer',
        agentId: 'lingerer',
        worker: { command: 'sh', args: ['-c', script] },
      }),
    );
    const waited = ok(await rt.call('agent.wait', { agentId: 'lingerer', timeoutMs: 20_000 }));
    // A command of another worker's terminal ending (command ids count per terminal) must not fail it.
    expect(waited, JSON.stringify(waited)).toMatchObject({ status: 'completed', done: true });
    const terminalId = rt.agents.snapshot('lingerer')?.context.workerTerminalId;
    expect(terminalId).toMatch(/^t/);
    // Still open right after completing (the grace), closed by the agent's actor once it is over.
    const open = () => openTerminals(rt, 'lingerer');
    expect(await open()).toContain(terminalId);
    await expect.poll(open, { timeout: 6_000, interval: 200 }).not.toContain(terminalId);
    const sleeping = () => {
      try {
        return execFileSync('pgrep', ['-f', `sleep 30.${tag}`], { encoding: 'utf8' }).trim();
      } catch {
        return ''; // none
      }
    };
    await expect.poll(sleeping, { timeout: 5_000 }).toBe('');
    expect(existsSync(canary)).toBe(false);
    // Closing the worker's terminal ended its command: the agent stays completed.
    expect(ok(await rt.call('agent.get', {}, { agentId: 'lingerer' }))).toMatchObject({ status: 'completed' });
    const snap = rt.agents.snapshot('lingerer')!;
    const replayed = (await replay(rt.log.read(), AGGREGATES)).fold.states()['skein.evt.main.agent.lingerer'];
    expect({ value: snap.value, context: snap.context }).toEqual({
      value: replayed?.value,
      context: replayed?.context,
    });
  });

  it('gives every terminal fact a readable tail line that never dumps output', async () => {
    const described = new Set<string>(terminalEvents.filter((e) => e.describe).map((e) => e.type));
    for await (const f of rt.log.read()) {
      if (!f.type.startsWith('terminal.')) continue;
      expect(described.has(f.type)).toBe(true);
      const line = factLine(f);
      expect(line.length).toBeLessThan(300);
      expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} #\d+ \S+ terminal\./);
    }
    for await (const f of rt.log.read({ stream: 'output' })) expect(factLine(f).length).toBeLessThan(200);
  });

  describe('bad input over the wire: a clear error naming the value, no PTY leaked', () => {
    let mine: string;
    let closed: string;
    beforeAll(async () => {
      mine = ok(await rt.call('terminal.open', {}, { agentId: 'builder' }))['terminalId'];
      closed = ok(await rt.call('terminal.open', {}, { agentId: 'builder' }))['terminalId'];
      ok(await rt.call('terminal.close', { terminalId: closed }, { agentId: 'builder' }));
    });
    const cases: Array<[string, string, () => Record<string, unknown>, RegExp]> = [
      ['unknown terminal id', 'terminal.exec', () => ({ terminalId: 't-unknown', command: 'true' }), /t-unknown/],
      ['exec on a closed terminal', 'terminal.exec', () => ({ terminalId: closed, command: 'true' }), /closed/],
      ['zero cols', 'terminal.open', () => ({ cols: 0 }), /cols/],
      ['negative rows', 'terminal.open', () => ({ rows: -3 }), /rows/],
      ['huge cols', 'terminal.open', () => ({ cols: 100_000 }), /cols/],
      ['a cwd that does not exist', 'terminal.open', () => ({ cwd: '/no/such/dir' }), /\/no\/such\/dir/],
      ['a cwd that is a file', 'terminal.open', () => ({ cwd: 'base.txt' }), /not a directory/],
      ['a cwd outside the workspace', 'terminal.open', () => ({ cwd: '/etc' }), /outside the agent's workspace/],
      ['env with a non-string value', 'terminal.open', () => ({ env: { A: 1 } }), /env/],
      ['a shell that is not found', 'terminal.open', () => ({ shell: 'no-such-shell' }), /no-such-shell/],
      ['write of non-string data', 'terminal.write', () => ({ terminalId: mine, data: 42 }), /data/],
      ['a signal that does not exist', 'terminal.signal', () => ({ terminalId: mine, signal: 'SIGNOPE' }), /SIGNOPE/],
      [
        'a timeout beyond the maximum',
        'terminal.exec',
        () => ({ terminalId: mine, command: 'true', timeoutMs: 10 * 3600_000 }),
        /timeout/i,
      ],
    ];
    it.each(cases)('%s', async (_name, type, data, message) => {
      const before = (ok(await rt.call('terminal.list', {}))['terminals'] as unknown[]).length;
      const reply = await rt.call(type, data(), { agentId: 'builder' });
      expect(reply.ok).toBe(false);
      if (!reply.ok) expect(reply.error.message).toMatch(message);
      expect((ok(await rt.call('terminal.list', {}))['terminals'] as unknown[]).length).toBe(before);
    });
    it('a terminal owned by another agent', async () => {
      const reply = await rt.call('terminal.exec', { terminalId: mine, command: 'true' }, { agentId: 'main' });
      expect(reply).toMatchObject({ ok: false });
      if (!reply.ok) expect(reply.error.message).toMatch(new RegExp(mine));
    });
  });

  it('replays everything to the live digest', async () => {
    // Background facts may still come (a worker's terminal closed after its grace period): compare at
    // the sequence the live digest was taken at.
    await expect
      .poll(
        async () => {
          const status = ok(await rt.call('runtime.status'));
          const replayed = await replay(rt.log.read({ untilSeq: status['lastSeq'] }), AGGREGATES);
          return replayed.digest === status['digest'];
        },
        { timeout: 10_000 },
      )
      .toBe(true);
  });
});
