/**
 * Whose log a shell change goes to when agents' commands overlap in one workspace, live: a real runtime, two
 * sibling agents with their own terminals, real files. A file written while both agents' commands ran could be
 * either's: it goes to their parent's log, never to the sibling that happened to finish first (whose review
 * could then reject the other's work). A file written while one agent's command ran alone stays its own.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNetworkedRuntime, type TestRuntime } from '../../support/runtime.ts';
import { ok } from '../../support/replies.ts';

describe('shell changes of overlapping commands', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startNetworkedRuntime({
      policy: { default: 'allow' },
      flags: { domains: { review: { trackShell: true } } },
    });
  }, 60_000);
  afterAll(async () => rt?.dispose());

  const files = async (agentId: string) =>
    (ok(await rt.call('review.list', { agentId, includeDescendants: false }))['files'] as Array<{ path: string }>)
      .map((f) => f.path.slice(rt.workspace.length + 1))
      .sort();

  it("records a file written while both siblings' commands ran for their parent, and a lone one's for it", async () => {
    for (const id of ['kid1', 'kid2']) ok(await rt.call('agent.spawn', { label: id, agentId: id }));
    const open = async (agentId: string) => String(ok(await rt.call('terminal.open', {}, { agentId }))['terminalId']);
    const t1 = await open('kid1');
    const t2 = await open('kid2');
    const exec = (agentId: string, terminalId: string, command: string, yieldMs?: number) =>
      rt.call('terminal.exec', { terminalId, command, ...(yieldMs === undefined ? {} : { yieldMs }) }, { agentId });
    // Both terminals ready and the workspace watched before the scene.
    ok(await exec('kid1', t1, 'true'));
    ok(await exec('kid2', t2, 'true'));

    // kid1's command is open while kid2's writes b.txt, and ends first (under the old rule it took b.txt); kid2's
    // stays open until kid1's next command has written a.txt. Flag files, not sleeps: the same on a loaded machine.
    const waitFor = (file: string) => `while [ ! -e ${file} ]; do sleep 0.05; done`;
    expect(ok(await exec('kid1', t1, waitFor('b.txt'), 0))['status']).toBe('running');
    expect(ok(await exec('kid2', t2, `echo b > b.txt; ${waitFor('a.txt')}`, 0))['status']).not.toBe('exited');
    expect(ok(await rt.call('terminal.wait', { terminalId: t1 }, { agentId: 'kid1' }))['status']).toBe('exited');
    ok(await exec('kid1', t1, 'echo a > a.txt'));
    expect(ok(await rt.call('terminal.wait', { terminalId: t2 }, { agentId: 'kid2' }))['status']).toBe('exited');
    // Alone: c.txt is kid1's.
    ok(await exec('kid1', t1, 'echo c > c.txt'));

    expect(await files('kid1')).toEqual(['c.txt']);
    expect(await files('kid2')).toEqual([]);
    expect(await files('main')).toEqual(['a.txt', 'b.txt']);
    const all = ok(await rt.call('review.list', { agentId: 'main' }))['files'] as Array<{ path: string }>;
    expect(all.map((f) => f.path.slice(rt.workspace.length + 1)).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);

    // The stored records say why: the command names both agents.
    const sources: string[] = [];
    for await (const f of rt.log.read())
      if (f.type === 'action-log.shell.recorded')
        for (const r of (f.data as { records: Array<{ data: { path: string; source: { command: string } } }> }).records)
          sources.push(`${r.data.path.split('/').pop()}: ${r.data.source.command}`);
    expect(sources.filter((s) => s.startsWith('b.txt'))[0]).toMatch(
      /one of the commands of kid1, kid2 running at once/,
    );
    expect(sources.filter((s) => s.startsWith('c.txt'))).toEqual(['c.txt: echo c > c.txt', 'c.txt: echo c > c.txt']);
  });

  it('records the files of yielded commands on two terminals whose command ids are the same', async () => {
    // Command ids count per terminal: both terminals' second command is c-2. Pending commands were kept by id
    // alone, so kid3's finish took kid4's entry (ending its mark early) and late.txt was never recorded.
    for (const id of ['kid3', 'kid4']) ok(await rt.call('agent.spawn', { label: id, agentId: id }));
    const t3 = String(ok(await rt.call('terminal.open', {}, { agentId: 'kid3' }))['terminalId']);
    const t4 = String(ok(await rt.call('terminal.open', {}, { agentId: 'kid4' }))['terminalId']);
    ok(await rt.call('terminal.exec', { terminalId: t3, command: 'true' }, { agentId: 'kid3' }));
    ok(await rt.call('terminal.exec', { terminalId: t4, command: 'true' }, { agentId: 'kid4' }));
    const a = ok(
      await rt.call('terminal.exec', { terminalId: t3, command: 'sleep 0.3', yieldMs: 0 }, { agentId: 'kid3' }),
    );
    const b = ok(
      await rt.call(
        'terminal.exec',
        { terminalId: t4, command: 'while [ ! -e go ]; do sleep 0.05; done; echo late > late.txt', yieldMs: 0 },
        { agentId: 'kid4' },
      ),
    );
    expect(a['commandId']).toBe(b['commandId']);
    expect(ok(await rt.call('terminal.wait', { terminalId: t3 }, { agentId: 'kid3' }))['status']).toBe('exited');
    // kid4's command goes on only now, after kid3's has ended: late.txt is kid4's alone.
    writeFileSync(join(rt.workspace, 'go'), 'go\n');
    expect(ok(await rt.call('terminal.wait', { terminalId: t4 }, { agentId: 'kid4' }))['status']).toBe('exited');
    await expect.poll(async () => (await files('kid4')).includes('late.txt'), { timeout: 5_000 }).toBe(true);
  });
});
